// multiply's file checks and 1-D .npy handling, on rank 0 (the caller agrees the outcome with
// checked_on_root, agree.hpp): the output's destination before any work, the number of
// dimensions an .npy header declares, and the output of a 1-D or 0-d result (write_npy writes
// the n x 1 matrix; its header is rewritten in place to shape (n,) or () at the same length, so
// the data does not move, and only then renamed onto the output).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "shardmm/error.hpp"
#include "shardmm/io.hpp"
#include "shardmm/types.hpp"

namespace shardmm::cli::files {

/// Throws, in the user's terms, when `out` cannot take the result: its directory is missing,
/// not a directory or not writable; it is a directory or not a regular file; or it is one of
/// `inputs` (same device and inode: through a hard or symbolic link too).
inline void check_destination(const std::string& out, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  const std::string said = "output '" + out + "': ";
  if (out.empty()) throw InvalidArgument("output: the path is empty");
  const fs::path path(out);
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw IoError(said + "is a directory; name a file, e.g. '" + (path / "C.npy").string() + "'");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const fs::file_status st = fs::status(dir, ec);
  if (!fs::exists(st)) throw IoError(said + "directory '" + dir.string() + "' does not exist");
  if (!fs::is_directory(st)) throw IoError(said + "'" + dir.string() + "' is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw IoError(said + "directory '" + dir.string() + "' is not writable");
  struct stat o {};
  if (::stat(out.c_str(), &o) != 0) return;  // a new file: not an input
  if (!S_ISREG(o.st_mode)) throw IoError(said + "exists and is not a regular file");
  for (const fs::path in : inputs) {
    struct stat i {};
    if (!in.empty() && ::stat(in.c_str(), &i) == 0 && i.st_dev == o.st_dev && i.st_ino == o.st_ino)
      throw InvalidArgument(said + "is also an input ('" + in.string() + "'); choose another path");
  }
}

/// The first `bytes` bytes of `path` (fewer when it is shorter).
inline std::string file_start(const std::string& path, std::size_t bytes) {
  std::ifstream f(path, std::ios::binary);
  std::string s(bytes, '\0');
  f.read(s.data(), static_cast<std::streamsize>(bytes));
  s.resize(static_cast<std::size_t>(f.gcount()));
  return s;
}

/// The number of dimensions (0, 1 or 2) of the shape tuple in the .npy header of `path`,
/// whose header read_npy_header already accepted; 2 when it cannot tell.
inline int npy_ndims(const std::string& path) {
  const std::string head =
      file_start(path, static_cast<std::size_t>(npy_header_size(file_start(path, 12))));
  const std::size_t key = head.find("shape");
  const std::size_t open = head.find('(', key), close = head.find(')', open);
  if (key == std::string::npos || open == std::string::npos || close == std::string::npos) return 2;
  int dims = 0;
  bool in_item = false;
  for (std::size_t i = open + 1; i < close; ++i) {
    const char c = head[i];
    if (c == ',') in_item = false;
    else if (c != ' ' && !in_item) in_item = true, ++dims;
  }
  return dims;
}

/// The numpy shape of a `rows` x 1 result with `ndims` dimensions: "(rows,)" or "()".
inline std::string vector_shape(index_t rows, int ndims) {
  return ndims == 0 ? "()" : "(" + std::to_string(rows) + ",)";
}

/// Rewrites the header of `tmp` (a rows x 1 matrix from write_npy) to numpy shape `shape` at the
/// same length and renames it onto `out`; removes `tmp` and throws IoError on failure.
inline void publish_vector(const std::string& tmp, const std::string& out, index_t rows,
                           const std::string& shape) {
  std::error_code ec;
  try {
    std::string head =
        file_start(tmp, static_cast<std::size_t>(npy_header_size(file_start(tmp, 12))));
    const std::string old = "(" + std::to_string(rows) + ", 1)";
    const std::size_t at = head.find(old);
    if (at == std::string::npos || head.empty() || head.back() != '\n')
      throw IoError("'" + tmp + "': no shape " + old + " in the header written");
    head.replace(at, old.size(), shape);
    head.insert(head.size() - 1, old.size() - shape.size(), ' ');  // padding keeps the length
    std::fstream f(tmp, std::ios::in | std::ios::out | std::ios::binary);
    f.write(head.data(), static_cast<std::streamsize>(head.size()));
    f.close();
    if (!f) throw IoError("'" + tmp + "': rewriting the header failed");
    std::filesystem::rename(tmp, out, ec);
    if (ec) throw IoError("renaming '" + tmp + "' onto '" + out + "' failed: " + ec.message());
  } catch (...) {
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

}  // namespace shardmm::cli::files
