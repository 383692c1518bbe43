// Batched products: C[b] <- alpha op(A[b]) op(B[b]) + beta C[b] for a batch of equal-shape
// products, the batch being a third layout dimension cut over mesh axes like the others.
//
// Notation (docs/USAGE.md, "Batched products"): the batch comes first, `A[B_X,I,J_Y]`: batch
// cut over axis X (block; `B_X:c` cyclic, `B_X:bc4` block-cyclic), rows replicated, columns
// over Y. The matrix part is today's 2-D notation on the mesh's other axes: the axes the batch
// is cut over cannot appear in it. `A[B,I_X,J_Y]` keeps every batch element on every rank of
// the X x Y grid (the batch cut over no axis).
//
// Storage: this rank's batch elements (those on its coordinate along the batch's axes) are
// consecutive column-major tiles, tile b_loc at data() + b_loc * stride(); each tile is a
// DistMatrix of the slice layout on the slice mesh (the mesh's other axes), slice(b_loc).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "shardmm/dist_matrix.hpp"
#include "shardmm/gemm.hpp"
#include "shardmm/layout.hpp"
#include "shardmm/mesh.hpp"
#include "shardmm/options.hpp"
#include "shardmm/redistribute.hpp"
#include "shardmm/types.hpp"

namespace shardmm {

/// A batched sharding: name[batch, rows, cols]. Independent of shape and mesh.
struct BatchedSpec {
  DimSpec batch;        ///< the batch dimension (label "B" by default)
  ShardingSpec matrix;  ///< rows and columns of every batch element (never unreduced)
  /// Parses "A[B_X,I,J_Y]", "[B,I_XY,J]", "C[B_{dp}:c,I,J_{tp}]". Throws ParseError.
  static BatchedSpec parse(std::string_view text);
  [[nodiscard]] std::string to_string() const;
  bool operator==(const BatchedSpec&) const = default;
};

/// A batched sharding bound to a mesh shape and a shape batch x m x n.
class BatchedLayout {
 public:
  BatchedLayout() = default;
  /// Throws InvalidArgument (unknown axis, an axis used twice, an unreduced matrix part,
  /// negative extents).
  BatchedLayout(MeshShape mesh, index_t batch, index_t m, index_t n, BatchedSpec spec);
  BatchedLayout(MeshShape mesh, index_t batch, index_t m, index_t n, std::string_view spec)
      : BatchedLayout(std::move(mesh), batch, m, n, BatchedSpec::parse(spec)) {}

  [[nodiscard]] const MeshShape& mesh() const { return mesh_; }
  [[nodiscard]] const BatchedSpec& spec() const { return spec_; }
  [[nodiscard]] index_t batch() const { return batch_.extent; }
  [[nodiscard]] index_t rows() const { return slice_.rows(); }
  [[nodiscard]] index_t cols() const { return slice_.cols(); }
  /// The batch dimension's map over the processes of its axes (one process when replicated).
  [[nodiscard]] const DimMap& batch_map() const { return batch_; }
  /// Names of the mesh axes the batch is cut over (first major); empty when replicated.
  [[nodiscard]] const std::vector<std::string>& batch_axes() const { return spec_.batch.axes; }
  /// Names of the other axes, in mesh order: the slice mesh's axes.
  [[nodiscard]] std::vector<std::string> slice_axes() const;
  /// The layout of one batch element on the slice mesh's shape.
  [[nodiscard]] const Layout& slice() const { return slice_; }
  /// Coordinate along the batch's axes of the mesh cell with these coordinates.
  [[nodiscard]] int batch_coord(const std::vector<int>& mesh_coords) const;
  /// Batch elements held by the mesh cell with these coordinates.
  [[nodiscard]] index_t local_batch(const std::vector<int>& mesh_coords) const;
  /// Coordinates of a mesh cell on the slice mesh (its coordinates along slice_axes()).
  [[nodiscard]] std::vector<int> slice_coords(const std::vector<int>& mesh_coords) const;
  /// Same batch cut (axes and map) and the same slice axes as `other`: their batch elements
  /// sit on the same ranks, on the same slice mesh.
  [[nodiscard]] bool same_batch_cut(const BatchedLayout& other) const;
  /// "A[B_X,I,J_Y] 8x100x200 on {x:2, y:3}".
  [[nodiscard]] std::string to_string() const;

 private:
  MeshShape mesh_;
  BatchedSpec spec_;
  DimMap batch_;
  Layout slice_;
};

/// A batch of equal-shape matrices on a mesh: a BatchedLayout plus this rank's tiles.
template <Scalar T>
class BatchedMatrix {
 public:
  /// Owning, zero-filled. Throws InvalidArgument when the layout's mesh shape is not the mesh's.
  BatchedMatrix(Mesh mesh, BatchedLayout layout);
  BatchedMatrix(const Mesh& mesh, index_t batch, index_t m, index_t n, std::string_view spec)
      : BatchedMatrix(mesh, BatchedLayout(mesh.shape(), batch, m, n, spec)) {}
  /// View of caller memory (no copy): tile b_loc at data + b_loc * stride, leading dimension
  /// ld. Throws InvalidArgument when ld < local rows or stride < ld * local columns.
  static BatchedMatrix view(Mesh mesh, BatchedLayout layout, T* data, index_t ld, index_t stride);

