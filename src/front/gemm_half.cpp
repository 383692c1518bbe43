// gemm for the 16-bit storage types (bf16, f16): validate -> widen this rank's tiles of A, B
// (and C when beta != 0) to f32 in the workspace (slots WideA/B/C; no communication) -> the f32
// gemm with Options::wire set to the operands' own format -> round C's tile back to 16 bits.
// Widened 16-bit values are exact in the wire format, so the operands still travel in 16 bits
// and arrive unchanged; the local GEMMs and every partial sum of C are f32, and C is rounded
// once, at the end (docs/ALGORITHMS.md, "16-bit formats").
#include <optional>

#include "comm/agree.hpp"
#include "front/resolve.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/gemm.hpp"

namespace shardmm {
namespace {

template <class H>
constexpr Wire wire_of() {
  return std::is_same_v<H, bf16> ? Wire::BF16 : Wire::F16;
}

template <class H>
void widen_tile(const DistMatrix<H>& X, DistMatrix<float>& W) {
  for (index_t j = 0; j < X.local_cols(); ++j)
    for (index_t i = 0; i < X.local_rows(); ++i) W.local(i, j) = float(X.local(i, j));
}

template <class H>
void narrow_tile(const DistMatrix<float>& W, DistMatrix<H>& X) {
  for (index_t j = 0; j < X.local_cols(); ++j)
    for (index_t i = 0; i < X.local_rows(); ++i) X.local(i, j) = H(W.local(i, j));
}

template <class H>
GemmReport gemm_half(Op opA, Op opB, float alpha, const DistMatrix<H>& A, const DistMatrix<H>& B,
                     float beta, DistMatrix<H>& C, const Options& options) {
  (void)front::validate(opA, opB, A, B, C);  // the 16-bit call's own errors, before allocating
  std::optional<DistMatrix<float>> Aw, Bw, Cw;
  auto widen = [&] {
    Aw.emplace(matrix::pooled<float>(A.mesh(), A.layout(), memory::Slot::WideA));
    Bw.emplace(matrix::pooled<float>(B.mesh(), B.layout(), memory::Slot::WideB));
    Cw.emplace(matrix::pooled<float>(C.mesh(), C.layout(), memory::Slot::WideC));
  };
  if (C.mesh().active()) comm::agreed(C.mesh().comm(), "widen", widen);
  else widen();
  widen_tile(A, *Aw);
  widen_tile(B, *Bw);
  if (beta != 0.0f) widen_tile(C, *Cw);  // beta == 0 never reads C
  Options o = options;
  o.wire = wire_of<H>();
  GemmReport rep = gemm(opA, opB, alpha, *Aw, *Bw, beta, *Cw, o);
  narrow_tile(*Cw, C);
  return rep;
}

}  // namespace

GemmReport gemm(Op opA, Op opB, float alpha, const DistMatrix<bf16>& A, const DistMatrix<bf16>& B,
                float beta, DistMatrix<bf16>& C, const Options& options) {
  return gemm_half(opA, opB, alpha, A, B, beta, C, options);
}

GemmReport gemm(Op opA, Op opB, float alpha, const DistMatrix<f16>& A, const DistMatrix<f16>& B,
                float beta, DistMatrix<f16>& C, const Options& options) {
  return gemm_half(opA, opB, alpha, A, B, beta, C, options);
}

}  // namespace shardmm
