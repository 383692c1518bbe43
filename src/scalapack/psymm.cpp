// Symmetric and Hermitian product drop-ins: ScaLAPACK's P?SYMM and P?HEMM on shardmm::symm /
// shardmm::hemm (front/symm.cpp).
//
// Flow, as p?gemm's (pgemm.cpp): the grid of DESCA's context (as PBLAS: a process outside it
// reports -(900 + CTXT_)) and its Mesh; PBLAS' checks (an illegal SIDE, else UPLO, else
// PB_Cchkmat on the square sub(A) (M x M for SIDE 'L', N x N for 'R'), sub(B) and sub(C), all
// M x N) agreed over the grid with one MPI_Allreduce and reported through PB_Cabort alike on
// every process; PBLAS' quick returns (M = 0, N = 0, or alpha = 0 with beta = 1) and alpha = 0
// (sub(C) <- beta sub(C), neither A nor B read); then the submatrices as views of the
// caller's arrays and one library call. What moves: sub(A) once (its other triangle from its
// transpose), then what the product's plan moves.
#include <complex>
#include <string>

#include "scalapack/pblas.hpp"
#include "shardmm/blas3.hpp"
#include "shardmm/c/scalapack.h"

namespace shardmm::scalapack {
namespace {

constexpr int kSymmPosM = 3, kSymmPosN = 4, kSymmDescA = 9, kSymmDescB = 13, kSymmDescC = 18;

struct SymmCall {
  char side = 'L', uplo = 'U';
  int m = 0, n = 0;
  MatrixArg A, B, C;
};

// The square sub(A) is M x M for SIDE 'L', else N x N; sub(B) and sub(C) are M x N.
SymmCall parse_symm(const char* side, const char* uplo, const int* m, const int* n, MatrixRef a,
                    MatrixRef b, MatrixRef c) {
  SymmCall x;
  x.side = upper(side), x.uplo = upper(uplo), x.m = *m, x.n = *n;
  const bool left = x.side == 'L';
  const int na = left ? x.m : x.n, pos = left ? kSymmPosM : kSymmPosN;
  x.A = matrix_arg("A", a, na, na, pos, pos, kSymmDescA);
  x.B = matrix_arg("B", b, x.m, x.n, kSymmPosM, kSymmPosN, kSymmDescB);
  x.C = matrix_arg("C", c, x.m, x.n, kSymmPosM, kSymmPosN, kSymmDescC);
  return x;
}

Finding symm_finding(const Grid& g, const SymmCall& x) {
  Finding f;
  if (check_flag(f, 100, "SIDE", x.side, "LR") && check_flag(f, 200, "UPLO", x.uplo, "UL"))
    check_matrices(g, {&x.A, &x.B, &x.C}, f);
  return f;
}

template <Scalar T>
void run_symm(const char* routine, bool hermitian, const Grid& g, const Mesh& mesh,
              const SymmCall& x, T alpha, const T* a, const T* b, T beta, T* c) {
  if (report_if_illegal(g, mesh, routine, symm_finding(g, x))) return;
  if (x.m == 0 || x.n == 0 || (alpha == T(0) && beta == T(1))) return;
  const SubMatrix sc = sub_matrix(x.C, g);
  if (alpha == T(0)) return scale_local(mesh, sc, beta, c);  // neither A nor B is read
  const DistMatrix<T> A = operand(mesh, sub_matrix(x.A, g), a);
  const DistMatrix<T> B = operand(mesh, sub_matrix(x.B, g), b);
  DistMatrix<T> C = operand(mesh, sc, static_cast<const T*>(c));
  const Side side = x.side == 'L' ? Side::Left : Side::Right;
  const Uplo uplo = x.uplo == 'U' ? Uplo::Upper : Uplo::Lower;
  if (hermitian) hemm(side, uplo, alpha, A, B, beta, C);
  else symm(side, uplo, alpha, A, B, beta, C);
}

// The one body behind every entry point of this file.
template <Scalar T>
void psymm(const char* routine, bool hermitian, SHARDMM_PXSYMM_PARAMS(void)) noexcept {
  guarded(routine, desca[kCtxt], kSymmDescA, [&](const Grid& g, const Mesh& mesh) {
    const SymmCall x =
        parse_symm(side, uplo, m, n, {ia, ja, desca}, {ib, jb, descb}, {ic, jc, descc});
    run_symm<T>(routine, hermitian, g, mesh, x, *static_cast<const T*>(alpha),
                static_cast<const T*>(a), static_cast<const T*>(b), *static_cast<const T*>(beta),
                static_cast<T*>(c));
  });
}

}  // namespace
}  // namespace shardmm::scalapack

// The prefixed entry points (ScaLAPACK's own spellings: dropin_entries.cpp).
#define SHARDMM_ARGS \
  side, uplo, m, n, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc
#define SHARDMM_ENTRY(name, NAME, CT, T, hermitian)                   \
  void shardmm_p##name(SHARDMM_PXSYMM_PARAMS(CT)) {                   \
    shardmm::scalapack::psymm<T>("P" #NAME, hermitian, SHARDMM_ARGS); \
  }

extern "C" {
SHARDMM_ENTRY(ssymm, SSYMM, float, float, false)
SHARDMM_ENTRY(dsymm, DSYMM, double, double, false)
SHARDMM_ENTRY(csymm, CSYMM, void, std::complex<float>, false)
SHARDMM_ENTRY(zsymm, ZSYMM, void, std::complex<double>, false)
SHARDMM_ENTRY(chemm, CHEMM, void, std::complex<float>, true)
SHARDMM_ENTRY(zhemm, ZHEMM, void, std::complex<double>, true)
}
