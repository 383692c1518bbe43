// gemm_batched for the 16-bit storage types (bf16, f16), as gemm's 16-bit products but once
// per call rather than once per batch element: this rank's tiles of every batch element of A,
// B (and C when beta != 0) widened to f32 in the workspace (slots WideA/B/C; no
// communication) -> the f32 batched product with Options::wire set to the operands' own
// format (widened 16-bit values travel in it unchanged) -> C's tiles rounded back to 16 bits
// once. The local GEMMs and every partial sum are f32 (docs/ALGORITHMS.md, "16-bit formats").
#include <algorithm>
#include <optional>

#include "comm/agree.hpp"
#include "front/batched.hpp"
#include "matrix/pooled.hpp"

namespace shardmm {
namespace {

template <class H>
constexpr Wire wire_format_of() {
  return std::is_same_v<H, bf16> ? Wire::BF16 : Wire::F16;
}

/// Workspace for a batch's widened tiles: local_batch() tiles of ld x local_cols(), ld =
/// max(1, local rows). Rank-local; may throw (call where failures are agreed).
template <class H>
float* wide_storage(const BatchedMatrix<H>& X, memory::Slot slot) {
  const index_t ld = std::max<index_t>(1, X.local_rows());
  return memory::get<float>(slot, ld * X.local_cols() * X.local_batch());
}

template <class H>
BatchedMatrix<float> wide_view(const BatchedMatrix<H>& X, float* data) {
  const index_t ld = std::max<index_t>(1, X.local_rows());
  return BatchedMatrix<float>::view(X.mesh(), X.layout(), data, ld, ld * X.local_cols());
}

/// 16-bit tiles (ld, stride) to or from f32 tiles (wld, wstride), element by element.
template <class From, class To>
void convert_tiles(index_t batch, index_t rows, index_t cols, const From* in, index_t ld,
                   index_t stride, To* out, index_t wld, index_t wstride) {
  for (index_t b = 0; b < batch; ++b)
    for (index_t j = 0; j < cols; ++j) {
      const From* col = in + b * stride + j * ld;
      To* dst = out + b * wstride + j * wld;
      for (index_t i = 0; i < rows; ++i) dst[i] = To(float(col[i]));
    }
}

template <class H>
void widen_batch(const BatchedMatrix<H>& X, BatchedMatrix<float>& W) {
  convert_tiles(X.local_batch(), X.local_rows(), X.local_cols(), X.data(), X.ld(), X.stride(),
                W.data(), W.ld(), W.stride());
}

template <class H>
void narrow_batch(const BatchedMatrix<float>& W, BatchedMatrix<H>& X) {
  convert_tiles(X.local_batch(), X.local_rows(), X.local_cols(), W.data(), W.ld(), W.stride(),
                X.data(), X.ld(), X.stride());
}

template <class H>
void widen_shared(const DistMatrix<H>& X, DistMatrix<float>& W) {
  convert_tiles(index_t(1), X.local_rows(), X.local_cols(), X.data(), X.ld(), index_t(0), W.data(),
                W.ld(), index_t(0));
}

/// The widened operands: a batched operand's tiles (one slot per role) or a shared one's.
struct Widened {
  std::optional<BatchedMatrix<float>> A, B, C;
  std::optional<DistMatrix<float>> A_shared, B_shared;
};

template <class H>
BatchedReport batched_half(Op opA, Op opB, float alpha, const BatchedMatrix<H>* A,
                           const DistMatrix<H>* A_shared, const BatchedMatrix<H>* B,
                           const DistMatrix<H>* B_shared, float beta, BatchedMatrix<H>& C,
                           const Options& options, BatchMerge merge) {
  float *a = nullptr, *b = nullptr, *c = nullptr;
  Widened w;
  auto allocate = [&] {  // rank-local: the slots' memory and the shared operands' views
    if (A) a = wide_storage(*A, memory::Slot::WideA);
    else
      w.A_shared.emplace(
          matrix::pooled<float>(A_shared->mesh(), A_shared->layout(), memory::Slot::WideA));
    if (B) b = wide_storage(*B, memory::Slot::WideB);
    else
      w.B_shared.emplace(
          matrix::pooled<float>(B_shared->mesh(), B_shared->layout(), memory::Slot::WideB));
    c = wide_storage(C, memory::Slot::WideC);
  };
  if (C.mesh().active()) comm::agreed(C.mesh().comm(), "widen", allocate);
  else allocate();
  if (A) w.A.emplace(wide_view(*A, a)), widen_batch(*A, *w.A);
  else widen_shared(*A_shared, *w.A_shared);
  if (B) w.B.emplace(wide_view(*B, b)), widen_batch(*B, *w.B);
  else widen_shared(*B_shared, *w.B_shared);
  w.C.emplace(wide_view(C, c));
  if (beta != 0.0F) widen_batch(C, *w.C);  // beta == 0 never reads C
  Options o = options;
  o.wire = wire_format_of<H>();
  BatchedReport rep = front::batched_products<float>(
      opA, opB, alpha, A ? &*w.A : nullptr, A ? nullptr : &*w.A_shared, B ? &*w.B : nullptr,
      B ? nullptr : &*w.B_shared, beta, *w.C, o, merge);
  narrow_batch(*w.C, C);
  return rep;
}

}  // namespace

#define SHARDMM_HALF_BATCHED(H)                                                                 \
  BatchedReport gemm_batched(Op opA, Op opB, float alpha, const BatchedMatrix<H>& A,            \
                             const BatchedMatrix<H>& B, float beta, BatchedMatrix<H>& C,        \
                             const Options& options, BatchMerge merge) {                        \
    return batched_half<H>(opA, opB, alpha, &A, nullptr, &B, nullptr, beta, C, options, merge); \
  }                                                                                             \
  BatchedReport gemm_batched(Op opA, Op opB, float alpha, const BatchedMatrix<H>& A,            \
                             const DistMatrix<H>& B, float beta, BatchedMatrix<H>& C,           \
                             const Options& options, BatchMerge merge) {                        \
    return batched_half<H>(opA, opB, alpha, &A, nullptr, nullptr, &B, beta, C, options, merge); \
  }                                                                                             \
  BatchedReport gemm_batched(Op opA, Op opB, float alpha, const DistMatrix<H>& A,               \
                             const BatchedMatrix<H>& B, float beta, BatchedMatrix<H>& C,        \
                             const Options& options, BatchMerge merge) {                        \
    return batched_half<H>(opA, opB, alpha, nullptr, &A, &B, nullptr, beta, C, options, merge); \
  }
SHARDMM_HALF_BATCHED(bf16)
SHARDMM_HALF_BATCHED(f16)
#undef SHARDMM_HALF_BATCHED

}  // namespace shardmm
