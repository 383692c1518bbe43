// ScaLAPACK array descriptors (type 1, nine entries) and the submatrices p?gemm works on:
// sub(X) = X(IX:IX+rows-1, JX:JX+cols-1) of the block-cyclic matrix the descriptor describes.
#pragma once

#include "scalapack/blacs.hpp"
#include "shardmm/layout.hpp"

namespace shardmm::scalapack {

/// Descriptor entries (0-based; error codes use the 1-based entry number).
enum DescEntry { kDtype, kCtxt, kM, kN, kMB, kNB, kRsrc, kCsrc, kLld, kDescLength };

/// One matrix argument of p?gemm as passed, with the argument positions its errors report.
struct MatrixArg {
  const int* desc = nullptr;
  int i = 1, j = 1;                ///< IX, JX (1-based)
  int rows = 0, cols = 0;          ///< extent of sub(X), from M, N or K
  int rows_pos = 0, cols_pos = 0;  ///< positions of the scalars M/N/K giving rows and cols
  int desc_pos = 0;                ///< position of DESCX; IX and JX are 2 and 1 before it
};

/// PBLAS' checks of one matrix argument (as PB_Cchkmat): 0 when legal, otherwise the
/// smallest of position*100 (a scalar) or position*100 + entry (a descriptor entry).
/// LLD is checked against this process's local rows, so the result may differ by process.
int check_matrix(const Grid& grid, const MatrixArg& x);

/// sub(X) along one dimension of the grid.
struct SubDim {
  DimMap full;              ///< the whole dimension (nprocs 1 when replicated: src == -1)
  bool replicated = false;  ///< RSRC / CSRC == -1: every process row / column holds it all
  index_t begin = 0;        ///< first index of the submatrix (0-based)
  index_t size = 0;

  /// The submatrix is itself block-cyclic with whole blocks (nb, src = owner of `begin`)
  /// stored from local index local_begin(): true when `begin` is on a block boundary, the
  /// submatrix lies within one block, or one process holds the whole dimension.
  [[nodiscard]] bool aligned() const;
  /// Its distribution as the submatrix's own dimension (whole blocks from its first index).
  [[nodiscard]] DimSpec spec(const std::string& label, const std::string& axis) const;
  /// Local index (in the full local array) of the first submatrix element held by `coord`.
  [[nodiscard]] index_t local_begin(int coord) const;
  /// Submatrix elements held by `coord` (contiguous local indices from local_begin).
  [[nodiscard]] index_t local_size(int coord) const;
};

struct SubMatrix {
  SubDim row, col;
  index_t lld = 1;
  [[nodiscard]] bool aligned() const { return row.aligned() && col.aligned(); }
};

/// The submatrix of a checked argument.
SubMatrix sub_matrix(const MatrixArg& x, const Grid& grid);

/// The submatrix's distribution on the grid mesh: exact when aligned(), otherwise the
/// aligned layout with the same block sizes that it is copied into.
Layout sub_layout(const MeshShape& mesh, const SubMatrix& s);

}  // namespace shardmm::scalapack
