// Rank-k update drop-ins: ScaLAPACK's P?SYRK and P?HERK on shardmm::syrk / shardmm::herk
// (front/syrk.cpp).
//
// Flow, as p?gemm's (pgemm.cpp): the grid of DESCA's context and its Mesh; PBLAS' checks (an
// illegal UPLO, then an illegal TRANS, else PB_Cchkmat on sub(A) and on the N x N sub(C))
// agreed over the grid with one MPI_Allreduce and reported through PB_Cabort alike on every
// process; PBLAS' quick returns (N = 0, or alpha = 0 or K = 0 with beta = 1); then sub(A) and
// sub(C) as views of the caller's arrays and one library call. What moves: op(sub(A))'s rows,
// twice (to the processes holding the matching rows and columns of sub(C)); sub(C) never
// moves and only its UPLO triangle is read or written.
#include <complex>
#include <string>
#include <type_traits>

#include "scalapack/rank_k_args.hpp"
#include "shardmm/blas3.hpp"
#include "shardmm/c/scalapack.h"

namespace shardmm::scalapack {
namespace {

// R: the type of ALPHA and BETA (T for p?syrk, real_t<T> for p?herk).
template <Scalar T, class R>
void run(const char* routine, const Grid& g, const Mesh& mesh, const RankKCall& x, R alpha,
         const T* a, R beta, T* c) {
  constexpr bool hermitian = !std::is_same_v<T, R>;
  if (report_if_illegal(g, mesh, routine, rank_k_finding<T>(g, x, hermitian))) return;
  if (x.n == 0 || ((alpha == R(0) || x.k == 0) && beta == R(1))) return;
  const DistMatrix<T> A = operand(mesh, sub_matrix(x.A, g), a);
  DistMatrix<T> C = operand(mesh, sub_matrix(x.C, g), static_cast<const T*>(c));
  const Uplo uplo = x.uplo == 'U' ? Uplo::Upper : Uplo::Lower;
  const Op op = x.trans == 'N' ? Op::N : (hermitian && is_complex_v<T> ? Op::C : Op::T);
  if constexpr (hermitian) herk(uplo, op, alpha, A, beta, C);
  else syrk(uplo, op, alpha, A, beta, C);
}

// The one body behind every entry point of this file.
template <Scalar T, class R>
void psyrk(const char* routine, SHARDMM_PXSYRK_PARAMS(void, void)) noexcept {
  guarded(routine, desca[kCtxt], kRankKDescA, [&](const Grid& g, const Mesh& mesh) {
    const RankKCall x = parse_rank_k(uplo, trans, n, k, {ia, ja, desca}, nullptr, {ic, jc, descc});
    run<T, R>(routine, g, mesh, x, *static_cast<const R*>(alpha), static_cast<const T*>(a),
              *static_cast<const R*>(beta), static_cast<T*>(c));
  });
}

}  // namespace
}  // namespace shardmm::scalapack

// The prefixed entry points (ScaLAPACK's own spellings: dropin_entries.cpp).
#define SHARDMM_ARGS uplo, trans, n, k, alpha, a, ia, ja, desca, beta, c, ic, jc, descc
#define SHARDMM_ENTRY(name, NAME, CT, CR, T, R)               \
  void shardmm_p##name(SHARDMM_PXSYRK_PARAMS(CT, CR)) {       \
    shardmm::scalapack::psyrk<T, R>("P" #NAME, SHARDMM_ARGS); \
  }

extern "C" {
SHARDMM_ENTRY(ssyrk, SSYRK, float, float, float, float)
SHARDMM_ENTRY(dsyrk, DSYRK, double, double, double, double)
SHARDMM_ENTRY(csyrk, CSYRK, void, void, std::complex<float>, std::complex<float>)
SHARDMM_ENTRY(zsyrk, ZSYRK, void, void, std::complex<double>, std::complex<double>)
SHARDMM_ENTRY(cherk, CHERK, void, float, std::complex<float>, float)
SHARDMM_ENTRY(zherk, ZHERK, void, double, std::complex<double>, double)
}
