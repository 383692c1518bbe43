// The triangular drop-ins (shardmm_p?trsm, shardmm_p?trmm from libshardmm_pxgemm) against
// ScaLAPACK's own p?trsm_ / p?trmm_ in the same program and against a serial OpenBLAS ?trsm /
// ?trmm, on random cases: every element type, SIDE, UPLO, TRANSA and DIAG, alpha including 0
// and 1, M or N = 0, random block sizes, sources and offsets, on every grid that fits the
// world (row- and column-major BLACS order). sub(A)'s other triangle holds NaN (and its
// diagonal too when DIAG = 'U'): reading it shows. The whole local arrays of B are compared,
// padding included: nothing outside sub(B) may change.
#include <complex>
#include <limits>
#include <string>

#include "blas/blas.hpp"
#include "core/instantiate.hpp"
#include "scalapack/pblas_test_util.hpp"
#include "scalapack/scalapack_pblas3.hpp"

namespace shardmm::testing {
namespace {

using Tri = void (*)(SHARDMM_PXTRSM_PARAMS(void));

// [solve][0 ScaLAPACK, 1 shardmm]
template <class T>
struct Routines;
SHARDMM_TEST_ROUTINES(Tri, float, &pstrmm_, &shardmm_pstrmm, &pstrsm_, &shardmm_pstrsm);
SHARDMM_TEST_ROUTINES(Tri, double, &pdtrmm_, &shardmm_pdtrmm, &pdtrsm_, &shardmm_pdtrsm);
SHARDMM_TEST_ROUTINES(Tri, std::complex<float>, &pctrmm_, &shardmm_pctrmm, &pctrsm_,
                      &shardmm_pctrsm);
SHARDMM_TEST_ROUTINES(Tri, std::complex<double>, &pztrmm_, &shardmm_pztrmm, &pztrsm_,
                      &shardmm_pztrsm);

struct Flags {
  bool solve = true;
  char side = 'L', uplo = 'U', trans = 'N', diag = 'N';
};

// sub(A)'s element (si, sj) (0-based within sub(A), na x na): a well-conditioned triangle,
// NaN where it must not be read.
template <class T>
T triangle(const Flags& f, int na, int si, int sj, int seed) {
  const bool in = f.uplo == 'U' ? si <= sj : si >= sj;
  if (!in || (si == sj && f.diag == 'U')) return T(std::numeric_limits<real_t<T>>::quiet_NaN());
  if (si == sj) return T(real_t<T>(na + 1)) + entry<T>(si, sj, seed);
  return entry<T>(si, sj, seed) / T(real_t<T>(na));
}

// The serial reference for this process's local array of B.
template <class T>
std::vector<T> reference(const BlacsGrid& g, const Flags& f, int m, int n, T alpha, int na,
                         const PMatrix<T>& B) {
  std::vector<T> a(std::size_t(na) * na), b(std::size_t(m) * n);
  for (int j = 0; j < na; ++j)
    for (int i = 0; i < na; ++i) a[i + std::size_t(j) * na] = triangle<T>(f, na, i, j, 1);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) b[i + std::size_t(j) * m] = alpha * entry<T>(i, j, 2);
  const Op op = f.trans == 'N' ? Op::N : (f.trans == 'C' ? Op::C : Op::T);
  const bool left = f.side == 'L', lower = f.uplo == 'L', unit = f.diag == 'U';
  if (alpha != T(0) && f.solve)
    blas::trsm(left, lower, op, unit, m, n, a.data(), std::max(na, 1), b.data(), std::max(m, 1));
  if (alpha != T(0) && !f.solve)
    blas::trmm(left, lower, op, unit, m, n, a.data(), std::max(na, 1), b.data(), std::max(m, 1));
  PMatrix<T> out = B;
  set_sub(g, out, m, n, [&](int i, int j) { return b[i + std::size_t(j) * m]; });
  return out.data;
}

template <class T>
void run_case(std::mt19937& rng, const BlacsGrid& g, const Flags& f, int id) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int m = pick(0, 6) == 0 ? 0 : pick(1, 15), n = pick(0, 6) == 0 ? 0 : pick(1, 13);
  const int na = f.side == 'L' ? m : n;
  PMatrix<T> A = random_matrix<T>(rng, g, na, na, 1);
  set_sub(g, A, na, na, [&](int i, int j) { return triangle<T>(f, na, i, j, 1); });
  PMatrix<T> B = random_matrix<T>(rng, g, m, n, 2);
  set_sub(g, B, m, n, [](int i, int j) { return entry<T>(i, j, 2); });
  const T alpha = pick_scalar<T>(rng, false);
  PMatrix<T> B_scalapack = B;
  const std::vector<T> expected = reference(g, f, m, n, alpha, na, B);
  const char side[2] = {f.side, 0}, uplo[2] = {f.uplo, 0}, trans[2] = {f.trans, 0},
             diag[2] = {f.diag, 0};
  for (auto [impl, X] : {std::pair{0, &B_scalapack}, std::pair{1, &B}})
    Routines<T>::get(f.solve, impl)(side, uplo, trans, diag, &m, &n, &alpha, A.data.data(), &A.i,
                                    &A.j, A.desc, X->data.data(), &X->i, &X->j, X->desc);
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  const double bound = 8 * eps * (na + 2) * (std::abs(alpha) + 1) * 2;
  const std::string what = "case " + std::to_string(id) + (f.solve ? " trsm" : " trmm") + " side " +
                           f.side + " uplo " + f.uplo + " trans " + f.trans + " diag " + f.diag +
                           " m " + std::to_string(m) + " n " + std::to_string(n) + grid_text(g);
  expect_matches(expected, B.data, B_scalapack.data, bound, what);
}

// Every SIDE, UPLO and TRANSA of both routines; DIAG alternates (both are drawn per routine).
std::vector<Flags> all_flags(bool complex) {
  std::vector<Flags> out;
  int i = 0;
  for (const bool solve : {true, false})
    for (const char s : {'L', 'R'})
      for (const char u : {'U', 'L'})
        for (const char t : {'N', 'T', 'C'}) {
          if (!complex && t == 'C' && i % 2 == 0) continue;  // real C is T: half of them
          out.push_back({solve, s, u, t, i++ % 2 == 0 ? 'N' : 'U'});
        }
  return out;
}

SHARDMM_PBLAS_CASES_TEST(Ptrsm, 8765)

}  // namespace
}  // namespace shardmm::testing
