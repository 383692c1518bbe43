// The symmetric and Hermitian products of the drop-in (shardmm_p?symm, shardmm_p?hemm from
// libshardmm_pxgemm) against ScaLAPACK's own p?symm_ / p?hemm_ in the same program and against
// a serial OpenBLAS gemm of the full matrix, on random cases: every element type, SIDE and
// UPLO, alpha and beta including 0 and 1, M or N = 0, random block sizes, sources and offsets,
// on every grid that fits the world (row- and column-major BLACS order). sub(A)'s other
// triangle holds NaN: reading it shows. The whole local arrays of C are compared, padding
// included.
#include <complex>
#include <limits>
#include <string>

#include "blas/blas.hpp"
#include "core/instantiate.hpp"
#include "scalapack/pblas_test_util.hpp"
#include "scalapack/scalapack_pblas3.hpp"

namespace shardmm::testing {
namespace {

using Symm = void (*)(SHARDMM_PXSYMM_PARAMS(void));

// [hermitian][0 ScaLAPACK, 1 shardmm] (hemm only for complex types).
template <class T>
struct Routines;
SHARDMM_TEST_ROUTINES(Symm, float, &pssymm_, &shardmm_pssymm, nullptr, nullptr);
SHARDMM_TEST_ROUTINES(Symm, double, &pdsymm_, &shardmm_pdsymm, nullptr, nullptr);
SHARDMM_TEST_ROUTINES(Symm, std::complex<float>, &pcsymm_, &shardmm_pcsymm, &pchemm_,
                      &shardmm_pchemm);
SHARDMM_TEST_ROUTINES(Symm, std::complex<double>, &pzsymm_, &shardmm_pzsymm, &pzhemm_,
                      &shardmm_pzhemm);

struct Flags {
  bool hermitian = false;
  char side = 'L', uplo = 'U';
};

// sub(A)'s element (si, sj) as stored: the UPLO triangle, NaN elsewhere.
template <class T>
T stored(const Flags& f, int si, int sj) {
  const bool in = f.uplo == 'U' ? si <= sj : si >= sj;
  return in ? entry<T>(si, sj, 1) : T(std::numeric_limits<real_t<T>>::quiet_NaN());
}

// sub(A)'s element (si, sj) as the product sees it.
template <class T>
T full(const Flags& f, int si, int sj) {
  const bool in = f.uplo == 'U' ? si <= sj : si >= sj;
  T v = entry<T>(in ? si : sj, in ? sj : si, 1);
  if constexpr (is_complex_v<T>) {
    if (f.hermitian && !in) v = std::conj(v);
    if (f.hermitian && si == sj) v = T(v.real(), 0);
  }
  return v;
}

template <class T>
std::vector<T> reference(const BlacsGrid& g, const Flags& f, int m, int n, T alpha, T beta,
                         const PMatrix<T>& C) {
  const int k = f.side == 'L' ? m : n;
  std::vector<T> a(std::size_t(k) * k), b(std::size_t(m) * n), c(std::size_t(m) * n);
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i) a[i + std::size_t(j) * k] = full<T>(f, i, j);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      b[i + std::size_t(j) * m] = entry<T>(i, j, 2);
      c[i + std::size_t(j) * m] = entry<T>(i, j, 3);
    }
  const int ld = std::max(m, 1), lda = std::max(k, 1);
  if (f.side == 'L')
    blas::gemm(Op::N, Op::N, m, n, k, alpha, a.data(), lda, b.data(), ld, beta, c.data(), ld);
  else blas::gemm(Op::N, Op::N, m, n, k, alpha, b.data(), ld, a.data(), lda, beta, c.data(), ld);
  PMatrix<T> out = C;
  set_sub(g, out, m, n, [&](int i, int j) { return c[i + std::size_t(j) * m]; });
  return out.data;
}

template <class T>
void run_case(std::mt19937& rng, const BlacsGrid& g, const Flags& f, int id) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int m = pick(0, 6) == 0 ? 0 : pick(1, 15), n = pick(0, 6) == 0 ? 0 : pick(1, 13);
  const int k = f.side == 'L' ? m : n;
  PMatrix<T> A = random_matrix<T>(rng, g, k, k, 1);
  set_sub(g, A, k, k, [&](int i, int j) { return stored<T>(f, i, j); });
  PMatrix<T> B = random_matrix<T>(rng, g, m, n, 2);
  set_sub(g, B, m, n, [](int i, int j) { return entry<T>(i, j, 2); });
  PMatrix<T> C = random_matrix<T>(rng, g, m, n, 3);
  set_sub(g, C, m, n, [](int i, int j) { return entry<T>(i, j, 3); });
  const T alpha = pick_scalar<T>(rng, false), beta = pick_scalar<T>(rng, true);
  PMatrix<T> C_scalapack = C;
  const std::vector<T> expected = reference(g, f, m, n, alpha, beta, C);
  const char side[2] = {f.side, 0}, uplo[2] = {f.uplo, 0};
  for (auto [impl, X] : {std::pair{0, &C_scalapack}, std::pair{1, &C}})
    Routines<T>::get(f.hermitian, impl)(side, uplo, &m, &n, &alpha, A.data.data(), &A.i, &A.j,
                                        A.desc, B.data.data(), &B.i, &B.j, B.desc, &beta,
                                        X->data.data(), &X->i, &X->j, X->desc);
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  const double bound = 8 * eps * ((k + 2) * 1.1 * std::abs(alpha) + std::abs(beta) + 1);
  const std::string what = "case " + std::to_string(id) + (f.hermitian ? " hemm" : " symm") +
                           " side " + f.side + " uplo " + f.uplo + " m " + std::to_string(m) +
                           " n " + std::to_string(n) + grid_text(g);
  expect_matches(expected, C.data, C_scalapack.data, bound, what);
}

std::vector<Flags> all_flags(bool complex) {
  std::vector<Flags> out;
  for (const bool h : {false, true})
    for (const char s : {'L', 'R'})
      for (const char u : {'U', 'L'})
        if (complex || !h) out.push_back({h, s, u});
  return out;
}

SHARDMM_PBLAS_CASES_TEST(Psymm, 2468)

}  // namespace
}  // namespace shardmm::testing
