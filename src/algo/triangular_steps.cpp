// trsm / trmm, the step loop (algo/triangular.hpp): blocked, right-looking, B updated in place.
//
// Left (op(A) B): B's rows are split over the axis group R, its columns over S. P = op(A) with
// B's row map and all m columns on every rank (the front end moved it there once). The steps
// walk B's rows in blocks that one process of R holds (one block of B's row map, at most
// `widest` rows). Per step K = rows [k0, k1), owned by R-coordinate r:
//   owners   (the ranks with R-coordinate r: one per S-coordinate and replica)
//            trsm: X_K = op(A)_KK^-1 B_K in place (local ?trsm on P's diagonal block), then
//                  X_K is packed into the step buffer (w x n_loc, workspace slot Panel0);
//            trmm: B_K is packed first (the original rows), then B_K = op(A)_KK B_K in place;
//   moves    the buffer, from r to every rank of R (axis_comm(R)): w * n_loc words per rank;
//   everyone B_T -/+= op(A)_TK * buffer, one local GEMM, where T are this rank's rows that
//            column block K of op(A) reaches off the diagonal (below K for lower, above for
//            upper; P's rows T, columns K are there).
// Order: a solve walks towards the rows it updates (lower: top down), a product away from
// them (lower: bottom up), so every update reads rows not yet changed by their own step.
// Right (B op(A)) is the same with rows and columns exchanged: P has all n rows and B's column
// map, the buffer is m_loc x w and goes along S.
// Words per rank: the step buffers, m n_loc (1 - 1/|R|) (Left), plus P's move (front end).
// No step allocates: one pooled buffer of the widest step.
#include <algorithm>
#include <utility>
#include <vector>

#include "algo/algo.hpp"
#include "algo/triangular.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "core/instantiate.hpp"
#include "memory/workspace.hpp"

