// The out-of-core result file: a temporary file next to the destination, written block by
// block with MPI-IO (independent writes through subarray views), renamed onto the destination once
// every rank succeeded.
#pragma once

#include <mpi.h>

#include <string>

#include "ooc/panel_reader.hpp"

namespace shardmm::ooc {

class OutputFile {
 public:
  /// Collective: creates the temporary file and (rank 0) writes the .npy header.
  OutputFile(MPI_Comm comm, const MatrixFile& out);
  /// Removes the temporary file unless published.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  OutputFile(OutputFile&&) = delete;
  OutputFile& operator=(OutputFile&&) = delete;

  /// Collective: writes sub-block `s` of the stored result from `buf` (packed in the file's
  /// order; empty subs join). Returns this rank's error or "".
  std::string write(const Sub& s, const void* buf);
  /// Collective: syncs, closes and renames onto the destination; throws IoError on every rank
  /// (the destination untouched) when any rank failed.
  void publish();
  [[nodiscard]] std::int64_t bytes() const { return bytes_; }

 private:
  void close();

  MPI_Comm comm_;
  MatrixFile out_;
  std::string tmp_;
  MPI_File fh_ = MPI_FILE_NULL;
  MPI_Datatype etype_;
  std::string err_;
  std::int64_t bytes_ = 0;
  bool published_ = false;
};

}  // namespace shardmm::ooc
