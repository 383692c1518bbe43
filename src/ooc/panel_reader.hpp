// Panel readers of the out-of-core path: a sub-block of a stored matrix (rows [r0, r1) x
// columns [c0, c1) of the file's matrix) moves into a buffer, packed in the file's order
// (column-major for a Fortran-order file, row-major for C order). Two slots, so the next
// panel's read runs while the current one multiplies.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "shardmm/ooc.hpp"

namespace shardmm::ooc {

/// A sub-block of a stored matrix; empty (no elements) when r0 == r1 or c0 == c1.
struct Sub {
  index_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  [[nodiscard]] index_t elems() const { return (r1 - r0) * (c1 - c0); }
};

/// Where stored sub-block s of f lies in the file: `count` runs of `len` bytes, run i at
/// first + i * stride (one run per column for Fortran order, per row for C order; one run in
/// all when they are contiguous in the file). Non-empty s only.
struct Runs {
  index_t count = 0;
  std::int64_t len = 0, first = 0, stride = 0;
  [[nodiscard]] std::int64_t offset(index_t i) const { return first + i * stride; }
  [[nodiscard]] std::int64_t end() const { return offset(count - 1) + len; }  ///< past the last
};
Runs runs_of(const MatrixFile& f, const Sub& s);

class PanelReader {
 public:
  virtual ~PanelReader() = default;
  PanelReader() = default;
  PanelReader(const PanelReader&) = delete;
  PanelReader& operator=(const PanelReader&) = delete;
  PanelReader(PanelReader&&) = delete;
  PanelReader& operator=(PanelReader&&) = delete;
  /// Starts moving `s` into `buf` through slot 0 or 1 (free: its last read was waited for).
  /// MPI-IO: collective, every rank calls it the same number of times (empty subs included).
  virtual void start(int slot, const Sub& s, void* buf) = 0;
  /// Waits for the slot's read: "" or this rank's error.
  virtual std::string wait(int slot) = 0;
  /// Bytes this reader moved.
  [[nodiscard]] std::int64_t bytes() const { return bytes_; }

 protected:
  std::int64_t bytes_ = 0;
};

/// Collective over `comm` (opens the file twice, one handle per slot; the same IoError on
/// every rank when any rank cannot).
std::unique_ptr<PanelReader> make_reader(IoMethod io, const MatrixFile& f, MPI_Comm comm);

/// The MPI datatype of a dtype's element.
MPI_Datatype mpi_element(Dtype d);

/// A subarray file type for `s` of f's stored matrix (MPI_ORDER_C or _FORTRAN by f's order);
/// the caller frees it. Empty subs: `etype` itself, not to be freed.
MPI_Datatype sub_filetype(const MatrixFile& f, const Sub& s, MPI_Datatype etype);

}  // namespace shardmm::ooc