  [[nodiscard]] const Mesh& mesh() const { return mesh_; }
  [[nodiscard]] const BatchedLayout& layout() const { return layout_; }
  [[nodiscard]] index_t batch() const { return layout_.batch(); }
  [[nodiscard]] index_t rows() const { return layout_.rows(); }
  [[nodiscard]] index_t cols() const { return layout_.cols(); }
  [[nodiscard]] index_t local_batch() const { return local_batch_; }
  [[nodiscard]] index_t local_rows() const { return local_rows_; }
  [[nodiscard]] index_t local_cols() const { return local_cols_; }
  [[nodiscard]] index_t ld() const { return ld_; }
  [[nodiscard]] index_t stride() const { return stride_; }
  [[nodiscard]] T* data() { return is_view_ ? view_ : storage_.data(); }
  [[nodiscard]] const T* data() const { return is_view_ ? view_ : storage_.data(); }
  /// Global batch index of local batch element b_loc.
  [[nodiscard]] index_t global_batch(index_t b_loc) const;
  /// The mesh of the other axes, this rank's slice of it (Mesh::slice, which the constructors
  /// call: they are collective over the mesh the first time a slice of these axes is made).
  [[nodiscard]] Mesh slice_mesh() const;
  /// Local batch element b_loc as a DistMatrix view on slice_mesh() (no copy).
  [[nodiscard]] DistMatrix<T> slice(index_t b_loc);
  [[nodiscard]] const DistMatrix<T> slice(index_t b_loc) const;

  /// Sets every local element from f(b_glob, i_glob, j_glob). No communication.
  void fill(const std::function<T(index_t, index_t, index_t)>& f);
  /// Collective: the whole batch on `root` (empty elsewhere): element (b, i, j) at
  /// b * m * n + i + j * m (each matrix column-major, the batch outermost).
  [[nodiscard]] std::vector<T> gather(int root = 0) const;
  /// Collective: sets the batch from `global` (as gather returns it) held on `root`.
  void scatter(const std::vector<T>& global, int root = 0);

 private:
  BatchedMatrix(Mesh mesh, BatchedLayout layout, T* data, index_t ld, index_t stride);

