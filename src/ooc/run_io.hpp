// Moving a block's or a panel's runs between a file and a packed buffer in few system calls.
// A panel of a C-order operand cut into k-panels is thousands of short runs (a 2731 x 384 f64
// panel: 2731 runs of 3 KiB), and one pread per run costs a system call each: on the
// development VM (where every kernel entry goes through the hypervisor) 2.7 us per 3 KiB run,
// two thirds of it the call itself. Linux AIO takes up to kBatch runs per io_submit; on a
// buffered file the kernel copies each run from or into the page cache inside the call, so the
// runs cost 1.35 us each (perf: the posix reader threads' CPU of a 16384 x 16384 x 2048 product
// at 128 MiB was 4.4 s, 1 s of it the calls' entries). Where the kernel offers no AIO (or
// refuses a batch), and for a run that comes back short, one pread/pwrite per run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ooc/panel_reader.hpp"

namespace shardmm::ooc {

/// Used by one thread at a time: the events of its AIO context are its own.
class RunIo {
 public:
  /// Runs per io_submit at most.
  static constexpr int kBatch = 64;
  /// `batched`: through an AIO context where the kernel gives one; false: a call per run.
  explicit RunIo(bool batched = true);
  ~RunIo();
  RunIo(const RunIo&) = delete;
  RunIo& operator=(const RunIo&) = delete;
  RunIo(RunIo&&) = delete;
  RunIo& operator=(RunIo&&) = delete;

  /// Reads the runs `r` of `fd` into `buf`, packed one after the other. "" or the first error
  /// (a run past the file's end: "short read: ...").
  std::string read(int fd, const Runs& r, char* buf);
  /// Writes the runs `r` of `fd` from `buf` (packed). "" or the first error.
  std::string write(int fd, const Runs& r, const char* buf);
  /// Whether runs go in batches (false: without AIO, or after the kernel refused a batch).
  [[nodiscard]] bool batched() const { return ctx_ != 0; }

 private:
  std::string move(int fd, bool write, const Runs& r, char* buf);
  std::string batch(int fd, bool write, const Runs& r, char* buf, index_t first, int n);

  std::uint64_t ctx_ = 0;           ///< aio_context_t, 0 when none
  std::vector<unsigned char> cbs_;  ///< kBatch struct iocb, kept between calls
};

/// Whether this rank may batch its runs: false when SHARDMM_FAULT_INJECT selects
/// "batched-io" on it (the tests' way to compare with a call per run). Asked on a thread
/// that may make MPI calls.
bool batched_io_allowed();

/// pread of all `len` bytes at `off` (retrying short reads and EINTR): "" or the error.
std::string pread_all(int fd, char* dst, std::int64_t len, std::int64_t off);
/// pwrite of all `len` bytes at `off` (retrying short writes and EINTR): "" or the error.
std::string pwrite_all(int fd, const char* src, std::int64_t len, std::int64_t off);

}  // namespace shardmm::ooc
