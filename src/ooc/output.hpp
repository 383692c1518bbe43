// The streamed result file: a temporary file next to the destination, written block by block
// behind the compute (write-behind) and renamed onto the destination once every rank
// succeeded. Rank 0 creates it and reserves its whole size (a full disk fails before any
// work); every rank then hands each finished block to a writer thread, which pwrites its runs
// and starts the kernel's writeback of them (sync_file_range), so the durability step at the
// end (fsync before rename) finds little left. Whatever the I/O method of the reads:
//  - not MPI_File_iwrite_at: Open MPI's OMPIO completes a strided view's non-blocking write
//    before returning (the write-behind then blocked the GEMM for 3 s of a 19 s run), and a
//    failed file request crashes in its error handler;
//  - not a mapped output: the GEMM writing in place into the file's 4 KiB pages ran slower
//    than into huge-page buffers plus the copy (docs/OUT_OF_CORE.md, "Reading").
#pragma once

#include <mpi.h>

#include <future>
#include <memory>
#include <string>

#include "ooc/panel_reader.hpp"
#include "ooc/run_writer.hpp"

namespace shardmm::ooc {

class OutputFile {
 public:
  /// Collective: creates the temporary file, (rank 0) writes the .npy header and reserves the
  /// file's size (a disk without room fails here, before any work). `direct`: the blocks'
  /// whole pages are written with O_DIRECT where the file system takes it (run_writer.hpp).
  OutputFile(MPI_Comm comm, const MatrixFile& out, bool direct = false);
  /// Removes the temporary file unless published.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  OutputFile(OutputFile&&) = delete;
  OutputFile& operator=(OutputFile&&) = delete;

  /// Starts writing sub-block `s` of the stored result from `buf` (packed in the file's order)
  /// through slot 0 or 1, whose last write was waited for; `buf` stays untouched until then.
  /// Not collective.
  void start_write(int slot, const Sub& s, const void* buf);
  /// Waits for the slot's write. Returns this rank's first error ("" when none).
  std::string wait_write(int slot);

  /// Collective: syncs, closes and renames onto the destination; throws IoError on every rank
  /// (the destination untouched) when any rank failed. Returns the seconds of the sync.
  double publish();
  [[nodiscard]] std::int64_t bytes() const { return bytes_; }
  /// Of bytes(), those written with O_DIRECT.
  [[nodiscard]] std::int64_t direct_bytes() const { return writer_ ? writer_->direct_bytes() : 0; }

 private:
  void open(bool direct);
  void close();
  void writeback(const Sub& s);
  [[nodiscard]] std::int64_t data_bytes() const;

  MPI_Comm comm_;
  MatrixFile out_;
  std::string tmp_;
  std::future<std::string> write_[2];
  Sub pending_[2];
  int fd_ = -1;  ///< this rank's descriptor of the temporary file
  std::unique_ptr<RunWriter> writer_;
  std::string err_;
  std::int64_t bytes_ = 0;
  bool published_ = false;
};

}  // namespace shardmm::ooc
