#include "blas/blas.hpp"

#ifdef SHARDMM_CBLAS_HEADER
#include SHARDMM_CBLAS_HEADER  // cblas.h, or MKL's mkl_cblas.h (cmake/ShardmmDependencies.cmake)
#else
#include <cblas.h>
#endif

#include <algorithm>
#include <climits>
#include <complex>
#include <type_traits>

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

// The BLAS's integer, as its own cblas_dgemm declares M (OpenBLAS's blasint, BLIS's f77_int,
// MKL's MKL_INT): int in the LP64 builds shardmm links.
template <class>
struct FourthArg;
template <class R, class A0, class A1, class A2, class A3, class... Rest>
struct FourthArg<R(A0, A1, A2, A3, Rest...)> {
  using type = std::remove_cv_t<A3>;
};
using blas_int = FourthArg<decltype(cblas_dgemm)>::type;
static_assert(std::is_integral_v<blas_int>);

blas_int checked(index_t v) {
  if (v < 0 || v > INT_MAX) throw InvalidArgument("BLAS dimension out of 32-bit range");
  return static_cast<blas_int>(v);
}

thread_local Progress* g_progress = nullptr;
thread_local std::int64_t g_polls = 0;

// Between two polls Open MPI's TCP path has at most 3 fragments of 128 KB of a message queued
// (pml_ob1_send_pipeline_depth): 3 ms of a 1 Gbit/s link, 15 ms of a 200 Mbit/s one. A block
// is about 7 ms of one core's DGEMM.
Blocking g_blocking;

template <Scalar T>
constexpr double real_flops(index_t m, index_t n, index_t k) {
  constexpr double per = std::is_floating_point_v<T> ? 2.0 : 8.0;  // complex: 4 multiply-adds
  return per * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

// One OpenBLAS call.
template <Scalar T>
void kernel(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, const T* A, index_t lda,
            const T* B, index_t ldb, T beta, T* C, index_t ldc) {
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
  const blas_int M = checked(m), N = checked(n), K = checked(k);
  const blas_int LDA = checked(std::max<index_t>(lda, 1)), LDB = checked(std::max<index_t>(ldb, 1)),
                 LDC = checked(std::max<index_t>(ldc, 1));
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasColMajor, ta, tb, M, N, K, alpha, A, LDA, B, LDB, beta, C, LDC);
  else if constexpr (std::is_same_v<T, double>)
    cblas_dgemm(CblasColMajor, ta, tb, M, N, K, alpha, A, LDA, B, LDB, beta, C, LDC);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    cblas_cgemm(CblasColMajor, ta, tb, M, N, K, &alpha, A, LDA, B, LDB, &beta, C, LDC);
  else cblas_zgemm(CblasColMajor, ta, tb, M, N, K, &alpha, A, LDA, B, LDB, &beta, C, LDC);
}

// gemm() under a Progress that has just polled: C in blocks along its longer side (columns of
// op(B), or rows of op(A)), polling between blocks until everything in flight has arrived.
template <Scalar T>
void blocked(Progress& p, Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, const T* A,
             index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  const bool by_cols = n >= m;
  const index_t len = by_cols ? n : m, across = by_cols ? m : n;
  const auto want = static_cast<index_t>(static_cast<double>(g_blocking.flops) /
                                         std::max(1.0, real_flops<T>(across, 1, k)));
  const index_t w = std::max(g_blocking.min_width, want);
  for (index_t at = 0; at < len;) {
    const index_t rest = len - at, cut = at > 0 && p.poll() ? rest : std::min(w, rest);
    if (by_cols)
      kernel(opA, opB, m, cut, k, alpha, A, lda, opB == Op::N ? B + at * ldb : B + at, ldb, beta,
             C + at * ldc, ldc);
    else
      kernel(opA, opB, cut, n, k, alpha, opA == Op::N ? A + at : A + at * lda, lda, B, ldb, beta,
             C + at, ldc);
    at += cut;
  }
}

}  // namespace

