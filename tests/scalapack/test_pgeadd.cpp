// The matrix additions of the drop-in (shardmm_p?tran / tranu / tranc, shardmm_p?geadd,
// shardmm_p?tradd from libshardmm_pxgemm) against ScaLAPACK's own p?tran_ ... p?tradd_ in the
// same program and against a serial reference, on random cases: every element type, every
// UPLO / TRANS, alpha and beta including 0 and 1, random block sizes, sources and offsets,
// empty submatrices, on every grid that fits the world (row- and column-major BLACS order).
// The whole local arrays are compared, padding included (nothing outside sub(C), or outside
// p?tradd's trapezoid, may change).
#include <cmath>
#include <complex>
#include <limits>
#include <string>

#include "core/instantiate.hpp"
#include "scalapack/pblas_test_util.hpp"
#include "scalapack/scalapack_pblas3.hpp"

namespace shardmm::testing {
namespace {

using Tran = void (*)(SHARDMM_PXTRAN_PARAMS(void));
using Geadd = void (*)(SHARDMM_PXGEADD_PARAMS(void));
using Tradd = void (*)(SHARDMM_PXTRADD_PARAMS(void));

// Both implementations of each routine of type T: [0] ScaLAPACK's, [1] shardmm's.
template <class T>
struct Routines;
#define SHARDMM_ROUTINES(T, x, tu, tc)                                                        \
  template <>                                                                                 \
  struct Routines<T> {                                                                        \
    static Tran tran(bool conj, int i) {                                                      \
      const Tran own[2][2] = {                                                                \
          {reinterpret_cast<Tran>(&p##x##tu##_), reinterpret_cast<Tran>(&shardmm_p##x##tu)},  \
          {reinterpret_cast<Tran>(&p##x##tc##_), reinterpret_cast<Tran>(&shardmm_p##x##tc)}}; \
      return own[conj][i];                                                                    \
    }                                                                                         \
    static Geadd geadd(int i) {                                                               \
      return i ? reinterpret_cast<Geadd>(&shardmm_p##x##geadd)                                \
               : reinterpret_cast<Geadd>(&p##x##geadd_);                                      \
    }                                                                                         \
    static Tradd tradd(int i) {                                                               \
      return i ? reinterpret_cast<Tradd>(&shardmm_p##x##tradd)                                \
               : reinterpret_cast<Tradd>(&p##x##tradd_);                                      \
    }                                                                                         \
  };
SHARDMM_ROUTINES(float, s, tran, tran)
SHARDMM_ROUTINES(double, d, tran, tran)
SHARDMM_ROUTINES(std::complex<float>, c, tranu, tranc)
SHARDMM_ROUTINES(std::complex<double>, z, tranu, tranc)
#undef SHARDMM_ROUTINES

// One call: routine 0 p?tran(u), 1 p?tranc, 2 p?geadd, 3 p?tradd.
struct Flags {
  int routine = 0;
  char uplo = 'U', trans = 'N';
};

// op(sub(A))(si, sj) of the case.
template <class T>
T op_a(const PMatrix<T>& A, char trans, int si, int sj) {
  const bool t = trans != 'N';
  const T a = entry<T>(A.i - 1 + (t ? sj : si), A.j - 1 + (t ? si : sj), A.seed);
  if constexpr (is_complex_v<T>) return trans == 'C' ? std::conj(a) : a;
  return a;
}

// The serial reference for this process's local array of C.
template <class T>
std::vector<T> reference(const BlacsGrid& g, const Flags& f, int m, int n, T alpha,
                         const PMatrix<T>& A, T beta, const PMatrix<T>& C) {
  std::vector<T> out = C.data;
  for (int jl = 0; jl < C.lc; ++jl)
    for (int il = 0; il < C.lr; ++il) {
      const int si = int(C.row_map().to_global(il, g.row)) - (C.i - 1);
      const int sj = int(C.col_map().to_global(jl, g.col)) - (C.j - 1);
      if (si < 0 || si >= m || sj < 0 || sj >= n) continue;
      if (f.routine == 3 && (f.uplo == 'U' ? si > sj : si < sj)) continue;
      T& c = out[il + std::size_t(jl) * C.lld];
      c = (beta == T(0) ? T(0) : beta * c) +
          (alpha == T(0) ? T(0) : alpha * op_a(A, f.trans, si, sj));
    }
  return out;
}

template <class T>
void call(int impl, const Flags& f, int m, int n, T alpha, const PMatrix<T>& A, T beta,
          PMatrix<T>& C) {
  const char uplo[2] = {f.uplo, 0}, trans[2] = {f.trans, 0};
  const auto args = [&](auto fn, auto... flags) {
    fn(flags..., &m, &n, &alpha, A.data.data(), &A.i, &A.j, A.desc, &beta, C.data.data(), &C.i,
       &C.j, C.desc);
  };
  if (f.routine <= 1) args(Routines<T>::tran(f.routine == 1, impl));
  if (f.routine == 2) args(Routines<T>::geadd(impl), trans);
  if (f.routine == 3) args(Routines<T>::tradd(impl), uplo, trans);
}

template <class T>
void run_case(std::mt19937& rng, const BlacsGrid& g, const Flags& f, int id) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int m = pick(0, 5) == 0 ? 0 : pick(1, 13), n = pick(0, 5) == 0 ? 0 : pick(1, 13);
  const bool t = f.routine <= 1 || f.trans != 'N';
  const PMatrix<T> A = random_matrix<T>(rng, g, t ? n : m, t ? m : n, 1);
  PMatrix<T> C = random_matrix<T>(rng, g, m, n, 2);
  const T alpha = pick_scalar<T>(rng, false), beta = pick_scalar<T>(rng, true);
  PMatrix<T> C_scalapack = C;
  const std::vector<T> expected = reference(g, f, m, n, alpha, A, beta, C);
  call(0, f, m, n, alpha, A, beta, C_scalapack);
  call(1, f, m, n, alpha, A, beta, C);
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  const double bound = 4 * eps * (std::abs(alpha) + std::abs(beta) + 1);  // entries <= 1
  const std::string what = "case " + std::to_string(id) + " routine " + std::to_string(f.routine) +
                           " uplo " + f.uplo + " trans " + f.trans + " m " + std::to_string(m) +
                           " n " + std::to_string(n) + grid_text(g);
  expect_matches(expected, C.data, C_scalapack.data, bound, what);
}

std::vector<Flags> all_flags(bool complex) {
  std::vector<Flags> out{{0, 'U', 'T'}};
  if (complex) out.push_back({1, 'U', 'C'});
  for (const char t : {'N', 'T', 'C'}) {
    out.push_back({2, 'U', t});
    for (const char u : {'U', 'L'}) out.push_back({3, u, t});
  }
  return out;
}

SHARDMM_PBLAS_CASES_TEST(Padd, 1234)

}  // namespace
}  // namespace shardmm::testing
