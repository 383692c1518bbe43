// Triangular drop-ins: ScaLAPACK's P?TRSM and P?TRMM on shardmm::trsm / shardmm::trmm
// (front/triangular.cpp).
//
// Flow, as p?gemm's (pgemm.cpp): the grid of DESCA's context (as PBLAS: a process outside it
// reports -(1100 + CTXT_)) and its Mesh; PBLAS' checks (an illegal SIDE, else UPLO, else
// TRANSA, then DIAG (P?TRSM: else DIAG; P?TRMM: a DIAG error replaces the others), else
// PB_Cchkmat on the square sub(A) (M x M for SIDE 'L', N x N for 'R') and on the M x N sub(B))
// agreed over the grid with one MPI_Allreduce and reported through PB_Cabort alike on every
// process; PBLAS' quick return (M = 0 or N = 0) and alpha = 0 (sub(B) set to zero, A not read);
// then sub(A) and sub(B) as views of the caller's arrays and one library call. What moves:
// op(sub(A))'s rows (columns for SIDE 'R') once, to the processes holding the matching rows
// (columns) of sub(B), then one block of sub(B) per step along the process columns (rows);
// sub(B) never moves and only sub(A)'s UPLO triangle is used.
#include <complex>
#include <string>

#include "scalapack/pblas.hpp"
#include "shardmm/blas3.hpp"
#include "shardmm/c/scalapack.h"

namespace shardmm::scalapack {
namespace {

constexpr int kPosM = 5, kPosN = 6, kTriDescA = 11, kTriDescB = 15;  // argument positions

struct TriangularCall {
  char side = 'L', uplo = 'U', trans = 'N', diag = 'N';
  int m = 0, n = 0;
  MatrixArg A, B;
};

TriangularCall parse_triangular(const char* side, const char* uplo, const char* trans,
                                const char* diag, const int* m, const int* n, MatrixRef a,
                                MatrixRef b) {
  TriangularCall x;
  x.side = upper(side), x.uplo = upper(uplo), x.trans = upper(trans), x.diag = upper(diag);
  x.m = *m, x.n = *n;
  const bool left = x.side == 'L';
  const int na = left ? x.m : x.n, pos = left ? kPosM : kPosN;
  x.A = matrix_arg("A", a, na, na, pos, pos, kTriDescA);
  x.B = matrix_arg("B", b, x.m, x.n, kPosM, kPosN, kTriDescB);
  return x;
}

// PBLAS' order: SIDE, else UPLO, else TRANSA; DIAG after them (P?TRSM: else DIAG; P?TRMM: its
// own test, whose code replaces an earlier one); the matrices only when the flags are legal.
Finding triangular_finding(const Grid& g, const TriangularCall& x, bool solve) {
  Finding f;
  if (check_flag(f, 100, "SIDE", x.side, "LR") && check_flag(f, 200, "UPLO", x.uplo, "UL"))
    check_flag(f, 300, "TRANS", x.trans, "NTC");
  const bool diag_bad = x.diag != 'N' && x.diag != 'U';
  if (diag_bad && (!solve || f.details.empty())) {
    f.details.push_back(std::string("Illegal DIAG = ") + x.diag);
    f.code = 400;
  }
  if (f.details.empty()) check_matrices(g, {&x.A, &x.B}, f);
  return f;
}

template <Scalar T>
void run_triangular(const char* routine, bool solve, const Grid& g, const Mesh& mesh,
                    const TriangularCall& x, T alpha, const T* a, T* b) {
  if (report_if_illegal(g, mesh, routine, triangular_finding(g, x, solve))) return;
  if (x.m == 0 || x.n == 0) return;
  const SubMatrix sb = sub_matrix(x.B, g);
  if (alpha == T(0)) return scale_local(mesh, sb, T(0), b);  // A is not read
  const DistMatrix<T> A = operand(mesh, sub_matrix(x.A, g), a);
  DistMatrix<T> B = operand(mesh, sb, static_cast<const T*>(b));
  const Side side = x.side == 'L' ? Side::Left : Side::Right;
  const Uplo uplo = x.uplo == 'U' ? Uplo::Upper : Uplo::Lower;
  const Op op = x.trans == 'N' ? Op::N : (x.trans == 'C' && is_complex_v<T> ? Op::C : Op::T);
  const Diag diag = x.diag == 'U' ? Diag::Unit : Diag::NonUnit;
  if (solve) trsm(side, uplo, op, diag, alpha, A, B);
  else trmm(side, uplo, op, diag, alpha, A, B);
}

// The one body behind every entry point of this file.
template <Scalar T>
void ptriangular(const char* routine, bool solve, SHARDMM_PXTRSM_PARAMS(void)) noexcept {
  guarded(routine, desca[kCtxt], kTriDescA, [&](const Grid& g, const Mesh& mesh) {
    const TriangularCall x =
        parse_triangular(side, uplo, transa, diag, m, n, {ia, ja, desca}, {ib, jb, descb});
    run_triangular<T>(routine, solve, g, mesh, x, *static_cast<const T*>(alpha),
                      static_cast<const T*>(a), static_cast<T*>(b));
  });
}

}  // namespace
}  // namespace shardmm::scalapack

// The prefixed entry points (ScaLAPACK's own spellings: dropin_entries.cpp).
#define SHARDMM_ARGS side, uplo, transa, diag, m, n, alpha, a, ia, ja, desca, b, ib, jb, descb
#define SHARDMM_ENTRY(x, X, CT, T)                                          \
  void shardmm_p##x##trsm(SHARDMM_PXTRSM_PARAMS(CT)) {                      \
    shardmm::scalapack::ptriangular<T>("P" #X "TRSM", true, SHARDMM_ARGS);  \
  }                                                                         \
  void shardmm_p##x##trmm(SHARDMM_PXTRSM_PARAMS(CT)) {                      \
    shardmm::scalapack::ptriangular<T>("P" #X "TRMM", false, SHARDMM_ARGS); \
  }

extern "C" {
SHARDMM_ENTRY(s, S, float, float)
SHARDMM_ENTRY(d, D, double, double)
SHARDMM_ENTRY(c, C, void, std::complex<float>)
SHARDMM_ENTRY(z, Z, void, std::complex<double>)
}
