// C = P + beta C for a P that may hold partial sums pending over mesh axes U ({U_...}): 2.5D's
// reduction step (gemm25d.cpp). The sharding rules fuse theirs with the product instead
// (sharded_reduce.hpp), on the same ring (comm::ring_reduce_steps).
//   ReduceScatter, when C's split of one dimension is P's split with U appended (blocks
//     nesting) and the other dimension matches: P's tile is packed by destination along U
//     and reduce-scattered over axis_comm(U) (comm::reduce_scatter, a ring of isend/irecv on
//     pooled buffers) straight into C's tiles: (|U| - 1)/|U| of P's tile per rank.
//   AllReduce over U, when C needs the sum but not in that shape; then a redistribution.
//   Otherwise (P already reduced, or C keeps U pending) a redistribution.
#include "algo/reduce_partials.hpp"

#include <algorithm>

#include "algo/algo.hpp"
#include "algo/pack.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "core/instantiate.hpp"
#include "memory/workspace.hpp"
#include "shardmm/redistribute.hpp"

namespace shardmm::algo {

int group_size(const MeshShape& mesh, const std::vector<int>& axes) {
  int s = 1;
  for (int a : axes) s *= mesh.sizes[a];
  return s;
}

namespace {

using Axes = std::vector<int>;

// ReduceScatter applies: C = P with U appended to the axes of one dimension, blocks nesting.
int rs_dim(const Layout& P, const Layout& C) {
  if (C.is_unreduced() || !P.is_unreduced()) return -1;
  const Axes U = P.unreduced_axes();
  const int u = group_size(P.mesh(), U);
  for (int d = 0; d < 2; ++d) {
    Axes want = P.dim_axes(d);
    want.insert(want.end(), U.begin(), U.end());
    const bool other_same = C.dim_axes(1 - d) == P.dim_axes(1 - d) && C.map(1 - d) == P.map(1 - d);
    const bool nests = P.map(d).nprocs == 1 || P.map(d).nb == u * C.map(d).nb;
    if (C.dim_axes(d) == want && other_same && nests) return d;
  }
  return -1;
}

}  // namespace

template <Scalar T>
void reduce_partials(DistMatrix<T>& P, T beta, DistMatrix<T>& C) {
  const Layout& LP = P.layout();
  const int d = rs_dim(LP, C.layout());
  if (d >= 0) {  // ReduceScatter over U straight into C's tiles
    const Axes U = LP.unreduced_axes();
    const int u = group_size(LP.mesh(), U);
    const int g = LP.dim_coord(d, C.mesh().coords());
    const DimMap& cm = C.layout().map(d);
    const index_t base = LP.map(d).local_extent(g) > 0 ? LP.map(d).to_global(0, g) : 0;
    std::vector<std::int64_t> counts(u);
    for (int v = 0; v < u; ++v)
      counts[v] = cm.local_extent(g * u + v) * (d == 0 ? P.local_cols() : P.local_rows());
    T *send = nullptr, *mine = nullptr;  // P's blocks by destination, my summed block
    prologue(C.mesh().comm(), [&] {
      send = memory::get<T>(memory::Slot::Pack, P.local_rows() * P.local_cols());
      mine = memory::get<T>(memory::Slot::Unpack, C.local_rows() * C.local_cols());
      comm::reserve_reduce_scatter<T>(*std::max_element(counts.begin(), counts.end()));
    });
    T* out = send;
    for (int v = 0; v < u; ++v) {
      const int cc = g * u + v;
      const index_t ext = cm.local_extent(cc), off = ext > 0 ? cm.to_global(0, cc) - base : 0;
      const index_t r0 = d == 0 ? off : 0, nr = d == 0 ? ext : P.local_rows();
      const index_t c0 = d == 1 ? off : 0, nc = d == 1 ? ext : P.local_cols();
      out = copy_block(P.data() + r0 + c0 * P.ld(), P.ld(), nr, nc, out, nr);
    }
    comm::reduce_scatter(send, mine, counts, C.mesh().axis_comm(axis_names(LP.mesh(), U)));
    blas::scale(C.local_rows(), C.local_cols(), beta, C.data(), C.ld());
    add_block(mine, C.local_rows(), C.local_rows(), C.local_cols(), C.data(), C.ld());
    return;
  }
  if (LP.is_unreduced() && LP.unreduced_axes() != C.layout().unreduced_axes()) {
    // AllReduce over U: every member then holds the sum; the U axes become replica axes.
    comm::allreduce_sum(P.data(), P.ld() * P.local_cols(),
                        C.mesh().axis_comm(axis_names(LP.mesh(), LP.unreduced_axes())));
    ShardingSpec s = LP.spec();
    s.unreduced.clear();
    const auto summed =
        DistMatrix<T>::view(P.mesh(), Layout(LP.mesh(), LP.rows(), LP.cols(), s), P.data(), P.ld());
    redistribute(summed, C, T(1), beta);
    return;
  }
  redistribute(P, C, T(1), beta);
}

#define SHARDMM_INSTANTIATE(T) template void reduce_partials<T>(DistMatrix<T>&, T, DistMatrix<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
