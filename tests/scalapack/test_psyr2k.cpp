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
#include "scalapack/pblas_test_util.hpp"
#include "shardmm/c/scalapack.h"

extern "C" {
void pssyr2k_(SHARDMM_PXSYR2K_PARAMS(float, float));
void pdsyr2k_(SHARDMM_PXSYR2K_PARAMS(double, double));
void pcsyr2k_(SHARDMM_PXSYR2K_PARAMS(void, void));
void pzsyr2k_(SHARDMM_PXSYR2K_PARAMS(void, void));
void pcher2k_(SHARDMM_PXSYR2K_PARAMS(void, float));
void pzher2k_(SHARDMM_PXSYR2K_PARAMS(void, double));
}

namespace shardmm::testing {
namespace {

using Syrk = void (*)(SHARDMM_PXSYR2K_PARAMS(void, void));

// [hermitian][0 ScaLAPACK, 1 shardmm] (her2k only for complex types).
template <class T>
struct Routines;
#define SHARDMM_ROUTINES(T, x, herk_scalapack, herk_shardmm)                                     \
  template <>                                                                                    \
  struct Routines<T> {                                                                           \
    static Syrk get(bool hermitian, int impl) {                                                  \
      const Syrk own[2][2] = {                                                                   \
          {reinterpret_cast<Syrk>(&p##x##syr2k_), reinterpret_cast<Syrk>(&shardmm_p##x##syr2k)}, \
          {herk_scalapack, herk_shardmm}};                                                       \
      return own[hermitian][impl];                                                               \
    }                                                                                            \
  };
SHARDMM_ROUTINES(float, s, Syrk{}, Syrk{})
SHARDMM_ROUTINES(double, d, Syrk{}, Syrk{})
SHARDMM_ROUTINES(std::complex<float>, c, reinterpret_cast<Syrk>(&pcher2k_),
                 reinterpret_cast<Syrk>(&shardmm_pcher2k))
SHARDMM_ROUTINES(std::complex<double>, z, reinterpret_cast<Syrk>(&pzher2k_),
                 reinterpret_cast<Syrk>(&shardmm_pzher2k))
#undef SHARDMM_ROUTINES

struct Flags {
  bool hermitian = false;
  char uplo = 'U', trans = 'N';
};

// op(sub(A)) as an n x k column-major matrix.
template <class T>
std::vector<T> op_a(const PMatrix<T>& A, char trans, int n, int k) {
  std::vector<T> out(std::size_t(n) * k);
  for (int l = 0; l < k; ++l)
    for (int i = 0; i < n; ++i) {
      const bool t = trans != 'N';
      T a = entry<T>(A.i - 1 + (t ? l : i), A.j - 1 + (t ? i : l), A.seed);
      if constexpr (is_complex_v<T>) a = trans == 'C' ? std::conj(a) : a;
      out[i + std::size_t(l) * n] = a;
    }
  return out;
}

// The serial reference for this process's local array of C: op(A) op(B)' + op(B) op(A)' by
// OpenBLAS (alpha and conj(alpha) for her2k).
template <class T>
std::vector<T> reference(const BlacsGrid& g, const Flags& f, int n, int k, T alpha,
                         const PMatrix<T>& A, const PMatrix<T>& B, T beta, const PMatrix<T>& C) {
  const std::vector<T> X = op_a(A, f.trans, n, k), Y = op_a(B, f.trans, n, k);
  std::vector<T> P(std::size_t(n) * n);
  const Op prime = f.hermitian ? Op::C : Op::T;
  T alpha2 = alpha;
  if constexpr (is_complex_v<T>) alpha2 = f.hermitian ? std::conj(alpha) : alpha;
  const int ld = std::max(n, 1);
  blas::gemm(Op::N, prime, n, n, k, alpha, X.data(), ld, Y.data(), ld, T(0), P.data(), ld);
  blas::gemm(Op::N, prime, n, n, k, alpha2, Y.data(), ld, X.data(), ld, T(1), P.data(), ld);
  std::vector<T> out = C.data;
  for (int jl = 0; jl < C.lc; ++jl)
    for (int il = 0; il < C.lr; ++il) {
      const int si = int(C.row_map().to_global(il, g.row)) - (C.i - 1);
      const int sj = int(C.col_map().to_global(jl, g.col)) - (C.j - 1);
      if (si < 0 || si >= n || sj < 0 || sj >= n || (f.uplo == 'U' ? si > sj : si < sj)) continue;
      T& c = out[il + std::size_t(jl) * C.lld];
      const T ak = alpha == T(0) || k == 0 ? T(0) : P[si + std::size_t(sj) * n];
      c = (beta == T(0) ? T(0) : beta * c) + ak;
      if constexpr (is_complex_v<T>) {
        if (f.hermitian && si == sj) c = T(c.real(), 0);
      }
    }
  return out;
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
                           " k " + std::to_string(k) + " grid " + std::to_string(g.nprow) + "x" +
                           std::to_string(g.npcol);
  EXPECT_LE(max_diff(expected, C.data).first, bound) << what << " vs serial reference";
  EXPECT_LE(max_diff(C_scalapack.data, C.data).first, bound) << what << " vs ScaLAPACK";
  EXPECT_LE(max_diff(expected, C_scalapack.data).first, bound) << what << " (ScaLAPACK itself)";
}

std::vector<Flags> all_flags(bool complex) {
  std::vector<Flags> out;
  for (const char u : {'U', 'L'}) {
    for (const char t : {'N', 'T', 'C'})
      if (!complex || t != 'C') out.push_back({false, u, t});
    if (complex)
      for (const char t : {'N', 'C'}) out.push_back({true, u, t});
  }
  return out;
}

template <class T>
class Psyr2k : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(Psyr2k, Types);

TYPED_TEST(Psyr2k, MatchesScaLapackAndSerialReference) {
  using T = TypeParam;
  for_each_case(5432, all_flags(is_complex_v<T>),
                [](std::mt19937& r, const BlacsGrid& g, const Flags& f, int id) {
                  run_case<T>(r, g, f, id);
                });
}

}  // namespace
}  // namespace shardmm::testing
