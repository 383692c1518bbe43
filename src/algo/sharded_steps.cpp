#include "algo/sharded_steps.hpp"

#include <algorithm>
#include <optional>

#include "algo/algo.hpp"
#include "algo/pack.hpp"
#include "algo/reduce_partials.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "core/instantiate.hpp"
#include "matrix/pooled.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"
#include "shardmm/redistribute.hpp"

namespace shardmm::algo::sharded {
namespace {

DimSpec block_dim(const std::string& label, const MeshShape& mesh, const Axes& axes) {
  if (axes.empty()) return DimSpec{label, DimSpec::Kind::Replicated, {}, 0, 0};
  return DimSpec{label, DimSpec::Kind::Block, axis_names(mesh, axes), 0, 0};
}

}  // namespace

bool intersects(const Axes& a, const Axes& b) {
  return std::any_of(a.begin(), a.end(),
                     [&](int x) { return std::find(b.begin(), b.end(), x) != b.end(); });
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
void local_multiply(Op opA, Op opB, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
                    DistMatrix<T>& C) {
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

#define SHARDMM_INSTANTIATE(T)                                                              \
  template DistMatrix<T> allgather_dim<T>(const DistMatrix<T>&, int, memory::Slot);         \
  template Layout product_layout<T>(const DistMatrix<T>&, Op, const DistMatrix<T>&, Op,     \
                                    const MeshShape&);                                      \
  template void local_multiply<T>(Op, Op, T, const DistMatrix<T>&, const DistMatrix<T>&, T, \
                                  DistMatrix<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo::sharded
