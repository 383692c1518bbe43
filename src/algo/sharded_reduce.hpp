// The product's reduction into C for the sharding-rule matmul (sharded.cpp), with the local
// product computed region by region by `product(i0, i1, j0, j1, out, ld, beta)` (rows [i0, i1)
// x columns [j0, j1) of the product's local indices into `out`):
//   ReduceScatter over the K' axes, fused: comm::ring_reduce_steps (the schedule of
//     comm::reduce_scatter, same order and words) in which each block of this rank's product is
//     computed just before it is added to the running sum that arrived and is sent on; two
//     blocks of memory.
//   AllReduce over the K' axes: the part of the product C's tile holds, computed into C itself
//     (beta = 0, C contiguous) or into one buffer, summed in place by comm::allreduce_sum.
#pragma once

#include <algorithm>
#include <vector>

#include "algo/sharded_steps.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "comm/wire.hpp"
#include "matrix/redistribute_detail.hpp"

namespace shardmm::algo::sharded {

/// A region of the product (its local indices) and where it lands in C (C's local indices).
struct Region {
  index_t i0 = 0, i1 = 0, j0 = 0, j1 = 0;  // product
  index_t ci = 0, cj = 0;                  // C's row and column of (i0, j0)
  [[nodiscard]] std::int64_t size() const { return (i1 - i0) * (j1 - j0); }
};

/// The part of this rank's product (layout P) that the cell at `coords` holds of C; false
/// when it is not one rectangle.
inline bool region(const Layout& P, const std::vector<int>& mine, const Layout& C,
                   const std::vector<int>& coords, Region& r) {
  const auto b = matrix::detail::overlap(P, mine, C, coords);
  if (b.rows.size() > 1 || b.cols.size() > 1) return false;
  r = Region{};
  if (b.size() == 0) return true;
  r.i0 = b.rows[0].from, r.i1 = r.i0 + b.nrows, r.ci = b.rows[0].to;
  r.j0 = b.cols[0].from, r.j1 = r.j0 + b.ncols, r.cj = b.cols[0].to;
  return true;
}

/// A reduction of the product over the K' axes' group: the region each member's C tile holds.
struct Reduction {
  Group group;
  std::vector<Region> blocks;  // per member
  std::int64_t widest = 0;
};
inline bool plan_reduction(const Mesh& mesh, const Layout& P, const Layout& C,
                           const matrix::RedistPlan& plan, Reduction& red) {
  const MeshShape& shape = P.mesh();
  Region r;
  for (int q = 0; q < shape.size(); ++q) {  // the same answer on every rank
    const auto cq = shape.coords_of(q);
    for (int v : matrix::group_members(shape, cq, plan.axes))
      if (!region(P, cq, C, shape.coords_of(v), r)) return false;
  }
  red.group = group_of(mesh, plan.axes);
  red.blocks.assign(red.group.members.size(), {});
  for (std::size_t v = 0; v < red.blocks.size(); ++v) {
    (void)region(P, mesh.coords(), C, shape.coords_of(red.group.members[v]), red.blocks[v]);
    red.widest = std::max(red.widest, red.blocks[v].size());
  }
  return true;
}

/// C <- beta C + the group's sum of products, reduce-scattered: `buf` holds two blocks
/// (2 x Reduction::widest).
template <Scalar T, class Product>
void fused_reduce_scatter(DistMatrix<T>& C, const Reduction& red, T beta, T* buf, Timers& t,
                          Product&& product) {
  const int n = static_cast<int>(red.blocks.size()), me = red.group.me;
  auto block = [&](int b) -> const Region& {
    return red.blocks[static_cast<std::size_t>(((b % n) + n) % n)];
  };
  auto compute = [&](const Region& r, T* out, T b) {  // (product times its GEMMs itself)
    product(r.i0, r.i1, r.j0, r.j1, out, std::max<index_t>(r.i1 - r.i0, 1), b);
  };
  T* slot[2] = {buf, buf + red.widest};
  T* out = slot[1];
  const comm::WireScope sums(Wire::F32);  // partial sums of C travel as stored
  compute(block(me - 1), out, T(0));      // step 0 sends my own part of block me - 1
  constexpr int kTag = 47;
  comm::ring_reduce_steps(
      red.group.comm, kTag, static_cast<const T*>(out), [&](int b) { return block(b).size(); },
      [&](int s, int) { return slot[s % 2]; },
      [&](comm::Requests& q) { t.timed(&Timers::comm, [&] { q.wait(); }); },
      [&](int b, T* in, bool last) -> const T* {
        if (!last) {  // add my part of that block, send the sum on
          compute(block(b), in, T(1));
          return in;
        }
        // `in` is the others' sum of my block: C = beta C + in + my part.
        const Region& r = block(b);
        T* c = C.data() + r.ci + r.cj * C.ld();
        blas::scale(r.i1 - r.i0, r.j1 - r.j0, beta, c, C.ld());
        add_block(in, std::max<index_t>(r.i1 - r.i0, 1), r.i1 - r.i0, r.j1 - r.j0, c, C.ld());
        compute(r, c, T(1));
        return nullptr;
      });
}

/// C <- beta C + the group's sum of products, all-reduced (every member needs the same
/// region); `buf` holds the region unless it is computed into C itself (beta = 0, C's whole
/// tile, stored contiguously: then `buf` may be null).
template <Scalar T>
bool reduce_in_place(const DistMatrix<T>& C, const Reduction& red, T beta) {
  const Region& r = red.blocks[static_cast<std::size_t>(red.group.me)];
  return beta == T(0) && r.ci == 0 && r.cj == 0 && r.i1 - r.i0 == C.local_rows() &&
         r.j1 - r.j0 == C.local_cols() && C.ld() == std::max<index_t>(C.local_rows(), 1);
}
template <Scalar T, class Product>
void all_reduce(DistMatrix<T>& C, const Reduction& red, T beta, T* buf, Timers& t,
                Product&& product) {
  const Region& r = red.blocks[static_cast<std::size_t>(red.group.me)];
  const bool in_place = reduce_in_place(C, red, beta);
  T* out = in_place ? C.data() : buf;
  const index_t ld = std::max<index_t>(r.i1 - r.i0, 1);
  product(r.i0, r.i1, r.j0, r.j1, out, ld, T(0));  // (times its GEMMs itself)
  t.timed(&Timers::comm, [&] { comm::allreduce_sum(out, r.size(), red.group.comm); });
  if (in_place) return;
  T* c = C.data() + r.ci + r.cj * C.ld();
  blas::scale(r.i1 - r.i0, r.j1 - r.j0, beta, c, C.ld());
  add_block(out, ld, r.i1 - r.i0, r.j1 - r.j0, c, C.ld());
}

}  // namespace shardmm::algo::sharded
