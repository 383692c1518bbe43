// The layouts the PBLAS level-3 algorithms move their operands into: one definition that the
// planner (front/plan_blas3.cpp) prices and the routines (front/syrk.cpp, front/triangular.cpp)
// run. Pure layout metadata, no MPI.
#pragma once

#include <algorithm>
#include <string>

#include "shardmm/layout.hpp"

namespace shardmm::front {

/// `d` with every bc() placeholder axis (#0, #1) named as the mesh axis it stands for.
inline DimSpec named_axes(DimSpec d, const MeshShape& mesh) {
  for (auto& axis : d.axes)
    if (axis.size() == 2 && axis[0] == '#') axis = mesh.names[axis[1] - '0'];
  return d;
}

/// rows x cols with dimension `split` (0 rows, 1 columns) as `d` and the other one whole.
inline Layout one_split(const MeshShape& mesh, index_t rows, index_t cols, int split, DimSpec d) {
  ShardingSpec s;
  s.name = "P";
  d = named_axes(d, mesh);
  d.label = split == 0 ? "I" : "J";
  const DimSpec whole{split == 0 ? "J" : "I", DimSpec::Kind::Replicated, {}, 0, 0, 0};
  s.dims = split == 0 ? std::array<DimSpec, 2>{d, whole} : std::array<DimSpec, 2>{whole, d};
  return Layout(mesh, rows, cols, s);
}

/// Rank-k "triangle": op(A)'s rows beside C's dimension `c_dim` (0: C's rows, 1: its
/// columns), k whole, in A's orientation (`a_rows`: op N, op(A)'s rows are A's rows).
inline Layout rank_k_panel(const Layout& A, const Layout& C, int c_dim, bool a_rows) {
  return one_split(C.mesh(), A.rows(), A.cols(), a_rows ? 0 : 1, C.spec().dims[c_dim]);
}

/// Every mesh axis, major first, as one block-cyclic dimension of block `nb`.
inline DimSpec all_axes(const MeshShape& mesh, index_t nb) {
  return DimSpec{"K", DimSpec::Kind::BlockCyclic, mesh.names, nb, 0, 0};
}

/// Rank-k "reduce": op(A) with k split over every mesh axis, n whole, in A's orientation.
inline Layout rank_k_split(const Layout& A, bool a_rows, index_t nb) {
  return one_split(A.mesh(), A.rows(), A.cols(), a_rows ? 1 : 0, all_axes(A.mesh(), nb));
}

/// Rank-k "reduce": the n x n partial sums of every rank, [I,J]{U_all}.
inline Layout rank_k_partials(const MeshShape& mesh, index_t n) {
  ShardingSpec s;
  s.name = "W";
  s.dims = {DimSpec{"I", DimSpec::Kind::Replicated, {}, 0, 0, 0},
            DimSpec{"J", DimSpec::Kind::Replicated, {}, 0, 0, 0}};
  for (std::size_t a = 0; a < mesh.names.size(); ++a)
    if (mesh.sizes[a] > 1) s.unreduced.push_back(mesh.names[a]);
  return Layout(mesh, n, n, s);
}

/// trmm / trsm "steps": op(A) (na x na) with B's map along `dim` (0: rows, Left; 1: columns,
/// Right), the other dimension whole.
inline Layout triangular_panel(index_t na, const Layout& B, int dim) {
  return one_split(B.mesh(), na, na, dim, B.spec().dims[dim]);
}

/// trmm / trsm "steps": the widest step; B's blocks along `dim` are used as they are, cut to
/// at most this many indices (a single block, when one rank holds the dimension whole).
inline constexpr index_t kWidestTriangularStep = 256;

/// The width of a "steps" step for op(A) of order na whose rows (columns) follow `map`:
/// what the step loop (algo::triangular_steps) cuts, and what the planner prices.
inline index_t triangular_step_width(index_t na, const DimMap& map) {
  const index_t block = map.nprocs > 1 ? map.nb : na;
  return std::max<index_t>(std::min({block, na, kWidestTriangularStep}), 1);
}

/// trmm / trsm "local": B with dimension `dim` whole and the other split over every mesh axis.
inline Layout triangular_whole(const Layout& B, int dim, index_t nb) {
  return one_split(B.mesh(), B.rows(), B.cols(), 1 - dim, all_axes(B.mesh(), nb));
}

}  // namespace shardmm::front
