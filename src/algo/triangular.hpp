// The blocked step loop of trsm and trmm (algo/triangular_steps.cpp): B is updated in place
// from op(A)'s rows (Left) or columns (Right) that the front end (front/triangular.cpp) has
// already moved to the ranks holding B's matching rows (columns).
#pragma once

#include <vector>

#include "shardmm/blas3.hpp"

namespace shardmm::algo {

/// What the step loop runs: a solve (trsm) or a product (trmm); op(A) on the left of B or on
/// its right; op(A) lower or upper triangular (as P holds it: op already applied); a unit
/// diagonal; the widest step (indices of B's dimension per step).
struct TriangularPlan {
  bool solve = true;
  bool left = true;
  bool lower = true;
  bool unit = false;
  index_t widest = 256;
};

/// One step: B's indices [begin, end) along the dimension op(A) acts on, all held by the
/// process `owner` of that dimension's axis group.
struct TriangularStep {
  index_t begin = 0, end = 0;
  int owner = 0;
};

/// The steps along `map` in increasing order: runs of one block of the map (one owner), at
/// most `widest` long.
std::vector<TriangularStep> triangular_steps(const DimMap& map, index_t widest);

/// B <- op(A)^-1 B or op(A) B (Left), B op(A)^-1 or B op(A) (Right), where P holds op(A):
/// Left, P is m x m with B's row map and every column on each rank; Right, P is n x n with
/// every row and B's column map. Per step, the owners of B's block solve (multiply) it with
/// P's diagonal block, the block goes along B's row (Left) or column (Right) axes with one
/// broadcast, and each rank updates its own rows (columns) of B that the block's column (row)
/// of op(A) reaches with one local GEMM. Collective over B's mesh.
template <Scalar T>
void triangular_steps_run(const TriangularPlan& plan, const DistMatrix<T>& P, DistMatrix<T>& B);

}  // namespace shardmm::algo
