#include "algo/sharded_steps.hpp"

#include <algorithm>
#include <optional>

#include "algo/algo.hpp"
#include "algo/pack.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/redistribute.hpp"
#include "core/instantiate.hpp"

namespace shardmm::algo::sharded {
namespace {

DimSpec block_dim(const std::string& label, const MeshShape& mesh, const Axes& axes) {
  if (axes.empty()) return DimSpec{label, DimSpec::Kind::Replicated, {}, 0, 0};
  return DimSpec{label, DimSpec::Kind::Block, axis_names(mesh, axes), 0, 0};
}

int group_size(const MeshShape& mesh, const Axes& axes) {
  int s = 1;
  for (int a : axes) s *= mesh.sizes[a];
  return s;
}

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

bool intersects(const Axes& a, const Axes& b) {
  return std::any_of(a.begin(), a.end(), [&](int x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

template <Scalar T>
DistMatrix<T> allgather_dim(const DistMatrix<T>& X, int dim, memory::Slot slot) {
  const Layout& L = X.layout();
  const MeshShape& mesh = L.mesh();
  ShardingSpec s = L.spec();
  s.dims[dim] = DimSpec{s.dims[dim].label, DimSpec::Kind::Replicated, {}, 0, 0};
  std::optional<DistMatrix<T>> G;
  const DimMap& map = L.map(dim);
  const int g = map.nprocs;
  const index_t other = dim == 0 ? X.local_cols() : X.local_rows();
  std::vector<std::int64_t> counts(g), displs(g);
  for (int c = 0; c < g; ++c) {
    counts[c] = map.local_extent(c) * other;
    displs[c] = c == 0 ? 0 : displs[c - 1] + counts[c - 1];
  }
  // Gather into piece order (piece c = coordinate c's tile, packed), then place.
  T* pieces = nullptr;
  prologue(X.mesh().comm(), [&] {  // both from the pool: a repeated call allocates nothing
    G.emplace(matrix::pooled<T>(X.mesh(), Layout(mesh, L.rows(), L.cols(), s), slot));
    pieces = memory::get<T>(memory::Slot::Pieces, displs[g - 1] + counts[g - 1]);
  });
  const int me = L.dim_coord(dim, X.mesh().coords());
  copy_block(X.data(), X.ld(), X.local_rows(), X.local_cols(), pieces + displs[me], X.local_rows());
  comm::allgatherv(pieces, counts, displs, X.mesh().axis_comm(axis_names(mesh, L.dim_axes(dim))));
  for (int c = 0; c < g; ++c) {
    const index_t ext = map.local_extent(c), off = ext > 0 ? map.to_global(0, c) : 0;
    const index_t rows = dim == 0 ? ext : G->local_rows(), cols = dim == 0 ? G->local_cols() : ext;
    T* dst = dim == 0 ? G->data() + off : G->data() + off * G->ld();
    copy_block(pieces + displs[c], rows, rows, cols, dst, G->ld());
  }
  return std::move(*G);
}

double reduce_words(const Layout& C, index_t m, index_t n, const Axes& I, const Axes& J,
                    const Axes& K) {
  const MeshShape& mesh = C.mesh();
  const double part = double(m) / group_size(mesh, I) * double(n) / group_size(mesh, J);
  const double u = group_size(mesh, K);
  if (C.unreduced_axes() == K) return 0;
  Axes rows = I, cols = J;
  rows.insert(rows.end(), K.begin(), K.end());
  cols.insert(cols.end(), K.begin(), K.end());
  const bool rs = C.dim_axes(0) == rows || C.dim_axes(1) == cols;
  return part * (u - 1) / u * (rs ? 1 : 2);
}

template <Scalar T>
Layout product_layout(const DistMatrix<T>& A, Op opA, const DistMatrix<T>& B, Op opB,
                      const MeshShape& mesh) {
  const int da = stored_dim(opA, 1), db = stored_dim(opB, 0);
  const Axes& ka = A.layout().dim_axes(da);
  ShardingSpec s;
  s.dims[0] = block_dim("I", mesh, A.layout().dim_axes(1 - da));
  s.dims[1] = block_dim("J", mesh, B.layout().dim_axes(1 - db));
  s.unreduced = axis_names(mesh, ka.empty() ? B.layout().dim_axes(db) : ka);
  const index_t m = A.layout().map(1 - da).extent, n = B.layout().map(1 - db).extent;
  return Layout(mesh, m, n, s);
}

template <Scalar T>
void local_multiply(Op opA, Op opB, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B,
                    T beta, DistMatrix<T>& C) {
  const int da = stored_dim(opA, 1), db = stored_dim(opB, 0);
  const DimMap& ka = A.layout().map(da);
  const DimMap& kb = B.layout().map(db);
  const auto& coords = C.mesh().coords();
  const T* a = A.data();
  const T* b = B.data();
  index_t k = da == 1 ? A.local_cols() : A.local_rows();
  if (ka.nprocs > 1 && kb.nprocs == 1) {  // slice B to A's k range
    const index_t k0 = k > 0 ? ka.to_global(0, A.layout().dim_coord(da, coords)) : 0;
    b += db == 0 ? k0 : k0 * B.ld();
  } else if (kb.nprocs > 1 && ka.nprocs == 1) {  // slice A to B's k range
    k = db == 0 ? B.local_rows() : B.local_cols();
    const index_t k0 = k > 0 ? kb.to_global(0, B.layout().dim_coord(db, coords)) : 0;
    a += da == 1 ? k0 * A.ld() : k0;
  }
  blas::gemm(opA, opB, C.local_rows(), C.local_cols(), k, alpha, a, A.ld(), b, B.ld(), beta,
             C.data(), C.ld());
}

template <Scalar T>
void finish(DistMatrix<T>& P, T beta, DistMatrix<T>& C) {
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
      for (index_t j = c0; j < c0 + nc; ++j) out = std::copy_n(&P.local(r0, j), nr, out);
    }
    comm::reduce_scatter(send, mine, counts, C.mesh().axis_comm(axis_names(LP.mesh(), U)));
    blas::scale(C.local_rows(), C.local_cols(), beta, C.data(), C.ld());
    for (index_t j = 0; j < C.local_cols(); ++j)
      for (index_t i = 0; i < C.local_rows(); ++i) C.local(i, j) += mine[i + j * C.local_rows()];
    return;
  }
  if (LP.is_unreduced() && LP.unreduced_axes() != C.layout().unreduced_axes()) {
    // AllReduce over U: every member then holds the sum; the U axes become replica axes.
    comm::allreduce_sum(P.data(), P.ld() * P.local_cols(),
                        C.mesh().axis_comm(axis_names(LP.mesh(), LP.unreduced_axes())));
    ShardingSpec s = LP.spec();
    s.unreduced.clear();
    const auto summed = DistMatrix<T>::view(P.mesh(), Layout(LP.mesh(), LP.rows(), LP.cols(), s),
                                            P.data(), P.ld());
    redistribute(summed, C, T(1), beta);
    return;
  }
  redistribute(P, C, T(1), beta);
}

#define SHARDMM_INSTANTIATE(T)                                                                 \
  template DistMatrix<T> allgather_dim<T>(const DistMatrix<T>&, int, memory::Slot);                        \
  template Layout product_layout<T>(const DistMatrix<T>&, Op, const DistMatrix<T>&, Op,       \
                                    const MeshShape&);                                        \
  template void local_multiply<T>(Op, Op, T, const DistMatrix<T>&, const DistMatrix<T>&, T,   \
                                  DistMatrix<T>&);                                            \
  template void finish<T>(DistMatrix<T>&, T, DistMatrix<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo::sharded
