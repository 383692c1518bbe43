// ScaLAPACK array descriptors, both types PBLAS accepts, and the submatrices p?gemm works on:
// sub(X) = X(IX:IX+rows-1, JX:JX+cols-1) of the block-cyclic matrix the descriptor describes.
//   type 1, BLOCK_CYCLIC_2D (9 entries):      DTYPE CTXT M N MB NB RSRC CSRC LLD
//   type 2, BLOCK_CYCLIC_2D_INB (11 entries): DTYPE CTXT M N IMB INB MB NB RSRC CSRC LLD
// A type-1 descriptor is read as the type-2 one whose first block is MB x NB (PBLAS'
// PB_CargFtoC), so checks, error codes and geometry see type 2 only, as PBLAS does.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "scalapack/blacs.hpp"
#include "shardmm/layout.hpp"

namespace shardmm::scalapack {

/// Entries of a type-2 descriptor (0-based; error codes use the 1-based entry number).
enum DescEntry { kDtype, kCtxt, kM, kN, kImb, kInb, kMb, kNb, kRsrc, kCsrc, kLld, kDescLength };
constexpr int kBlockCyclic2D = 1, kBlockCyclic2DInb = 2;  // DTYPE_ values
using Desc = std::array<int, kDescLength>;

/// `desc` (type 1 or 2) as type 2; any other type keeps DTYPE and CTXT, the rest as PBLAS
/// fills it (an empty 1 x 1-blocked matrix), and is refused by check_matrix.
Desc normalized(const int* desc);

/// One matrix argument of p?gemm as passed, with the argument positions its errors report.
struct MatrixArg {
  Desc desc{};
  int i = 1, j = 1;                ///< IX, JX (1-based)
  int rows = 0, cols = 0;          ///< extent of sub(X), from M, N or K
  int rows_pos = 0, cols_pos = 0;  ///< positions of the scalars M/N/K giving rows and cols
  int desc_pos = 0;                ///< position of DESCX; IX and JX are 2 and 1 before it
  const char* name = "A";          ///< X in PBLAS' messages ("A", "B" or "C")
};

/// PBLAS' checks of one matrix argument (as PB_Cchkmat): 0 when legal, otherwise the
/// smallest of position*100 (a scalar) or position*100 + entry (an entry of the type-2 form:
/// a type-1 descriptor's MB reports entry 5 (IMB), its RSRC 9, its LLD 11, as in PBLAS).
/// LLD is checked against this process's local rows, so the result may differ by process.
int check_matrix(const Grid& grid, const MatrixArg& x);

/// Every code check_matrix finds, not only the smallest, in PBLAS' order: PB_Cchkmat warns
/// about each (empty when legal).
std::vector<int> illegal_codes(const Grid& grid, const MatrixArg& x);

/// PBLAS' own message (as PB_Cchkmat words it) for `code`, one of illegal_codes(grid, x) on
/// this process: "DESCA[LLD_] = 1, it must be at least 160".
std::string describe_illegal(const Grid& grid, const MatrixArg& x, int code);

/// sub(X) along one dimension of the grid.
struct SubDim {
  DimMap full;              ///< the whole dimension (nprocs 1 when replicated: src == -1)
  bool replicated = false;  ///< RSRC / CSRC == -1: every process row / column holds it all
  index_t begin = 0;        ///< first index of the submatrix (0-based)
  index_t size = 0;

  /// Its distribution as the submatrix's own dimension: block-cyclic with the full map's
  /// blocks, its first block running from `begin` to the end of the block holding it.
  [[nodiscard]] DimSpec spec(const std::string& label, const std::string& axis) const;
  /// Local index (in the full local array) of the first submatrix element held by `coord`:
  /// the elements of the full dimension before `begin` that `coord` holds.
  [[nodiscard]] index_t local_begin(int coord) const;
  /// Submatrix elements held by `coord` (contiguous local indices from local_begin).
  [[nodiscard]] index_t local_size(int coord) const;
};

struct SubMatrix {
  SubDim row, col;
  index_t lld = 1;
};

/// The submatrix of a checked argument.
SubMatrix sub_matrix(const MatrixArg& x, const Grid& grid);

/// The submatrix's distribution on the grid mesh (exact: any offset, any first block), so
/// sub(X) is a view of the caller's local array.
Layout sub_layout(const MeshShape& mesh, const SubMatrix& s);

}  // namespace shardmm::scalapack
