// The local product over pieces and the gathers of the sharding-rule matmul
// (sharded_steps.hpp). Gathers go over the exchange axes' communicator: all at once with
// comm::allgatherv (MPI_Allgatherv) into one buffer whose pieces are multiplied where they
// landed (no copy into place), or streamed around the ring (the header's stream()).
#include "algo/sharded_steps.hpp"

#include <algorithm>

#include "algo/pack.hpp"
#include "blas/blas.hpp"
#include "core/instantiate.hpp"
#include "matrix/redistribute_detail.hpp"

namespace shardmm::algo::sharded {
namespace {

// A piece's rows and columns in op(X)'s terms: its range of op(X) rows, then of op(X) columns.
template <class T>
std::pair<std::pair<index_t, index_t>, std::pair<index_t, index_t>> ranges(Op op,
                                                                           const Piece<T>& p) {
  if (op == Op::N) return {{p.r0, p.r1}, {p.c0, p.c1}};
  return {{p.c0, p.c1}, {p.r0, p.r1}};
}

// Pointer to op(X)'s element (i, j) (op(X) local indices) inside piece p.
template <class T>
const T* at(Op op, const Piece<T>& p, index_t i, index_t j) {
  return op == Op::N ? p.data + (i - p.r0) + (j - p.c0) * p.ld
                     : p.data + (j - p.r0) + (i - p.c0) * p.ld;
}

}  // namespace

template <Scalar T>
void multiply(Op opA, Op opB, T alpha, const Pieces<T>& A, const Pieces<T>& B, T beta, index_t i0,
              index_t i1, index_t j0, index_t j1, T* out, index_t ld, Started& started) {
  for (const Piece<T>& a : A) {
    const auto [am, ak] = ranges(opA, a);
    const index_t m0 = std::max(am.first, i0), m1 = std::min(am.second, i1);
    if (m0 >= m1) continue;
    for (const Piece<T>& b : B) {
      const auto [bk, bn] = ranges(opB, b);
      const index_t n0 = std::max(bn.first, j0), n1 = std::min(bn.second, j1);
      const index_t k0 = std::max(ak.first, bk.first), k1 = std::min(ak.second, bk.second);
      // No k here at all (k split so that this rank holds none): the block is only scaled.
      const bool no_k = ak.first == ak.second && bk.first == bk.second;
      if (n0 >= n1 || (k0 >= k1 && (!no_k || started.count({m0, n0}) != 0))) continue;
      const bool first = started.insert({m0, n0}).second;
      blas::gemm(opA, opB, m1 - m0, n1 - n0, k1 - k0, alpha, at(opA, a, m0, k0), a.ld,
                 at(opB, b, k0, n0), b.ld, first ? beta : T(1), out + (m0 - i0) + (n0 - j0) * ld,
                 ld);
    }
  }
}

Group group_of(const Mesh& mesh, const std::vector<int>& axes) {
  Group g;
  g.members = matrix::group_members(mesh.shape(), mesh.coords(), axes);
  g.me = static_cast<int>(std::find(g.members.begin(), g.members.end(), mesh.rank()) -
                          g.members.begin());
  g.comm = mesh.axis_comm(axis_names(mesh.shape(), axes));
  return g;
}

bool rectangle(const Layout& from, const std::vector<int>& v_coords, const Layout& to,
               const std::vector<int>& my_coords, Piece<char>& at) {
  const auto b = matrix::detail::overlap(from, v_coords, to, my_coords);
  if (b.rows.size() > 1 || b.cols.size() > 1) return false;
  at = Piece<char>{};  // a piece empty along one dimension keeps its range along the other
  if (!b.rows.empty()) at.r0 = b.rows[0].to, at.r1 = at.r0 + b.nrows;
  if (!b.cols.empty()) at.c0 = b.cols[0].to, at.c1 = at.c0 + b.ncols;
  return true;
}

bool rectangles_everywhere(const Layout& from, const Layout& to, const std::vector<int>& axes) {
  const MeshShape& mesh = from.mesh();
  Piece<char> r;
  for (int q = 0; q < mesh.size(); ++q) {
    const auto cq = mesh.coords_of(q);
    for (int v : matrix::group_members(mesh, cq, axes))
      if (!rectangle(from, mesh.coords_of(v), to, cq, r)) return false;
  }
  return true;
}

double largest_tile(const Layout& L) {
  double most = 0;
  for (int r = 0; r < L.mesh().size(); ++r) {
    const auto c = L.mesh().coords_of(r);
    most = std::max(most, double(L.local_rows(c)) * double(L.local_cols(c)));
  }
  return most;
}

template <Scalar T>
bool plan_gather(const DistMatrix<T>& X, const Layout& to, const matrix::RedistPlan& plan,
                 Gather<T>& g) {
  if (plan.pattern != matrix::Pattern::AllGather ||
      !rectangles_everywhere(X.layout(), to, plan.axes))
    return false;
  g.group = group_of(X.mesh(), plan.axes);
  const std::size_t n = g.group.members.size();
  g.at.assign(n, {});
  g.counts.assign(n, 0), g.displs.assign(n, 0);
  g.total = g.widest = 0;
  const MeshShape& shape = X.layout().mesh();
  for (std::size_t v = 0; v < n; ++v) {
    Piece<char> r;
    (void)rectangle(X.layout(), shape.coords_of(g.group.members[v]), to, X.mesh().coords(), r);
    g.at[v] = {r.r0, r.r1, r.c0, r.c1, nullptr, 1};
    g.counts[v] = (r.r1 - r.r0) * (r.c1 - r.c0);
    g.displs[v] = g.total;
    g.total += g.counts[v];
    g.widest = std::max(g.widest, g.counts[v]);
  }
  return true;
}

template <Scalar T>
const T* own_piece(const DistMatrix<T>& X, const Layout& to, T* buf) {
  const auto b = matrix::detail::overlap(X.layout(), X.mesh().coords(), to, X.mesh().coords());
  if (b.nrows == X.local_rows() && b.ncols == X.local_cols() && X.ld() == X.local_rows())
    return X.data();
  matrix::detail::pack(X.data(), X.ld(), b, buf);
  return buf;
}

template <Scalar T>
Pieces<T> gather_all(const DistMatrix<T>& X, const Layout& to, Gather<T>& g, T* buf) {
  const auto me = static_cast<std::size_t>(g.group.me);
  const auto b = matrix::detail::overlap(X.layout(), X.mesh().coords(), to, X.mesh().coords());
  matrix::detail::pack(X.data(), X.ld(), b, buf + g.displs[me]);  // in place for allgatherv
  comm::allgatherv(buf, g.counts, g.displs, g.group.comm);
  Pieces<T> out(g.at.size());
  for (std::size_t v = 0; v < out.size(); ++v) {
    const auto& r = g.at[v];
    out[v] = {r.r0, r.r1, r.c0, r.c1, buf + g.displs[v], std::max<index_t>(r.r1 - r.r0, 1)};
  }
  return out;
}

#define SHARDMM_INSTANTIATE(T)                                                                  \
  template void multiply<T>(Op, Op, T, const Pieces<T>&, const Pieces<T>&, T, index_t, index_t, \
                            index_t, index_t, T*, index_t, Started&);                           \
  template bool plan_gather<T>(const DistMatrix<T>&, const Layout&, const matrix::RedistPlan&,  \
                               Gather<T>&);                                                     \
  template const T* own_piece<T>(const DistMatrix<T>&, const Layout&, T*);                      \
  template Pieces<T> gather_all<T>(const DistMatrix<T>&, const Layout&, Gather<T>&, T*);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo::sharded
