// Rank-2k update drop-ins: ScaLAPACK's P?SYR2K and P?HER2K on shardmm::syr2k / shardmm::her2k
// (front/syrk.cpp).
//
// Flow, as p?syrk's (psyrk.cpp): the grid of DESCA's context and its Mesh; PBLAS' checks (an
// illegal UPLO, then an illegal TRANS, else PB_Cchkmat on sub(A), sub(B) and the N x N sub(C))
// agreed over the grid with one MPI_Allreduce and reported through PB_Cabort alike on every
// process; PBLAS' quick returns (N = 0, or alpha = 0 or K = 0 with beta = 1); then the
// submatrices as views of the caller's arrays and one library call. What moves: op(sub(A))'s
// and op(sub(B))'s rows, twice each (to the processes holding the matching rows and columns of
// sub(C)); sub(C) never moves and only its UPLO triangle is read or written.
#include <complex>
#include <string>
#include <type_traits>

#include "scalapack/rank_k_args.hpp"
#include "shardmm/blas3.hpp"
#include "shardmm/c/scalapack.h"

namespace shardmm::scalapack {
namespace {

// R: the type of BETA (T for p?syr2k, real_t<T> for p?her2k); ALPHA is T for both.
template <Scalar T, class R>
void run_rank2k(const char* routine, const Grid& g, const Mesh& mesh, const RankKCall& x, T alpha,
                const T* a, const T* b, R beta, T* c) {
  constexpr bool hermitian = !std::is_same_v<T, R>;
  if (report_if_illegal(g, mesh, routine, rank_k_finding<T>(g, x, hermitian))) return;
  if (x.n == 0 || ((alpha == T(0) || x.k == 0) && beta == R(1))) return;
  const DistMatrix<T> A = operand(mesh, sub_matrix(x.A, g), a);
  const DistMatrix<T> B = operand(mesh, sub_matrix(x.B, g), b);
  DistMatrix<T> C = operand(mesh, sub_matrix(x.C, g), static_cast<const T*>(c));
  const Uplo uplo = x.uplo == 'U' ? Uplo::Upper : Uplo::Lower;
  const Op op = x.trans == 'N' ? Op::N : (hermitian && is_complex_v<T> ? Op::C : Op::T);
  if constexpr (hermitian) her2k(uplo, op, alpha, A, B, beta, C);
  else syr2k(uplo, op, alpha, A, B, beta, C);
}

// The one body behind every entry point of this file.
template <Scalar T, class R>
void prank2k(const char* routine, SHARDMM_PXSYR2K_PARAMS(void, void)) noexcept {
  guarded(routine, desca[kCtxt], kRankKDescA, [&](const Grid& g, const Mesh& mesh) {
    const MatrixRef b_ref{ib, jb, descb};
    const RankKCall x = parse_rank_k(uplo, trans, n, k, {ia, ja, desca}, &b_ref, {ic, jc, descc});
    run_rank2k<T, R>(routine, g, mesh, x, *static_cast<const T*>(alpha), static_cast<const T*>(a),
                     static_cast<const T*>(b), *static_cast<const R*>(beta), static_cast<T*>(c));
  });
}

}  // namespace
}  // namespace shardmm::scalapack

// The prefixed entry points (ScaLAPACK's own spellings: dropin_entries.cpp).
#define SHARDMM_ARGS \
  uplo, trans, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc
#define SHARDMM_ENTRY(name, NAME, CT, CR, T, R)                 \
  void shardmm_p##name(SHARDMM_PXSYR2K_PARAMS(CT, CR)) {        \
    shardmm::scalapack::prank2k<T, R>("P" #NAME, SHARDMM_ARGS); \
  }

extern "C" {
SHARDMM_ENTRY(ssyr2k, SSYR2K, float, float, float, float)
SHARDMM_ENTRY(dsyr2k, DSYR2K, double, double, double, double)
SHARDMM_ENTRY(csyr2k, CSYR2K, void, void, std::complex<float>, std::complex<float>)
SHARDMM_ENTRY(zsyr2k, ZSYR2K, void, void, std::complex<double>, std::complex<double>)
SHARDMM_ENTRY(cher2k, CHER2K, void, float, std::complex<float>, float)
SHARDMM_ENTRY(zher2k, ZHER2K, void, double, std::complex<double>, double)
}
