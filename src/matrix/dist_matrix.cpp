// DistMatrix storage, fill, and root gather/scatter (through comm::alltoallv with only the
// root receiving / sending, so 64-bit sizes are split like every other exchange).
#include "shardmm/dist_matrix.hpp"

#include <algorithm>
#include <cstdlib>

#include "comm/exchange.hpp"
#include "comm/mpi_check.hpp"
#include "comm/wait.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"
#include "trace/call.hpp"

namespace shardmm {

void* detail::allocate_tile(std::size_t bytes) { return memory::allocate(bytes).ptr; }
void detail::free_tile(void* p) noexcept { std::free(p); }  // NOLINT: memory::allocate's memory
namespace {

void check_mesh(const Mesh& mesh, const Layout& layout) {
  if (!(layout.mesh() == mesh.shape()))
    throw InvalidArgument("layout " + layout.to_string() + " is not on this matrix's mesh " +
                          mesh.shape().to_string());
}

// Visits every local element of the cell `coords` in local column-major order with its
// global indices: f(i_loc, j_loc, i_glob, j_glob).
template <class F>
void for_each_local(const Layout& L, const std::vector<int>& coords, F&& f) {
  const int pr = L.dim_coord(0, coords), pc = L.dim_coord(1, coords);
  const index_t mr = L.row_map().local_extent(pr), nc = L.col_map().local_extent(pc);
  for (index_t j = 0; j < nc; ++j) {
    const index_t jg = L.col_map().to_global(j, pc);
    for (index_t i = 0; i < mr; ++i) f(i, j, L.row_map().to_global(i, pr), jg);
  }
}

// Contributes to the logical value: the primary replica, and every cell along unreduced axes.
bool contributes(const Layout& L, const std::vector<int>& coords) { return L.is_primary(coords); }

// Holds values in fill()/scatter(): primary along unreduced axes too (the others hold zeros).
bool holds_value(const Layout& L, const std::vector<int>& coords) {
  for (int a : L.unreduced_axes())
    if (coords[a] != 0) return false;
  return true;
}

}  // namespace

template <Scalar T>
DistMatrix<T>::DistMatrix(Mesh mesh, Layout layout, index_t ld) : mesh_(std::move(mesh)) {
  check_mesh(mesh_, layout);
  bind(std::move(layout), ld);
  storage_.assign(static_cast<std::size_t>(ld_ * local_cols_), T(0));
}

template <Scalar T>
DistMatrix<T>::DistMatrix(Mesh mesh, Layout layout, T* data, index_t ld) : mesh_(std::move(mesh)) {
  check_mesh(mesh_, layout);
  bind(std::move(layout), ld);
  if (data == nullptr && local_rows_ * local_cols_ > 0)
    throw InvalidArgument("DistMatrix::view: null data for a non-empty local tile");
  view_ = data;
  is_view_ = true;
}

template <Scalar T>
DistMatrix<T> DistMatrix<T>::view(Mesh mesh, Layout layout, T* data, index_t ld) {
  return DistMatrix(std::move(mesh), std::move(layout), data, ld);
}

template <Scalar T>
void DistMatrix<T>::bind(Layout layout, index_t ld) {
  layout_ = std::move(layout);
  const std::vector<int> none(static_cast<std::size_t>(layout_.mesh().ndims()), 0);
  const auto& c = mesh_.active() ? mesh_.coords() : none;
  local_rows_ = mesh_.active() ? layout_.local_rows(c) : 0;
  local_cols_ = mesh_.active() ? layout_.local_cols(c) : 0;
  if (ld != 0 && ld < std::max<index_t>(1, local_rows_))
    throw InvalidArgument("leading dimension " + std::to_string(ld) +
                          " is below the local row count " + std::to_string(local_rows_) + " of " +
                          layout_.to_string());
  ld_ = std::max<index_t>({ld, local_rows_, 1});
}

template <Scalar T>
void DistMatrix<T>::reshape(Layout layout) {
  if (is_view()) throw InvalidArgument("reshape of a view");
  check_mesh(mesh_, layout);
  bind(std::move(layout), 0);
  const auto need = static_cast<std::size_t>(ld_ * local_cols_);
  if (storage_.size() < need) storage_.resize(need);
}

template <Scalar T>
index_t DistMatrix<T>::global_row(index_t i_loc) const {
  return layout_.row_map().to_global(i_loc, layout_.dim_coord(0, mesh_.coords()));
}

template <Scalar T>
index_t DistMatrix<T>::global_col(index_t j_loc) const {
  return layout_.col_map().to_global(j_loc, layout_.dim_coord(1, mesh_.coords()));
}

template <Scalar T>
void DistMatrix<T>::fill(const std::function<T(index_t, index_t)>& f) {
  if (!mesh_.active()) return;
  const bool holds = holds_value(layout_, mesh_.coords());
  for_each_local(layout_, mesh_.coords(), [&](index_t i, index_t j, index_t ig, index_t jg) {
    local(i, j) = holds ? f(ig, jg) : T(0);
  });
}

template <Scalar T>
void DistMatrix<T>::set_zero() {
  for (index_t j = 0; j < local_cols_; ++j) std::fill_n(data() + j * ld_, local_rows_, T(0));
}

template <Scalar T>
std::vector<T> DistMatrix<T>::gather(int root) const {
  if (!mesh_.active()) return {};
  const comm::WaitScope waiting;             // SHARDMM_WAIT
  trace::Call call(mesh_.comm(), "gather");  // watched: a rank that does not come is named
  const int P = mesh_.size(), me = mesh_.rank();
  const MeshShape& shape = layout_.mesh();
  // Every contributing cell sends its whole tile (packed) to root.
  std::vector<T> send;
  if (contributes(layout_, mesh_.coords())) {
    send.reserve(static_cast<std::size_t>(local_rows_ * local_cols_));
    for (index_t j = 0; j < local_cols_; ++j)
      send.insert(send.end(), data() + j * ld_, data() + j * ld_ + local_rows_);
  }
  std::vector<std::int64_t> sc(P, 0), sd(P, 0), rc(P, 0), rd(P, 0);
  sc[root] = static_cast<std::int64_t>(send.size());
  std::int64_t total = 0;
  if (me == root)
    for (int r = 0; r < P; ++r) {
      const auto c = shape.coords_of(r);
      rd[r] = total;
      rc[r] = contributes(layout_, c) ? layout_.local_rows(c) * layout_.local_cols(c) : 0;
      total += rc[r];
    }
  std::vector<T> recv(static_cast<std::size_t>(total));
  comm::alltoallv(mesh_.comm(), send.data(), sc, sd, recv.data(), rc, rd);
  if (me != root) return {};
  std::vector<T> global(static_cast<std::size_t>(rows() * cols()), T(0));
  for (int r = 0; r < P; ++r) {
    if (rc[r] == 0) continue;
    const T* piece = recv.data() + rd[r];
    const index_t mr = layout_.local_rows(shape.coords_of(r));
    for_each_local(layout_, shape.coords_of(r), [&](index_t i, index_t j, index_t ig, index_t jg) {
      global[static_cast<std::size_t>(ig + jg * rows())] += piece[i + j * mr];
    });
  }
  return global;
}

template <Scalar T>
void DistMatrix<T>::scatter(const std::vector<T>& global, int root) {
  if (!mesh_.active()) return;
  const comm::WaitScope waiting;              // SHARDMM_WAIT
  trace::Call call(mesh_.comm(), "scatter");  // watched: a rank that does not come is named
  const int P = mesh_.size(), me = mesh_.rank();
  const MeshShape& shape = layout_.mesh();
  std::vector<std::int64_t> sc(P, 0), sd(P, 0), rc(P, 0), rd(P, 0);
  std::vector<T> send;
  // Only the root knows its buffer: share its size so that every rank throws alike.
  std::int64_t have = me == root ? static_cast<std::int64_t>(global.size()) : 0;
  SHARDMM_MPI(MPI_Bcast(&have, 1, MPI_INT64_T, root, mesh_.comm()));
  if (have != rows() * cols())
    throw InvalidArgument("scatter: root buffer has " + std::to_string(have) +
                          " elements, matrix " + layout_.to_string() + " needs " +
                          std::to_string(rows() * cols()));
  if (me == root) {
    for (int r = 0; r < P; ++r) {
      const auto c = shape.coords_of(r);
      sd[r] = static_cast<std::int64_t>(send.size());
      const bool holds = holds_value(layout_, c);
      for_each_local(layout_, c, [&](index_t, index_t, index_t ig, index_t jg) {
        send.push_back(holds ? global[static_cast<std::size_t>(ig + jg * rows())] : T(0));
      });
      sc[r] = static_cast<std::int64_t>(send.size()) - sd[r];
    }
  }
  rc[root] = local_rows_ * local_cols_;
  std::vector<T> recv(static_cast<std::size_t>(rc[root]));
  comm::alltoallv(mesh_.comm(), send.data(), sc, sd, recv.data(), rc, rd);
  for (index_t j = 0; j < local_cols_; ++j)
    std::copy_n(recv.data() + j * local_rows_, local_rows_, data() + j * ld_);
}

template <Scalar T>
T DistMatrix<T>::at(index_t i, index_t j) const {
  if (i < 0 || j < 0 || i >= rows() || j >= cols())
    throw InvalidArgument("at(" + std::to_string(i) + ", " + std::to_string(j) + ") is outside " +
                          layout_.to_string());
  if (!mesh_.active()) return T(0);
  const auto& c = mesh_.coords();
  T mine(0);
  if (contributes(layout_, c) && layout_.owns(c, i, j))
    mine = local(layout_.row_map().to_local(i), layout_.col_map().to_local(j));
  if constexpr (is_half_v<T>) {  // MPI has no 16-bit float: sum in f32, round once
    const float wide = mine;
    float sum = 0;
    SHARDMM_MPI(MPI_Allreduce(&wide, &sum, 1, MPI_FLOAT, MPI_SUM, mesh_.comm()));
    return T(sum);
  } else {
    T sum(0);
    SHARDMM_MPI(MPI_Allreduce(&mine, &sum, 1, comm::mpi_type<T>(), MPI_SUM, mesh_.comm()));
    return sum;
  }
}

template class DistMatrix<float>;
template class DistMatrix<double>;
template class DistMatrix<std::complex<float>>;
template class DistMatrix<std::complex<double>>;
template class DistMatrix<bf16>;
template class DistMatrix<f16>;

}  // namespace shardmm
