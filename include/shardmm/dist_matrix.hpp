// DistMatrix<T>: a layout on a mesh plus this rank's local tile, stored column-major.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "shardmm/layout.hpp"
#include "shardmm/mesh.hpp"
#include "shardmm/types.hpp"

namespace shardmm {

namespace detail {
/// Owned local tiles from 2 MiB up live in transparent huge pages (2 MiB aligned and
/// madvise'd), smaller ones in 64-byte aligned memory: on these VMs a 4 KiB page costs a fault
/// on first touch and TLB misses in every GEMM that reads it (docs/PERFORMANCE.md).
void* allocate_tile(std::size_t bytes);
void free_tile(void* p) noexcept;

template <class T>
struct TileAllocator {
  using value_type = T;
  TileAllocator() = default;
  template <class U>
  explicit TileAllocator(const TileAllocator<U>& /*other*/) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_tile(n * sizeof(T))); }
  void deallocate(T* p, std::size_t /*n*/) noexcept { free_tile(p); }
  friend bool operator==(const TileAllocator& /*a*/, const TileAllocator& /*b*/) { return true; }
};
}  // namespace detail

template <Scalar T>
class DistMatrix {
 public:
  /// Owning: allocates the local tile (zero-filled), leading dimension = max(1, local rows)
  /// unless `ld` is larger. Throws InvalidArgument when the layout's mesh shape is not the
  /// mesh's shape or ld is too small.
  DistMatrix(Mesh mesh, Layout layout, index_t ld = 0);
  DistMatrix(const Mesh& mesh, index_t m, index_t n, std::string_view spec)
      : DistMatrix(mesh, Layout(mesh.shape(), m, n, spec)) {}
  /// View of caller memory (no copy): `data` holds the local tile with leading dimension `ld`.
  static DistMatrix view(Mesh mesh, Layout layout, T* data, index_t ld);

  [[nodiscard]] const Mesh& mesh() const { return mesh_; }
  [[nodiscard]] const Layout& layout() const { return layout_; }
  [[nodiscard]] index_t rows() const { return layout_.rows(); }
  [[nodiscard]] index_t cols() const { return layout_.cols(); }
  [[nodiscard]] index_t local_rows() const { return local_rows_; }
  [[nodiscard]] index_t local_cols() const { return local_cols_; }
  [[nodiscard]] index_t ld() const { return ld_; }
  [[nodiscard]] T* data() { return is_view_ ? view_ : storage_.data(); }
  [[nodiscard]] const T* data() const { return is_view_ ? view_ : storage_.data(); }
  [[nodiscard]] T& local(index_t i_loc, index_t j_loc) { return data()[i_loc + j_loc * ld_]; }
  [[nodiscard]] const T& local(index_t i_loc, index_t j_loc) const {
    return data()[i_loc + j_loc * ld_];
  }
  [[nodiscard]] bool is_view() const { return is_view_; }
  /// Rebinds to another layout on the same mesh, reusing the storage when it is large enough
  /// (owning matrices only; contents become unspecified).
  void reshape(Layout layout);

  /// Global index of a local row / column of this rank.
  [[nodiscard]] index_t global_row(index_t i_loc) const;
  [[nodiscard]] index_t global_col(index_t j_loc) const;

  /// Sets every local element from f(i_glob, j_glob). No communication. On an unreduced
  /// layout only the cells with coordinate 0 on the unreduced axes get values, the others 0,
  /// so the logical matrix is f.
  void fill(const std::function<T(index_t, index_t)>& f);
  void set_zero();

  /// Collective: the whole matrix, column-major m x n, on `root` (empty elsewhere).
  [[nodiscard]] std::vector<T> gather(int root = 0) const;
  /// Collective: sets the matrix from `global` (column-major m x n) held on `root`.
  void scatter(const std::vector<T>& global, int root = 0);
  /// Collective: the logical value of element (i, j) on every rank (sums unreduced partials).
  [[nodiscard]] T at(index_t i, index_t j) const;

 private:
  DistMatrix(Mesh mesh, Layout layout, T* data, index_t ld);
  void bind(Layout layout, index_t ld);

  Mesh mesh_;
  Layout layout_;
  index_t local_rows_ = 0, local_cols_ = 0, ld_ = 1;
  std::vector<T, detail::TileAllocator<T>> storage_;  // owning case; copies are deep
  T* view_ = nullptr;  // view case: caller memory (null allowed for an empty tile)
  bool is_view_ = false;
};

extern template class DistMatrix<float>;
extern template class DistMatrix<double>;
extern template class DistMatrix<std::complex<float>>;
extern template class DistMatrix<std::complex<double>>;
extern template class DistMatrix<bf16>;
extern template class DistMatrix<f16>;

}  // namespace shardmm