namespace shardmm::algo {
namespace {

// The loop's view of one side: local extent along the dimension op(A) acts on (`along`) and
// across it, the global index of each local position along it, and the communicator over
// the axis group that splits it.
template <Scalar T>
struct TriangularSide {
  TriangularSide(const TriangularPlan& p, const DistMatrix<T>& a, DistMatrix<T>& b, int d)
      : plan(p), P(a), B(b), dim(d) {}
  const TriangularPlan& plan;
  const DistMatrix<T>& P;
  DistMatrix<T>& B;
  int dim = 0;  // 0: Left (B's rows), 1: Right (B's columns)
  index_t along = 0, across = 0;
  std::vector<index_t> glob;
  MPI_Comm comm = MPI_COMM_NULL;
  int me = 0;  // this rank's coordinate in the axis group
};

// B's block [k0, k0 + w) along the dimension, at local position l0: its address and strides.
template <Scalar T>
T* b_block(TriangularSide<T>& s, index_t l0) {
  return s.dim == 0 ? s.B.data() + l0 : s.B.data() + l0 * s.B.ld();
}

// op(A)'s elements (rows g0.., this rank's positions l0..) in P: Left rows are local, columns
// global; Right rows are global, columns local.
template <Scalar T>
const T* p_block(const TriangularSide<T>& s, index_t l0, index_t g0) {
  return s.dim == 0 ? s.P.data() + l0 + g0 * s.P.ld() : s.P.data() + g0 + l0 * s.P.ld();
}

// Copies B's block (w positions from l0) into buf (Left: w x across, ld w; Right:
// across x w, ld across) or back.
template <Scalar T>
void pack_block(TriangularSide<T>& s, index_t l0, index_t w, T* buf) {
  const index_t ldb = s.B.ld();
  const T* b = b_block(s, l0);
  if (s.dim == 0) {
    for (index_t j = 0; j < s.across; ++j) std::copy_n(b + j * ldb, w, buf + j * w);
  } else {
    for (index_t j = 0; j < w; ++j) std::copy_n(b + j * ldb, s.across, buf + j * s.across);
  }
}

// The owners' part of a step: the diagonal block's solve or product on B's block, the buffer
// filled with what the others need (the solved block, or the block as it was).
template <Scalar T>
void diagonal_step(TriangularSide<T>& s, const TriangularStep& k, T* buf) {
  const index_t w = k.end - k.begin;
  const index_t l0 = std::lower_bound(s.glob.begin(), s.glob.end(), k.begin) - s.glob.begin();
  const TriangularPlan& p = s.plan;
  const bool left = s.dim == 0;
  const index_t m = left ? w : s.across, n = left ? s.across : w;
  if (!p.solve) pack_block(s, l0, w, buf);
  if (p.solve)
    blas::trsm(left, p.lower, Op::N, p.unit, m, n, p_block(s, l0, k.begin), s.P.ld(),
               b_block(s, l0), s.B.ld());
  else
    blas::trmm(left, p.lower, Op::N, p.unit, m, n, p_block(s, l0, k.begin), s.P.ld(),
               b_block(s, l0), s.B.ld());
  if (p.solve) pack_block(s, l0, w, buf);
}

// This rank's positions that column (Left) / row (Right) block K of op(A) reaches off the
// diagonal: after K (lower Left, upper Right) or before it.
template <Scalar T>
std::pair<index_t, index_t> targets(const TriangularSide<T>& s, const TriangularStep& k) {
  const bool after = s.dim == 0 ? s.plan.lower : !s.plan.lower;
  const auto at = [&](auto it) { return static_cast<index_t>(it - s.glob.begin()); };
  if (after) return {at(std::lower_bound(s.glob.begin(), s.glob.end(), k.end)), s.along};
  return {0, at(std::lower_bound(s.glob.begin(), s.glob.end(), k.begin))};
}

// B_T -= (solve) or += (product) the step's contribution, one local GEMM.
template <Scalar T>
void update_step(TriangularSide<T>& s, const TriangularStep& k, const T* buf) {
  const auto [t0, t1] = targets(s, k);
  const index_t w = k.end - k.begin, ldp = s.P.ld();
  const T sign = s.plan.solve ? T(-1) : T(1);
  if (t1 <= t0 || s.across == 0) return;
  if (s.dim == 0)
    blas::gemm(Op::N, Op::N, t1 - t0, s.across, w, sign, p_block(s, t0, k.begin), ldp, buf, w, T(1),
               b_block(s, t0), s.B.ld());
  else
    blas::gemm(Op::N, Op::N, s.across, t1 - t0, w, sign, buf, std::max<index_t>(s.across, 1),
               p_block(s, t0, k.begin), ldp, T(1), b_block(s, t0), s.B.ld());
}

}  // namespace

std::vector<TriangularStep> triangular_steps(const DimMap& map, index_t widest) {
  std::vector<TriangularStep> steps;
  const index_t first = map.first_block();
  for (index_t g = 0; g < map.extent;) {
    index_t end = map.extent;
    if (map.nprocs > 1) end = g < first ? first : first + ((g - first) / map.nb + 1) * map.nb;
    end = std::min({end, map.extent, g + std::max<index_t>(widest, 1)});
    steps.push_back({g, end, map.nprocs > 1 ? map.owner(g) : 0});
    g = end;
  }
  return steps;
}

template <Scalar T>
void triangular_steps_run(const TriangularPlan& plan, const DistMatrix<T>& P, DistMatrix<T>& B) {
  const int dim = plan.left ? 0 : 1;
  TriangularSide<T> s(plan, P, B, dim);
  s.along = dim == 0 ? B.local_rows() : B.local_cols();
  s.across = dim == 0 ? B.local_cols() : B.local_rows();
  for (index_t i = 0; i < s.along; ++i)
    s.glob.push_back(dim == 0 ? B.global_row(i) : B.global_col(i));
  const Layout& L = B.layout();
  s.comm = B.mesh().axis_comm(axis_names(L.mesh(), L.dim_axes(dim)));
  s.me = L.dim_coord(dim, B.mesh().coords());
  std::vector<TriangularStep> steps = triangular_steps(L.map(dim), plan.widest);
  const bool after = dim == 0 ? plan.lower : !plan.lower;
  if (plan.solve != after) std::reverse(steps.begin(), steps.end());
  index_t widest = 1;
  for (const TriangularStep& k : steps) widest = std::max(widest, k.end - k.begin);
  T* buf = memory::get<T>(memory::Slot::Panel0, widest * std::max<index_t>(s.across, 1));
  for (const TriangularStep& k : steps) {
    if (k.owner == s.me) diagonal_step(s, k, buf);
    comm::Requests reqs;
    comm::ibcast(buf, (k.end - k.begin) * s.across, k.owner, s.comm, reqs);
    reqs.wait();
    update_step(s, k, buf);
  }
}

#define SHARDMM_INSTANTIATE(T)                                                       \
  template void triangular_steps_run<T>(const TriangularPlan&, const DistMatrix<T>&, \
                                        DistMatrix<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
