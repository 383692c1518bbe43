// Collective .npy / raw matrix files. Rank 0 reads and checks the header and broadcasts it;
// then every rank moves its own tile between the file and its memory (io::transfer): reads
// fill every replica, writes come from the primary replica only. Writes go to a temporary
// file next to the target that rank 0 renames onto the target once every rank succeeded.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>

#include "comm/agree.hpp"
#include "comm/collectives.hpp"
#include "comm/mpi_check.hpp"
#include "comm/wait.hpp"
#include "core/fault.hpp"
#include "io/file_transfer.hpp"
#include "shardmm/error.hpp"
#include "shardmm/io.hpp"
#include "trace/call.hpp"

namespace shardmm {
namespace {

namespace fs = std::filesystem;
using io::Direction;

// Rank 0's part of read_npy_header: parses the header and checks the data is all there.
NpyHeader read_header_here(const std::string& path) {
  std::error_code ec;
  const auto size = static_cast<std::int64_t>(fs::file_size(path, ec));
  if (ec) throw IoError(ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open the file for reading");
  std::string start;
  auto read_up_to = [&](std::int64_t n) {  // file bytes [0, min(n, size))
    const auto want = std::min(n, size) - static_cast<std::int64_t>(start.size());
    if (want <= 0) return;
    std::string more(static_cast<std::size_t>(want), '\0');
    in.read(more.data(), want);
    start += more.substr(0, static_cast<std::size_t>(in.gcount()));
  };
  read_up_to(12);                      // the longest preamble (versions 2 and 3)
  read_up_to(npy_header_size(start));  // the whole header, or what the file has of it
  const NpyHeader h = parse_npy_header(start);
  const std::int64_t need = h.rows * h.cols * static_cast<std::int64_t>(dtype_size(h.dtype));
  if (size - h.data_offset < need)
    throw IoError("truncated: expected " + std::to_string(need) + " bytes of data, file has " +
                  std::to_string(std::max<std::int64_t>(0, size - h.data_offset)) + " (header " +
                  std::to_string(h.data_offset) + " bytes, file size " + std::to_string(size) +
                  ")");
  return h;
}

// Coordinate 0 on every unreduced axis: the cells that hold the values (as in fill()).
bool holds_value(const Layout& L, const std::vector<int>& coords) {
  for (int a : L.unreduced_axes())
    if (coords[a] != 0) return false;
  return true;
}

// Calls f(i, j) over [0, lr) x [0, lc) in 64 x 64 blocks, so a transpose between the
// row-major file order and column-major storage stays in cache.
template <class F>
void for_each_blocked(index_t lr, index_t lc, F f) {
  constexpr index_t kB = 64;
  for (index_t j0 = 0; j0 < lc; j0 += kB)
    for (index_t i0 = 0; i0 < lr; i0 += kB)
      for (index_t j = j0; j < std::min(j0 + kB, lc); ++j)
        for (index_t i = i0; i < std::min(i0 + kB, lr); ++i) f(i, j);
}

// Packed tile of `M` in file order: column-major (Fortran) or row-major (C).
template <Scalar T>
std::vector<T> pack_tile(const DistMatrix<T>& M, bool fortran) {
  const index_t lr = M.local_rows(), lc = M.local_cols();
  std::vector<T> out(static_cast<std::size_t>(lr * lc));
  for_each_blocked(lr, lc, [&](index_t i, index_t j) {
    out[static_cast<std::size_t>(fortran ? i + j * lr : i * lc + j)] = M.local(i, j);
  });
  return out;
}

template <Scalar T>
void unpack_tile(const T* packed, DistMatrix<T>& M, bool fortran) {
  const index_t lr = M.local_rows(), lc = M.local_cols();
  for_each_blocked(lr, lc, [&](index_t i, index_t j) {
    M.local(i, j) = packed[static_cast<std::size_t>(fortran ? i + j * lr : i * lc + j)];
  });
}

// The packed file-order tile is M's storage itself: Fortran order without padding.
template <Scalar T>
bool tile_is_packed(const DistMatrix<T>& M, bool fortran) {
  return fortran && (M.ld() == M.local_rows() || M.local_rows() * M.local_cols() == 0);
}

// Collective: reads dst's tile from the file whose element 0 is at byte `data_offset`.
template <Scalar T>
void read_tile(const std::string& path, std::int64_t data_offset, bool fortran,
               DistMatrix<T>& dst) {
  const MPI_Comm comm = dst.mesh().comm();
  const auto& coords = dst.mesh().coords();
  const bool holds = holds_value(dst.layout(), coords);
  const bool direct = tile_is_packed(dst, fortran);
  std::unique_ptr<T[]> packed;  // allocated on every rank before the collective open; not
                                // zero-filled: the read overwrites every element
  comm::agreed(comm, "read", [&] {
    fault::point("read");
    if (holds && !direct)
      packed = std::make_unique_for_overwrite<T[]>(
          static_cast<std::size_t>(dst.local_rows() * dst.local_cols()));
  });
  io::RunCursor cursor =
      holds ? io::RunCursor::for_tile(dst.layout(), coords, fortran) : io::RunCursor();
  MPI_File fh = io::open_file(comm, path, MPI_MODE_RDONLY);
  std::string err = io::transfer(fh, comm, std::move(cursor), direct ? dst.data() : packed.get(),
                                 comm::mpi_type<T>(), sizeof(T), data_offset, Direction::Read);
  const std::string closed = io::mpi_io_error(MPI_File_close(&fh), "MPI_File_close");
  err = io::first_error(comm, err.empty() ? closed : err);
  if (!err.empty()) throw IoError("cannot read '" + path + "': " + err);
  if (!holds) {
    dst.set_zero();  // off coordinate 0 of the unreduced axes
  } else if (!direct) {
    unpack_tile(packed.get(), dst, fortran);
  }
}

// Rank 0, once every rank wrote and closed `tmp`: checks its size (a short write MPI-IO did not
// report shows there) and renames it onto `path` (rename(2) atomically replaces an old file).
std::string publish(const std::string& tmp, const std::string& path, std::int64_t want) {
  std::error_code ec;
  const auto size = static_cast<std::int64_t>(fs::file_size(tmp, ec));
  if (ec) return "cannot stat '" + tmp + "': " + ec.message();
  if (size != want)
    return "short write: '" + tmp + "' has " + std::to_string(size) + " bytes, expected " +
           std::to_string(want);
  fs::rename(tmp, path, ec);
  return ec ? "renaming '" + tmp + "' failed: " + ec.message() : "";
}

// Collective: writes `header` (rank 0) and every primary tile of `src` to a temporary file,
// then renames it onto `path` when all ranks succeeded; otherwise removes it and throws.
template <Scalar T>
void write_file(const std::string& path, const std::string& header, bool fortran,
                const DistMatrix<T>& src) {
  const MPI_Comm comm = src.mesh().comm();
  const int me = comm::comm_rank(comm);
  const auto& coords = src.mesh().coords();
  const bool primary = src.layout().is_primary(coords);
  const bool direct = tile_is_packed(src, fortran);
  std::vector<T> packed;  // packed on every rank before the collective open
  comm::agreed(comm, "write", [&] {
    fault::point("write");
    if (primary && !direct) packed = pack_tile(src, fortran);
  });
  io::RunCursor cursor =
      primary ? io::RunCursor::for_tile(src.layout(), coords, fortran) : io::RunCursor();
  const std::string tmp = io::temp_name(comm, path);
  std::error_code ec;
  MPI_File fh = MPI_FILE_NULL;
  try {
    fh = io::open_file(comm, tmp, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL);
  } catch (const IoError& e) {
    if (me == 0) fs::remove(tmp, ec);
    throw IoError("cannot write '" + path + "': " + e.what());
  }
  std::string err;
  if (me == 0 && !header.empty()) {
    MPI_Status st;
    err = io::mpi_io_error(
        MPI_File_write_at(fh, 0, header.data(), static_cast<int>(header.size()), MPI_CHAR, &st),
        "writing the header");
  }
  const std::string data_err = io::transfer(
      fh, comm, std::move(cursor), const_cast<T*>(direct ? src.data() : packed.data()),
      comm::mpi_type<T>(), sizeof(T), static_cast<std::int64_t>(header.size()), Direction::Write);
  if (err.empty()) err = data_err;
  const std::string synced = io::mpi_io_error(MPI_File_sync(fh), "MPI_File_sync");
  if (err.empty()) err = synced;
  const std::string closed = io::mpi_io_error(MPI_File_close(&fh), "MPI_File_close");
  if (err.empty()) err = closed;
  err = io::first_error(comm, err);
  if (err.empty() && me == 0)
    err = publish(tmp, path,
                  static_cast<std::int64_t>(header.size()) +
                      src.rows() * src.cols() * static_cast<std::int64_t>(sizeof(T)));
  err = io::first_error(comm, err);
  if (err.empty()) return;
  if (me == 0) fs::remove(tmp, ec);
  throw IoError("cannot write '" + path + "': " + err);
}

template <Scalar T>
void check_writable(const DistMatrix<T>& src, const char* who) {
  if (src.layout().is_unreduced())
    throw InvalidArgument(std::string(who) + ": " + src.layout().to_string() +
                          " holds unreduced partial sums; reduce it before writing");
}

}  // namespace

NpyHeader read_npy_header(const std::string& path, MPI_Comm comm) {
  const comm::WaitScope waiting;          // SHARDMM_WAIT
  trace::Call call(comm, "read_header");  // inside read_npy: one of its phases
  NpyHeader h;
  std::string err;
  if (comm::comm_rank(comm) == 0) {
    try {
      h = read_header_here(path);
    } catch (const std::exception& e) {  // IoError, or a std::bad_alloc from a huge header
      err = e.what();
    }
  }
  err = io::first_error(comm, err);
  if (!err.empty()) throw IoError("cannot read .npy file '" + path + "': " + err);
  std::int64_t f[6] = {static_cast<std::int64_t>(h.dtype),
                       h.rows,
                       h.cols,
                       h.fortran_order ? 1 : 0,
                       h.data_offset,
                       h.version};
  SHARDMM_MPI(MPI_Bcast(f, 6, MPI_INT64_T, 0, comm));
  return NpyHeader{static_cast<Dtype>(f[0]), f[1], f[2], f[3] != 0, f[4], static_cast<int>(f[5])};
}

namespace {

// NumPy has no bfloat16: bf16 matrices go to raw files (the same on every rank).
template <Scalar T>
void check_npy_dtype(const char* what) {
  if constexpr (std::is_same_v<T, bf16>)
    throw NotSupported(std::string(what) +
                       ": NumPy has no bfloat16 dtype; use read_raw / write_raw for bf16 (raw "
                       "16-bit patterns, as numpy.uint16 holds them) or f16 ('<f2')");
}

}  // namespace

template <Scalar T>
void read_npy(const std::string& path, DistMatrix<T>& dst) {
  check_npy_dtype<T>("read_npy");
  if (!dst.mesh().active()) return;
  const comm::WaitScope waiting;  // SHARDMM_WAIT
  trace::Call call(dst.mesh().comm(), "read");
  if (call.span()) call.span().text("path", path).text("format", "npy");
  const NpyHeader h = read_npy_header(path, dst.mesh().comm());
  constexpr Dtype want = dtype_of<T>();
  if (h.dtype != want)
    throw IoError("cannot read '" + path + "': it holds " + npy_descr(h.dtype) + " (" +
                  to_string(h.dtype) + ") data, the matrix's element type is " + to_string(want) +
                  " (" + npy_descr(want) + ")");
  if (h.rows != dst.rows() || h.cols != dst.cols())
    throw DimensionMismatch("cannot read '" + path + "': it holds a " + std::to_string(h.rows) +
                            "x" + std::to_string(h.cols) + " matrix, the destination is " +
                            dst.layout().to_string());
  read_tile(path, h.data_offset, h.fortran_order, dst);
}

template <Scalar T>
void write_npy(const std::string& path, const DistMatrix<T>& src, bool fortran_order) {
  check_npy_dtype<T>("write_npy");
  check_writable(src, "write_npy");
  if (!src.mesh().active()) return;
  const comm::WaitScope waiting;  // SHARDMM_WAIT
  trace::Call call(src.mesh().comm(), "write");
  if (call.span()) call.span().text("path", path).text("format", "npy");
  write_file(path, make_npy_header(dtype_of<T>(), src.rows(), src.cols(), fortran_order),
             fortran_order, src);
}

template <Scalar T>
void read_raw(const std::string& path, DistMatrix<T>& dst, bool fortran_order,
              std::int64_t data_offset) {
  if (data_offset < 0)
    throw InvalidArgument("read_raw: data offset " + std::to_string(data_offset) + " is negative");
  if (!dst.mesh().active()) return;
  const comm::WaitScope waiting;  // SHARDMM_WAIT
  trace::Call call(dst.mesh().comm(), "read");
  if (call.span()) call.span().text("path", path).text("format", "raw");
  const MPI_Comm comm = dst.mesh().comm();
  const std::string err =
      io::raw_size_error(comm, path, dst.rows(), dst.cols(), dtype_of<T>(), data_offset, false);
  if (!err.empty()) throw IoError("cannot read raw file '" + path + "': " + err);
  read_tile(path, data_offset, fortran_order, dst);
}

template <Scalar T>
void write_raw(const std::string& path, const DistMatrix<T>& src, bool fortran_order) {
  check_writable(src, "write_raw");
  if (!src.mesh().active()) return;
  const comm::WaitScope waiting;  // SHARDMM_WAIT
  trace::Call call(src.mesh().comm(), "write");
  if (call.span()) call.span().text("path", path).text("format", "raw");
  write_file(path, std::string(), fortran_order, src);
}

#define SHARDMM_IO_INSTANTIATE(T)                                                    \
  template void read_npy<T>(const std::string&, DistMatrix<T>&);                     \
  template void write_npy<T>(const std::string&, const DistMatrix<T>&, bool);        \
  template void read_raw<T>(const std::string&, DistMatrix<T>&, bool, std::int64_t); \
  template void write_raw<T>(const std::string&, const DistMatrix<T>&, bool);
SHARDMM_IO_INSTANTIATE(float)
SHARDMM_IO_INSTANTIATE(double)
SHARDMM_IO_INSTANTIATE(std::complex<float>)
SHARDMM_IO_INSTANTIATE(std::complex<double>)
SHARDMM_IO_INSTANTIATE(f16)
SHARDMM_IO_INSTANTIATE(bf16)
#undef SHARDMM_IO_INSTANTIATE

}  // namespace shardmm
