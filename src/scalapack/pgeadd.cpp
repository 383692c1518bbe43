// Matrix-addition drop-ins: ScaLAPACK's P?TRAN / P?TRANU / P?TRANC, P?GEADD and P?TRADD on
// shardmm::geadd and shardmm::tradd (front/geadd.cpp).
//
// Flow, as p?gemm's (pgemm.cpp): the grid of DESCA's context and its Mesh; PBLAS' checks
// (an illegal UPLO or TRANS first, then PB_Cchkmat on sub(A) and sub(C)) agreed over the grid
// with one MPI_Allreduce and reported through PB_Cabort alike on every process; PBLAS' quick
// returns (M = 0, N = 0, or alpha = 0 with beta = 1); then sub(A) and sub(C) as views of the
// caller's arrays and one library call. What moves: op(A) once, from sub(A)'s layout into
// sub(C)'s (a transpose first swaps each process's own tile, without communication); alpha =
// 0 moves nothing and only scales sub(C) (A is not read, as PBLAS promises).
#include <complex>
#include <string>

#include "scalapack/pblas.hpp"
#include "shardmm/blas3.hpp"
#include "shardmm/c/scalapack.h"

namespace shardmm::scalapack {
namespace {

// One call of the family: `flags` leading CHARACTER arguments (0 p?tran, 1 p?geadd: TRANS,
// 2 p?tradd: UPLO, TRANS), then M, N, ALPHA, A, IA, JA, DESCA, BETA, C, IC, JC, DESCC.
struct AddCall {
  char uplo = 'A';  // 'A': all of sub(C); 'U' / 'L': p?tradd's trapezoid
  char trans = 'T';
  int m = 0, n = 0;
  MatrixArg A, C;
  Finding flags;  // an illegal UPLO or TRANS
};

AddCall parse(int flags, char uplo, char trans, SHARDMM_PXTRAN_PARAMS(void)) {
  (void)alpha, (void)a, (void)beta, (void)c;
  AddCall x;
  x.uplo = uplo, x.trans = trans, x.m = *m, x.n = *n;
  const int pos_m = flags + 1, pos_n = flags + 2, desc_a = flags + 7, desc_c = flags + 12;
  const bool nota = trans == 'N';
  x.A = op_matrix_arg(!nota, "A", {ia, ja, desca}, x.m, x.n, pos_m, pos_n, desc_a);
  x.C = matrix_arg("C", {ic, jc, descc}, x.m, x.n, pos_m, pos_n, desc_c);
  const bool legal_trans = trans == 'N' || trans == 'T' || trans == 'C';
  const int trans_pos = flags;  // TRANS is the last flag
  if (flags == 2 && uplo != 'U' && uplo != 'L')
    x.flags.add(100, std::string("Illegal UPLO = ") + uplo);
  else if (flags >= 1 && !legal_trans)
    x.flags.add(trans_pos * 100, std::string("Illegal TRANS = ") + trans);
  return x;
}

template <Scalar T>
Op to_op(char t) {
  if (t == 'N') return Op::N;
  return t == 'C' && is_complex_v<T> ? Op::C : Op::T;
}

template <Scalar T>
void run(const char* routine, const Grid& g, const Mesh& mesh, const AddCall& x, const void* alpha,
         const void* a, const void* beta, void* c) {
  Finding f = x.flags;
  if (f.details.empty()) check_matrices(g, {&x.A, &x.C}, f);
  if (report_if_illegal(g, mesh, routine, f)) return;
  const T al = *static_cast<const T*>(alpha), be = *static_cast<const T*>(beta);
  if (x.m == 0 || x.n == 0 || (al == T(0) && be == T(1))) return;
  const DistMatrix<T> A = operand(mesh, sub_matrix(x.A, g), static_cast<const T*>(a));
  DistMatrix<T> C = operand(mesh, sub_matrix(x.C, g), static_cast<const T*>(c));
  if (x.uplo == 'A') return geadd(to_op<T>(x.trans), al, A, be, C);
  tradd(x.uplo == 'U' ? Uplo::Upper : Uplo::Lower, to_op<T>(x.trans), al, A, be, C);
}

// The one body behind every entry point of this file.
template <Scalar T>
void padd(const char* routine, int flags, char uplo, char trans,
          SHARDMM_PXTRAN_PARAMS(void)) noexcept {
  guarded(routine, desca[kCtxt], flags + 7, [&](const Grid& g, const Mesh& mesh) {
    const AddCall x =
        parse(flags, uplo, trans, m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc);
    run<T>(routine, g, mesh, x, alpha, a, beta, c);
  });
}

}  // namespace
}  // namespace shardmm::scalapack

// The prefixed entry points (ScaLAPACK's own spellings: dropin_entries.cpp).
#define SHARDMM_ARGS m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc
#define SHARDMM_TRAN(name, X, CT, T, trans)                           \
  void shardmm_p##name(SHARDMM_PXTRAN_PARAMS(CT)) {                   \
    shardmm::scalapack::padd<T>("P" #X, 0, 'A', trans, SHARDMM_ARGS); \
  }
#define SHARDMM_ADD(x, X, CT, T)                                                          \
  void shardmm_p##x##geadd(SHARDMM_PXGEADD_PARAMS(CT)) {                                  \
    shardmm::scalapack::padd<T>("P" #X "GEADD", 1, 'A', shardmm::scalapack::upper(trans), \
                                SHARDMM_ARGS);                                            \
  }                                                                                       \
  void shardmm_p##x##tradd(SHARDMM_PXTRADD_PARAMS(CT)) {                                  \
    shardmm::scalapack::padd<T>("P" #X "TRADD", 2, shardmm::scalapack::upper(uplo),       \
                                shardmm::scalapack::upper(trans), SHARDMM_ARGS);          \
  }

extern "C" {
SHARDMM_TRAN(stran, STRAN, float, float, 'T')
SHARDMM_TRAN(dtran, DTRAN, double, double, 'T')
SHARDMM_TRAN(ctranu, CTRANU, void, std::complex<float>, 'T')
SHARDMM_TRAN(ztranu, ZTRANU, void, std::complex<double>, 'T')
SHARDMM_TRAN(ctranc, CTRANC, void, std::complex<float>, 'C')
SHARDMM_TRAN(ztranc, ZTRANC, void, std::complex<double>, 'C')
SHARDMM_ADD(s, S, float, float)
SHARDMM_ADD(d, D, double, double)
SHARDMM_ADD(c, C, void, std::complex<float>)
SHARDMM_ADD(z, Z, void, std::complex<double>)
}
