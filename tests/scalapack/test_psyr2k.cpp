// The rank-2k updates of the drop-in (shardmm_p?syr2k, shardmm_p?her2k from libshardmm_pxgemm)
// against ScaLAPACK's own p?syr2k_ / p?her2k_ in the same program and against a serial
// OpenBLAS pair of products, on random cases: every element type, both UPLO, every TRANS the
// routine takes, alpha and beta including 0 and 1, K = 0, random block sizes, sources and
// offsets, on every grid that fits the world (row- and column-major BLACS order). The whole
// local arrays are compared, padding included: nothing outside sub(C)'s UPLO triangle may
// change.
#include <complex>
#include <limits>
#include <string>

#include "blas/blas.hpp"
#include "core/instantiate.hpp"
#include "scalapack/rank_k_test_util.hpp"
#include "scalapack/scalapack_pblas3.hpp"

namespace shardmm::testing {
namespace {

using Syr2k = void (*)(SHARDMM_PXSYR2K_PARAMS(void, void));
using Flags = RankKFlags;

// [hermitian][0 ScaLAPACK, 1 shardmm] (her2k only for complex types).
template <class T>
struct Routines;
SHARDMM_TEST_ROUTINES(Syr2k, float, &pssyr2k_, &shardmm_pssyr2k, nullptr, nullptr);
SHARDMM_TEST_ROUTINES(Syr2k, double, &pdsyr2k_, &shardmm_pdsyr2k, nullptr, nullptr);
SHARDMM_TEST_ROUTINES(Syr2k, std::complex<float>, &pcsyr2k_, &shardmm_pcsyr2k, &pcher2k_,
                      &shardmm_pcher2k);
SHARDMM_TEST_ROUTINES(Syr2k, std::complex<double>, &pzsyr2k_, &shardmm_pzsyr2k, &pzher2k_,
                      &shardmm_pzher2k);

// The serial reference for this process's local array of C: op(A) op(B)' + op(B) op(A)' by
// OpenBLAS (alpha and conj(alpha) for her2k).
template <class T>
std::vector<T> reference(const BlacsGrid& g, const Flags& f, int n, int k, T alpha,
                         const PMatrix<T>& A, const PMatrix<T>& B, T beta, const PMatrix<T>& C) {
  const std::vector<T> X = op_sub(A, f.trans, n, k), Y = op_sub(B, f.trans, n, k);
  std::vector<T> P(std::size_t(n) * n);
  const Op prime = f.hermitian ? Op::C : Op::T;
  T alpha2 = alpha;
  if constexpr (is_complex_v<T>) alpha2 = f.hermitian ? std::conj(alpha) : alpha;
  const int ld = std::max(n, 1);
  blas::gemm(Op::N, prime, n, n, k, alpha, X.data(), ld, Y.data(), ld, T(0), P.data(), ld);
  blas::gemm(Op::N, prime, n, n, k, alpha2, Y.data(), ld, X.data(), ld, T(1), P.data(), ld);
  return rank_k_reference(g, f, n, alpha == T(0) || k == 0, beta, C,
                          [&](int si, int sj) { return P[si + std::size_t(sj) * n]; });
}

template <class T>
void run_case(std::mt19937& rng, const BlacsGrid& g, const Flags& f, int id) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int n = pick(0, 6) == 0 ? 0 : pick(1, 17), k = pick(0, 6) == 0 ? 0 : pick(1, 11);
  const bool t = f.trans != 'N';
  const PMatrix<T> A = random_matrix<T>(rng, g, t ? k : n, t ? n : k, 1);
  const PMatrix<T> B = random_matrix<T>(rng, g, t ? k : n, t ? n : k, 3);
  PMatrix<T> C = random_matrix<T>(rng, g, n, n, 2);
  T alpha = pick_scalar<T>(rng, false), beta = pick_scalar<T>(rng, true);
  if (f.hermitian) beta = T(std::real(beta));
  if (f.hermitian && beta == T(1) && (alpha == T(0) || k == 0)) beta = T(0.5);  // PBLAS:
  // that quick return leaves the diagonal's imaginary parts, the reference would zero them
  PMatrix<T> C_scalapack = C;
  const std::vector<T> expected = reference(g, f, n, k, alpha, A, B, beta, C);
  const char uplo[2] = {f.uplo, 0}, trans[2] = {f.trans, 0};
  const real_t<T> rb = std::real(beta);
  const void* be = f.hermitian ? static_cast<const void*>(&rb) : &beta;
  for (auto [impl, X] : {std::pair{0, &C_scalapack}, std::pair{1, &C}})
    Routines<T>::get(f.hermitian, impl)(uplo, trans, &n, &k, &alpha, A.data.data(), &A.i, &A.j,
                                        A.desc, B.data.data(), &B.i, &B.j, B.desc, be,
                                        X->data.data(), &X->i, &X->j, X->desc);
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  const double bound = 8 * eps * ((k + 2) * 2.2 * std::abs(alpha) + std::abs(beta) + 1);
  const std::string what = "case " + std::to_string(id) + (f.hermitian ? " her2k" : " syr2k") +
                           " uplo " + f.uplo + " trans " + f.trans + " n " + std::to_string(n) +
                           " k " + std::to_string(k) + grid_text(g);
  expect_matches(expected, C.data, C_scalapack.data, bound, what);
}

SHARDMM_PBLAS_CASES_TEST(Psyr2k, 5432)

}  // namespace
}  // namespace shardmm::testing
