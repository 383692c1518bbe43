// Internal machinery of matrix files: which runs of a file a mesh cell's tile covers, the
// collective MPI-IO transfer of those runs, and agreement on errors across ranks.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "shardmm/layout.hpp"
#include "shardmm/types.hpp"

namespace shardmm::io {

using Range = std::pair<index_t, index_t>;  // half-open [begin, end)

/// Walks, in increasing file order, the contiguous runs of a tile in a file holding a matrix
/// row-major (C order: major = rows) or column-major (Fortran order: major = columns). The
/// tile is the product of owned major and minor index ranges; its elements come out in file
/// order, which is the tile packed row-major (C) or column-major (Fortran).
class RunCursor {
 public:
  RunCursor() = default;  // empty: no elements
  RunCursor(std::vector<Range> major, std::vector<Range> minor, index_t minor_extent);
  /// The tile of mesh cell `coords` in a file of L's shape.
  static RunCursor for_tile(const Layout& L, const std::vector<int>& coords, bool fortran_order);

  [[nodiscard]] bool done() const { return mi_ >= major_.size(); }
  /// Appends the next runs as (element offset, length) pairs, at most `max_elems` elements and
  /// `max_runs` runs in all (runs that touch are merged; a run may be split). Returns the
  /// number of elements appended.
  index_t next(index_t max_elems, std::size_t max_runs, std::vector<index_t>& offsets,
               std::vector<index_t>& lengths);

 private:
  void advance();

  std::vector<Range> major_, minor_;
  index_t minor_extent_ = 0;
  std::size_t mi_ = 0, ni_ = 0;  // current major range, current minor range
  index_t a_ = 0, b_ = 0;        // current major index, next minor index
};

enum class Direction { Read, Write };

/// Collective over the communicator `fh` was opened on: moves the elements `cursor` visits
/// between the file (element offset e at byte data_offset + e * elem_size) and `packed` (the
/// same elements back to back, in file order), in pieces of at most comm::max_message_elems()
/// elements (and < 2 GiB), each through a file view of the piece's runs. Returns this rank's first
/// error
/// ("" when none); every rank stops at the first piece after which any rank failed.
std::string transfer(MPI_File fh, MPI_Comm comm, RunCursor cursor, void* packed, MPI_Datatype etype,
                     std::size_t elem_size, std::int64_t data_offset, Direction dir);

/// "" on MPI_SUCCESS, else "<what> failed: <MPI's message>".
std::string mpi_io_error(int code, const std::string& what);

/// Collective: a raw file's size checks against a rows x cols matrix of `elem_bytes`-byte
/// `dtype` elements starting `data_offset` bytes in (rank 0 looks: with `readable`, also that
/// it may be read); the same message on every rank, "" when it fits.
std::string raw_size_error(MPI_Comm comm, const std::string& path, index_t rows, index_t cols,
                           Dtype dtype, std::int64_t data_offset, bool readable);

/// Collective: the message of the lowest rank whose `local` is not empty ("" when none).
std::string first_error(MPI_Comm comm, const std::string& local);

/// Collective file open with MPI_ERRORS_RETURN semantics; throws IoError on every rank when
/// any rank failed (the handle of ranks that did open it is then not closed: MPI_File_close
/// is collective).
MPI_File open_file(MPI_Comm comm, const std::string& path, int amode);

/// Collective over comm: rank 0 picks "<path>.tmp.<16 hex digits>" (a temporary file next to
/// the target, renamed onto it once every rank succeeded); every rank returns that name.
std::string temp_name(MPI_Comm comm, const std::string& path);

}  // namespace shardmm::io
