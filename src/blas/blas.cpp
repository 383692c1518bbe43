#include "blas/blas.hpp"

#include <cblas.h>

#include <climits>
#include <complex>

#include "core/instantiate.hpp"
#include "shardmm/error.hpp"
#include "trace/trace.hpp"

namespace shardmm::blas {
namespace {

CBLAS_TRANSPOSE to_cblas(Op op) {
  switch (op) {
    case Op::N: return CblasNoTrans;
    case Op::T: return CblasTrans;
    case Op::C: return CblasConjTrans;
  }
  return CblasNoTrans;
}

blasint checked(index_t v) {
  if (v < 0 || v > INT_MAX) throw InvalidArgument("BLAS dimension out of 32-bit range");
  return static_cast<blasint>(v);
}

}  // namespace

template <Scalar T>
void gemm(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, const T* A, index_t lda,
          const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == T(0)) {
    scale(m, n, beta, C, ldc);
    return;
  }
  constexpr bool complex = !std::is_floating_point_v<T>;  // 4 real multiply-adds per one
  trace::Span span(std::is_same_v<T, float>                 ? "sgemm"
                   : std::is_same_v<T, double>              ? "dgemm"
                   : std::is_same_v<T, std::complex<float>> ? "cgemm"
                                                            : "zgemm",
                   trace::Cat::Blas);
  if (span)
    span.arg("m", m).arg("n", n).arg("k", k).flops((complex ? 8.0 : 2.0) * static_cast<double>(m) *
                                                   static_cast<double>(n) * static_cast<double>(k));
  const auto ta = to_cblas(opA), tb = to_cblas(opB);
  const blasint M = checked(m), N = checked(n), K = checked(k);
  const blasint LDA = checked(std::max<index_t>(lda, 1)), LDB = checked(std::max<index_t>(ldb, 1)),
                LDC = checked(std::max<index_t>(ldc, 1));
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasColMajor, ta, tb, M, N, K, alpha, A, LDA, B, LDB, beta, C, LDC);
  else if constexpr (std::is_same_v<T, double>)
    cblas_dgemm(CblasColMajor, ta, tb, M, N, K, alpha, A, LDA, B, LDB, beta, C, LDC);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    cblas_cgemm(CblasColMajor, ta, tb, M, N, K, &alpha, A, LDA, B, LDB, &beta, C, LDC);
  else cblas_zgemm(CblasColMajor, ta, tb, M, N, K, &alpha, A, LDA, B, LDB, &beta, C, LDC);
}

template <Scalar T>
void scale(index_t m, index_t n, T beta, T* C, index_t ldc) {
  if (beta == T(1)) return;
  for (index_t j = 0; j < n; ++j) {
    T* col = C + j * ldc;
    if (beta == T(0))
      for (index_t i = 0; i < m; ++i) col[i] = T(0);
    else
      for (index_t i = 0; i < m; ++i) col[i] *= beta;
  }
}

int num_threads() { return openblas_get_num_threads(); }
void set_num_threads(int n) { openblas_set_num_threads(n); }

#define SHARDMM_INSTANTIATE(T)                                                             \
  template void gemm<T>(Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*, \
                        index_t, T, T*, index_t);                                          \
  template void scale<T>(index_t, index_t, T, T*, index_t);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::blas