  Mesh mesh_;
  Mesh slice_mesh_;  // mesh_.slice(slice axes), made by the constructor (collective)
  BatchedLayout layout_;
  index_t local_batch_ = 0, local_rows_ = 0, local_cols_ = 0, ld_ = 1, stride_ = 0;
  std::vector<T, detail::TileAllocator<T>> storage_;
  T* view_ = nullptr;
  bool is_view_ = false;
};

/// Collective over the mesh: dst <- src, where the two may cut the batch differently (other
/// axes, another distribution, or none) and lay out their elements differently; same mesh
/// object, batch size and element shape, else InvalidArgument / DimensionMismatch on every
/// rank before anything moves. One exchange over the whole mesh: each rank receives its
/// destination tiles less what it already holds (docs/ALGORITHMS.md, "Batched products").
template <Scalar T>
RedistStats redistribute(const BatchedMatrix<T>& src, BatchedMatrix<T>& dst);

/// Whether gemm_batched may run the batch as one larger product (a shared operand).
enum class BatchMerge {
  /// merge where the merged product is possible and the planner prices it below the
  /// elements one by one (it moves the shared operand once; it copies the batch in and out)
  Auto,
  Never,   ///< one gemm per batch element
  Always,  ///< merge, or throw NotSupported saying why it cannot
};

std::string to_string(BatchMerge m);
/// auto|never|always
BatchMerge parse_batch_merge(std::string_view text);

/// What one gemm_batched call did on this rank.
struct BatchedReport {
  index_t products = 0;   ///< gemm calls this rank took part in (0 when it holds no batch)
  bool merged = false;    ///< the batch ran as one product (batch folded into rows or columns)
  std::string batch;      ///< how the batch was cut, e.g. "32 over x (2), 16 here"
  std::string merge_why;  ///< Auto's prices of merged and one by one (empty: not priced)
  /// operands first moved into C's batch cut, with the words this rank received (empty: none;
  /// their bytes are in gemm.redist_bytes_*)
  std::string regrouped;
  /// The first product's algorithm, grid and detail; counters and seconds summed over all.
  GemmReport gemm;
  [[nodiscard]] std::string to_string() const;
};

/// Collective over the operands' mesh. A, B and C must share the mesh, with equal batch sizes.
/// A batched A or B that cuts the batch unlike C (other axes or another distribution) is first
/// moved into C's cut (redistribute above; the report's `regrouped` says what moved); then
/// each product runs through gemm (the planner picks its algorithm) on the slice mesh.
/// Shapes are validated on global metadata: a mismatch throws DimensionMismatch on every rank.
template <Scalar T>
BatchedReport gemm_batched(Op opA, Op opB, T alpha, const BatchedMatrix<T>& A,
                           const BatchedMatrix<T>& B, T beta, BatchedMatrix<T>& C,
                           const Options& options = {}, BatchMerge merge = BatchMerge::Auto);

/// One B for every batch element: C[b] <- alpha op(A[b]) op(B) + beta C[b]. B is a 2-D
/// DistMatrix on the same mesh; where its layout uses the batch's axes it is first gathered
/// over them. Mergeable (one (batch * m) x n product) when op(A)'s and C's rows are not cut
/// on the slice mesh.
template <Scalar T>
BatchedReport gemm_batched(Op opA, Op opB, T alpha, const BatchedMatrix<T>& A,
                           const DistMatrix<T>& B, T beta, BatchedMatrix<T>& C,
                           const Options& options = {}, BatchMerge merge = BatchMerge::Auto);

/// One A for every batch element: C[b] <- alpha op(A) op(B[b]) + beta C[b]. Mergeable (one
/// m x (batch * n) product) when op(B)'s and C's columns are not cut on the slice mesh.
template <Scalar T>
BatchedReport gemm_batched(Op opA, Op opB, T alpha, const DistMatrix<T>& A,
                           const BatchedMatrix<T>& B, T beta, BatchedMatrix<T>& C,
                           const Options& options = {}, BatchMerge merge = BatchMerge::Auto);

/// 16-bit batches: each product as gemm's 16-bit products (f32 accumulation, C rounded once).
BatchedReport gemm_batched(Op opA, Op opB, float alpha, const BatchedMatrix<bf16>& A,
                           const BatchedMatrix<bf16>& B, float beta, BatchedMatrix<bf16>& C,
                           const Options& options = {}, BatchMerge merge = BatchMerge::Auto);
BatchedReport gemm_batched(Op opA, Op opB, float alpha, const BatchedMatrix<f16>& A,
                           const BatchedMatrix<f16>& B, float beta, BatchedMatrix<f16>& C,
                           const Options& options = {}, BatchMerge merge = BatchMerge::Auto);
BatchedReport gemm_batched(Op opA, Op opB, float alpha, const BatchedMatrix<bf16>& A,
                           const DistMatrix<bf16>& B, float beta, BatchedMatrix<bf16>& C,
                           const Options& options = {}, BatchMerge merge = BatchMerge::Auto);
BatchedReport gemm_batched(Op opA, Op opB, float alpha, const BatchedMatrix<f16>& A,
                           const DistMatrix<f16>& B, float beta, BatchedMatrix<f16>& C,
                           const Options& options = {}, BatchMerge merge = BatchMerge::Auto);
BatchedReport gemm_batched(Op opA, Op opB, float alpha, const DistMatrix<bf16>& A,
                           const BatchedMatrix<bf16>& B, float beta, BatchedMatrix<bf16>& C,
                           const Options& options = {}, BatchMerge merge = BatchMerge::Auto);
BatchedReport gemm_batched(Op opA, Op opB, float alpha, const DistMatrix<f16>& A,
                           const BatchedMatrix<f16>& B, float beta, BatchedMatrix<f16>& C,
                           const Options& options = {}, BatchMerge merge = BatchMerge::Auto);

/// The layout of a C not made yet for gemm_batched(opA, opB, ..., A, B, ...): the batched
/// operand's batch cut, rows as op(A)'s, columns as op(B)'s (replicated where that would use
/// an axis twice), on the slice mesh. Pure. Make C with BatchedMatrix<T>(A.mesh(), layout).
template <Scalar T>
BatchedLayout batched_output_layout(Op opA, Op opB, const BatchedMatrix<T>& A,
                                    const BatchedMatrix<T>& B);
template <Scalar T>
BatchedLayout batched_output_layout(Op opA, Op opB, const BatchedMatrix<T>& A,
                                    const DistMatrix<T>& B);
template <Scalar T>
BatchedLayout batched_output_layout(Op opA, Op opB, const DistMatrix<T>& A,
                                    const BatchedMatrix<T>& B);

extern template class BatchedMatrix<float>;
extern template class BatchedMatrix<double>;
extern template class BatchedMatrix<std::complex<float>>;
extern template class BatchedMatrix<std::complex<double>>;
extern template class BatchedMatrix<bf16>;
extern template class BatchedMatrix<f16>;

}  // namespace shardmm
