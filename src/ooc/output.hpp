// The streamed result file: a temporary file next to the destination, written block by block
// behind the compute (write-behind) and renamed onto the destination once every rank
// succeeded. Rank 0 creates it and reserves its whole size (a full disk fails before any
// work); every rank then writes its own blocks. Two ways to write, by the run's I/O method:
//  - MPI-IO runs: a finished block goes to a writer thread (pwrite of its runs) while the next
//    block multiplies. Not MPI_File_iwrite_at: Open MPI's OMPIO writes a strided view's
//    non-blocking write before returning (the "write-behind" then blocked the GEMM for 3 s of
//    a 19 s run), and a failed file request crashes in its error handler;
//  - mmap: the file is mapped; the GEMM writes C's block in place in the mapping (no copy),
//    and a finished block's pages leave the process (MADV_DONTNEED; they stay dirty in the
//    page cache).
// Either way a finished block's byte range is handed to the kernel's writeback at once
// (sync_file_range), so the durability step at the end (fsync before rename) finds little left.
#pragma once

#include <mpi.h>

#include <future>
#include <string>

#include "ooc/panel_reader.hpp"

namespace shardmm::ooc {

class OutputFile {
 public:
  /// Collective: creates the temporary file, (rank 0) writes the .npy header and reserves the
  /// file's size (a disk without room fails here, before any work); mmap: maps it.
  OutputFile(MPI_Comm comm, const MatrixFile& out, IoMethod io);
  /// Removes the temporary file unless published.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  OutputFile(OutputFile&&) = delete;
  OutputFile& operator=(OutputFile&&) = delete;

  [[nodiscard]] bool mapped() const { return mapped_; }
  /// Mapped: the address of stored sub-block s's first element; its leading dimension is the
  /// stored matrix's (rows for Fortran order, columns for C order).
  [[nodiscard]] void* at(const Sub& s) const;
  [[nodiscard]] index_t ld() const { return out_.fortran_order ? out_.rows : out_.cols; }

  /// Not mapped: starts writing sub-block `s` of the stored result from `buf` (packed in the
  /// file's order) through slot 0 or 1, whose last write was waited for. Not collective.
  void start_write(int slot, const Sub& s, const void* buf);
  /// Not mapped: waits for the slot's write and starts its writeback. Returns this rank's error.
  std::string wait_write(int slot);
  /// Mapped: block s is final; starts its writeback (on a thread) and drops its pages from
  /// this process.
  void release(const Sub& s);

  /// Collective: syncs, closes and renames onto the destination; throws IoError on every rank
  /// (the destination untouched) when any rank failed. Returns the seconds of the sync.
  double publish();
  [[nodiscard]] std::int64_t bytes() const { return bytes_; }

 private:
  void open(bool map);
  void close();
  void writeback(const Sub& s);
  [[nodiscard]] std::int64_t data_bytes() const;

  MPI_Comm comm_;
  MatrixFile out_;
  std::string tmp_;
  std::future<std::string> write_[2];
  Sub pending_[2];
  int fd_ = -1;  ///< this rank's descriptor of the temporary file
  bool mapped_ = false;
  int release_count_ = 0;
  char* map_ = nullptr;
  std::size_t map_len_ = 0;
  std::string err_;
  std::int64_t bytes_ = 0;
  bool published_ = false;
};

}  // namespace shardmm::ooc
