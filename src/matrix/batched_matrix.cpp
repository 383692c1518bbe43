// BatchedMatrix storage, slices, fill, and root gather/scatter (through comm::alltoallv with
// only the root receiving / sending, as DistMatrix's). A rank's batch elements are
// consecutive tiles; each is a DistMatrix of the slice layout on the slice mesh.
#include <algorithm>

#include "comm/exchange.hpp"
#include "comm/mpi_check.hpp"
#include "comm/wait.hpp"
#include "core/instantiate.hpp"
#include "shardmm/batched.hpp"
#include "shardmm/error.hpp"
#include "trace/call.hpp"

namespace shardmm {
namespace {

// Visits every element the mesh cell `coords` holds, in storage order (batch, column, row),
// with its local and global indices: f(b_loc, i_loc, j_loc, b_glob, i_glob, j_glob).
template <class F>
void for_each_batched(const BatchedLayout& L, const std::vector<int>& coords, F&& f) {
  const Layout& S = L.slice();
  const auto sc = L.slice_coords(coords);
  const int pb = L.batch_coord(coords), pr = S.dim_coord(0, sc), pc = S.dim_coord(1, sc);
  const index_t lb = L.batch_map().local_extent(pb);
  const index_t mr = S.row_map().local_extent(pr), nc = S.col_map().local_extent(pc);
  for (index_t b = 0; b < lb; ++b) {
    const index_t bg = L.batch_map().to_global(b, pb);
    for (index_t j = 0; j < nc; ++j) {
      const index_t jg = S.col_map().to_global(j, pc);
      for (index_t i = 0; i < mr; ++i) f(b, i, j, bg, S.row_map().to_global(i, pr), jg);
    }
  }
}

// The replica that speaks for its elements (coordinate 0 on the slice's replica axes).
bool speaks(const BatchedLayout& L, const std::vector<int>& coords) {
  return L.slice().is_primary(L.slice_coords(coords));
}

index_t held_elements(const BatchedLayout& L, const std::vector<int>& coords) {
  const auto sc = L.slice_coords(coords);
  return L.local_batch(coords) * L.slice().local_rows(sc) * L.slice().local_cols(sc);
}

}  // namespace

template <Scalar T>
BatchedMatrix<T>::BatchedMatrix(Mesh mesh, BatchedLayout layout)
    : BatchedMatrix(std::move(mesh), std::move(layout), nullptr, 0, 0) {
  is_view_ = false;
  view_ = nullptr;
  storage_.assign(static_cast<std::size_t>(local_batch_ * stride_), T(0));
}

template <Scalar T>
BatchedMatrix<T>::BatchedMatrix(Mesh mesh, BatchedLayout layout, T* data, index_t ld,
                                index_t stride)
    : mesh_(std::move(mesh)), slice_mesh_(mesh_), layout_(std::move(layout)) {
  if (!(layout_.mesh() == mesh_.shape()))
    throw InvalidArgument("batched layout " + layout_.to_string() +
                          " is not on this matrix's mesh " + mesh_.shape().to_string());
  if (mesh_.active()) {
    const auto sc = layout_.slice_coords(mesh_.coords());
    local_batch_ = layout_.local_batch(mesh_.coords());
    local_rows_ = layout_.slice().local_rows(sc);
    local_cols_ = layout_.slice().local_cols(sc);
    slice_mesh_ = mesh_.slice(layout_.slice_axes());  // collective on first use: made here
  }
  const bool owning = data == nullptr && ld == 0 && stride == 0;
  if (!owning && ld < std::max<index_t>(1, local_rows_))
    throw InvalidArgument("BatchedMatrix::view: leading dimension " + std::to_string(ld) +
                          " is below the local row count " + std::to_string(local_rows_) + " of " +
                          layout_.to_string());
  ld_ = owning ? std::max<index_t>(1, local_rows_) : ld;
  const index_t tile = ld_ * local_cols_;
  if (!owning && stride < tile)
    throw InvalidArgument("BatchedMatrix::view: stride " + std::to_string(stride) +
                          " is below the tile size " + std::to_string(tile) + " of " +
                          layout_.to_string());
  stride_ = owning ? tile : stride;
  if (!owning && data == nullptr && local_batch_ * tile > 0)
    throw InvalidArgument("BatchedMatrix::view: null data for non-empty local tiles");
  view_ = data;
  is_view_ = true;
}

template <Scalar T>
BatchedMatrix<T> BatchedMatrix<T>::view(Mesh mesh, BatchedLayout layout, T* data, index_t ld,
                                        index_t stride) {
  if (ld < 1) throw InvalidArgument("BatchedMatrix::view: leading dimension must be >= 1");
  return BatchedMatrix(std::move(mesh), std::move(layout), data, ld, stride);
}

template <Scalar T>
index_t BatchedMatrix<T>::global_batch(index_t b_loc) const {
  return layout_.batch_map().to_global(b_loc, layout_.batch_coord(mesh_.coords()));
}

template <Scalar T>
Mesh BatchedMatrix<T>::slice_mesh() const {
  if (!mesh_.active()) throw InvalidArgument("slice_mesh on a rank outside the mesh");
  return slice_mesh_;
}

template <Scalar T>
DistMatrix<T> BatchedMatrix<T>::slice(index_t b_loc) {
  if (b_loc < 0 || b_loc >= local_batch_)
    throw InvalidArgument("slice " + std::to_string(b_loc) + " of " + std::to_string(local_batch_) +
                          " local batch elements of " + layout_.to_string());
  return DistMatrix<T>::view(slice_mesh_, layout_.slice(), data() + b_loc * stride_, ld_);
}

template <Scalar T>
const DistMatrix<T> BatchedMatrix<T>::slice(index_t b_loc) const {
  return const_cast<BatchedMatrix*>(this)->slice(b_loc);  // NOLINT: a const view
}

template <Scalar T>
void BatchedMatrix<T>::fill(const std::function<T(index_t, index_t, index_t)>& f) {
  if (!mesh_.active()) return;
  T* d = data();
  for_each_batched(layout_, mesh_.coords(),
                   [&](index_t b, index_t i, index_t j, index_t bg, index_t ig, index_t jg) {
                     d[b * stride_ + i + j * ld_] = f(bg, ig, jg);
                   });
}

template <Scalar T>
std::vector<T> BatchedMatrix<T>::gather(int root) const {
  if (!mesh_.active()) return {};
  const comm::WaitScope waiting;             // SHARDMM_WAIT
  trace::Call call(mesh_.comm(), "gather");  // watched: a rank that does not come is named
  const int P = mesh_.size(), me = mesh_.rank();
  const MeshShape& shape = layout_.mesh();
  std::vector<T> send;  // every speaking rank sends its tiles, packed, to root
  if (speaks(layout_, mesh_.coords())) {
    const T* d = data();
    for_each_batched(layout_, mesh_.coords(),
                     [&](index_t b, index_t i, index_t j, index_t, index_t, index_t) {
                       send.push_back(d[b * stride_ + i + j * ld_]);
                     });
  }
  std::vector<std::int64_t> sc(P, 0), sd(P, 0), rc(P, 0), rd(P, 0);
  sc[root] = static_cast<std::int64_t>(send.size());
  std::int64_t total = 0;
  if (me == root)
    for (int r = 0; r < P; ++r) {
      const auto c = shape.coords_of(r);
      rd[r] = total;
      rc[r] = speaks(layout_, c) ? held_elements(layout_, c) : 0;
      total += rc[r];
    }
  std::vector<T> recv(static_cast<std::size_t>(total));
  comm::alltoallv(mesh_.comm(), send.data(), sc, sd, recv.data(), rc, rd);
  if (me != root) return {};
  const index_t m = rows(), mn = rows() * cols();
  std::vector<T> global(static_cast<std::size_t>(batch() * mn), T(0));
  for (int r = 0; r < P; ++r) {
    if (rc[r] == 0) continue;
    const T* piece = recv.data() + rd[r];
    for_each_batched(layout_, shape.coords_of(r),
                     [&](index_t, index_t, index_t, index_t bg, index_t ig, index_t jg) {
                       global[static_cast<std::size_t>(bg * mn + ig + jg * m)] = *piece++;
                     });
  }
  return global;
}

template <Scalar T>
void BatchedMatrix<T>::scatter(const std::vector<T>& global, int root) {
  if (!mesh_.active()) return;
  const comm::WaitScope waiting;              // SHARDMM_WAIT
  trace::Call call(mesh_.comm(), "scatter");  // watched: a rank that does not come is named
  const int P = mesh_.size(), me = mesh_.rank();
  const MeshShape& shape = layout_.mesh();
  const index_t m = rows(), mn = rows() * cols();
  // Only the root knows its buffer: share its size so that every rank throws alike.
  std::int64_t have = me == root ? static_cast<std::int64_t>(global.size()) : 0;
  SHARDMM_MPI(MPI_Bcast(&have, 1, MPI_INT64_T, root, mesh_.comm()));
  if (have != batch() * mn)
    throw InvalidArgument("scatter: root buffer has " + std::to_string(have) + " elements, batch " +
                          layout_.to_string() + " needs " + std::to_string(batch() * mn));
  std::vector<std::int64_t> sc(P, 0), sd(P, 0), rc(P, 0), rd(P, 0);
  std::vector<T> send;
  if (me == root)
    for (int r = 0; r < P; ++r) {  // every rank gets its tiles, replicas included
      sd[r] = static_cast<std::int64_t>(send.size());
      for_each_batched(layout_, shape.coords_of(r),
                       [&](index_t, index_t, index_t, index_t bg, index_t ig, index_t jg) {
                         send.push_back(global[static_cast<std::size_t>(bg * mn + ig + jg * m)]);
                       });
      sc[r] = static_cast<std::int64_t>(send.size()) - sd[r];
    }
  rc[root] = held_elements(layout_, mesh_.coords());
  std::vector<T> recv(static_cast<std::size_t>(rc[root]));
  comm::alltoallv(mesh_.comm(), send.data(), sc, sd, recv.data(), rc, rd);
  const T* piece = recv.data();
  T* d = data();
  for_each_batched(layout_, mesh_.coords(),
                   [&](index_t b, index_t i, index_t j, index_t, index_t, index_t) {
                     d[b * stride_ + i + j * ld_] = *piece++;
                   });
}

#define SHARDMM_INSTANTIATE_BATCHED(T) template class BatchedMatrix<T>;
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE_BATCHED)
SHARDMM_FOR_EACH_HALF(SHARDMM_INSTANTIATE_BATCHED)
#undef SHARDMM_INSTANTIATE_BATCHED

}  // namespace shardmm
