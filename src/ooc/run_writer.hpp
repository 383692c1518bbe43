// Writing a packed block's runs into the result file. Buffered, each run is one pwrite: the
// kernel copies it into the page cache on the calling core, and its writeback later walks those
// pages again. Direct (O_DIRECT), the disk reads the bytes from user memory (DMA): each run's
// pages that lie wholly inside it go from a page-aligned bounce buffer through a second
// descriptor opened with O_DIRECT; the partial pages at the run's head and tail (shared with the
// neighbouring runs of other blocks, or with the .npy header) are written buffered. A page is
// thus only ever written one way, so the page cache never holds a stale copy of a page written
// directly. A file system that refuses O_DIRECT (EINVAL at open or at the first direct write)
// gets buffered writes from then on: RunWriter::direct() says which ran.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "ooc/buffer.hpp"
#include "ooc/panel_reader.hpp"
#include "ooc/run_io.hpp"

namespace shardmm::ooc {

/// Bytes a direct write's offset, length and memory are aligned to (a page: a multiple of every
/// device's logical block size up to 4 KiB).
constexpr std::int64_t kDirectAlign = 4096;

class RunWriter {
 public:
  /// fd: the file opened for buffered writes; path: the same file, opened again with O_DIRECT
  /// when `direct` (a refusal falls back to buffered writes).
  RunWriter(int fd, const std::string& path, bool direct);
  ~RunWriter();
  RunWriter(const RunWriter&) = delete;
  RunWriter& operator=(const RunWriter&) = delete;
  RunWriter(RunWriter&&) = delete;
  RunWriter& operator=(RunWriter&&) = delete;

  /// Writes the runs `r` from `buf` (the runs packed one after the other) through bounce buffer
  /// `slot` (0 or 1: two writes may run at once, one per slot). "" or the first error.
  std::string write(int slot, const Runs& r, const char* buf);
  /// Whether direct writes are (still) in use.
  [[nodiscard]] bool direct() const { return use_direct_.load(); }
  /// Bytes written directly so far.
  [[nodiscard]] std::int64_t direct_bytes() const { return direct_bytes_.load(); }
  /// Closes the direct descriptor, no write in flight; "" or close's error.
  std::string close();

 private:
  std::string write_run(int slot, std::int64_t off, std::int64_t len, const char* src);
  std::string write_direct(int slot, std::int64_t off, std::int64_t len, const char* src);

  int fd_;
  int dfd_ = -1;  ///< the O_DIRECT descriptor, or -1
  std::atomic<bool> use_direct_{false};
  bool refuse_ = false;  ///< SHARDMM_FAULT_INJECT refuses the direct writes (as EINVAL)  ///< false
                         ///< after a refusal (the descriptor stays open)
  std::atomic<std::int64_t> direct_bytes_{0};
  Buffer<char> bounce_[2];
  RunIo io_[2] = {RunIo(batched_io_allowed()), RunIo(batched_io_allowed())};  ///< buffered writes
};

}  // namespace shardmm::ooc