Progress::Progress(std::function<bool()> poll, bool on)
    : poll_(std::move(poll)), outer_(g_progress), on_(on), done_(!on) {
  if (on_) g_progress = this;
}
Progress::~Progress() {
  if (on_) g_progress = outer_;
}
bool Progress::poll() {
  if (!done_) {
    ++g_polls;
    done_ = poll_();
  }
  return done_;
}
Progress* Progress::current() { return g_progress; }
Blocking blocking() { return g_blocking; }
void set_blocking(Blocking b) {
  if (b.flops < 1 || b.min_width < 1) throw InvalidArgument("GEMM blocks must be non-empty");
  g_blocking = b;
}
std::int64_t progress_polls() { return g_polls; }

template <Scalar T>
void gemm(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, const T* A, index_t lda,
          const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == T(0)) {
    scale(m, n, beta, C, ldc);
    return;
  }
  Progress* p = g_progress;
  if (p != nullptr && std::max(m, n) > g_blocking.min_width &&
      real_flops<T>(m, n, k) > 2.0 * static_cast<double>(g_blocking.flops) && !p->poll())
    return blocked(*p, opA, opB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
  kernel(opA, opB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

const void* kernel_address() { return reinterpret_cast<const void*>(&cblas_dgemm); }

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

namespace {

// One ?trsm (solve) or ?trmm (multiply) call, column-major.
template <Scalar T>
void triangular(bool solve, bool left, bool lower, Op opA, bool unit, index_t m, index_t n,
                const T* A, index_t lda, T* B, index_t ldb) {
  if (m == 0 || n == 0) return;
  const CBLAS_SIDE side = left ? CblasLeft : CblasRight;
  const CBLAS_UPLO uplo = lower ? CblasLower : CblasUpper;
  const CBLAS_TRANSPOSE ta = to_cblas(opA);
  const CBLAS_DIAG diag = unit ? CblasUnit : CblasNonUnit;
  const blas_int M = checked(m), N = checked(n), LDA = checked(lda), LDB = checked(ldb);
  const T one(1);
  if constexpr (std::is_same_v<T, float>) {
    if (solve) cblas_strsm(CblasColMajor, side, uplo, ta, diag, M, N, one, A, LDA, B, LDB);
    else cblas_strmm(CblasColMajor, side, uplo, ta, diag, M, N, one, A, LDA, B, LDB);
  } else if constexpr (std::is_same_v<T, double>) {
    if (solve) cblas_dtrsm(CblasColMajor, side, uplo, ta, diag, M, N, one, A, LDA, B, LDB);
    else cblas_dtrmm(CblasColMajor, side, uplo, ta, diag, M, N, one, A, LDA, B, LDB);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    if (solve) cblas_ctrsm(CblasColMajor, side, uplo, ta, diag, M, N, &one, A, LDA, B, LDB);
    else cblas_ctrmm(CblasColMajor, side, uplo, ta, diag, M, N, &one, A, LDA, B, LDB);
  } else {
    if (solve) cblas_ztrsm(CblasColMajor, side, uplo, ta, diag, M, N, &one, A, LDA, B, LDB);
    else cblas_ztrmm(CblasColMajor, side, uplo, ta, diag, M, N, &one, A, LDA, B, LDB);
  }
}

}  // namespace

template <Scalar T>
void trsm(bool left, bool lower, Op opA, bool unit, index_t m, index_t n, const T* A, index_t lda,
          T* B, index_t ldb) {
  triangular(true, left, lower, opA, unit, m, n, A, lda, B, ldb);
}

template <Scalar T>
void trmm(bool left, bool lower, Op opA, bool unit, index_t m, index_t n, const T* A, index_t lda,
          T* B, index_t ldb) {
  triangular(false, left, lower, opA, unit, m, n, A, lda, B, ldb);
}

#define SHARDMM_INSTANTIATE(T)                                                                   \
  template void gemm<T>(Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*,       \
                        index_t, T, T*, index_t);                                                \
  template void scale<T>(index_t, index_t, T, T*, index_t);                                      \
  template void trsm<T>(bool, bool, Op, bool, index_t, index_t, const T*, index_t, T*, index_t); \
  template void trmm<T>(bool, bool, Op, bool, index_t, index_t, const T*, index_t, T*, index_t);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::blas
