/* shardmm's ScaLAPACK-compatible p?gemm, matrix additions (p?tran*, p?geadd, p?tradd) and
 * rank-k updates (p?syrk, p?herk), callable next to ScaLAPACK's own.
 *
 * libshardmm_scalapack exports PSGEMM, PDGEMM, PCGEMM and PZGEMM with ScaLAPACK's exact
 * signatures under every Fortran spelling (psgemm_, psgemm, PSGEMM, ...): link it ahead of
 * ScaLAPACK and an unchanged ScaLAPACK program multiplies with shardmm. The prefixed names
 * declared here (shardmm_psgemm, ...) do the same; libshardmm_pxgemm exports only them, so it
 * coexists with ScaLAPACK's own p?gemm_ in one program. Semantics are ScaLAPACK's:
 *
 *   sub(C) := alpha * op(sub(A)) * op(sub(B)) + beta * sub(C),  sub(X) = X(IX:, JX:)
 *
 * on the BLACS grid of DESCA's context (any grid order, any communicator), with descriptors of
 * type 1 (DTYPE, CTXT, M, N, MB, NB, RSRC, CSRC, LLD) or type 2 (DTYPE, CTXT, M, N, IMB, INB,
 * MB, NB, RSRC, CSRC, LLD: a first block of IMB x INB), RSRC/CSRC = -1: replicated, any
 * offsets and block sizes. Illegal arguments are reported as PBLAS reports them, on every
 * process of the grid alike: PB_Cabort(ICTXT, "PDGEMM", INFO), INFO = -(the argument's
 * position), or -(position*100 + entry) for a descriptor entry numbered in the type-2 form
 * (e.g. -1005: DESCA's MB or IMB); libscalapack's PB_Cabort then ends the program, one the
 * program defines itself may return, and the call returns without computing.
 * Complex arguments (pcgemm, pzgemm) point to interleaved (real, imaginary) pairs.
 */
#ifndef SHARDMM_C_SCALAPACK_H
#define SHARDMM_C_SCALAPACK_H

#ifdef __cplusplus
extern "C" {
#endif

#define SHARDMM_PXGEMM_PARAMS(T)                                                              \
  const char *transa, const char *transb, const int *m, const int *n, const int *k,           \
      const T *alpha, const T *a, const int *ia, const int *ja, const int *desca, const T *b, \
      const int *ib, const int *jb, const int *descb, const T *beta, T *c, const int *ic,     \
      const int *jc, const int *descc

void shardmm_psgemm(SHARDMM_PXGEMM_PARAMS(float));
void shardmm_pdgemm(SHARDMM_PXGEMM_PARAMS(double));
void shardmm_pcgemm(SHARDMM_PXGEMM_PARAMS(void)); /* complex float pairs */
void shardmm_pzgemm(SHARDMM_PXGEMM_PARAMS(void)); /* complex double pairs */

/* The matrix additions (PBLAS level 3), same conventions:
 *   p?tran, p?tranu  sub(C) := beta * sub(C) + alpha * sub(A)^T      (sub(A) is N x M)
 *   p?tranc          sub(C) := beta * sub(C) + alpha * sub(A)^H
 *   p?geadd          sub(C) := beta * sub(C) + alpha * op(sub(A)),   op per TRANS (N, T, C)
 *   p?tradd          the same on the UPLO trapezoid of sub(C) only
 * with sub(C) = C(IC:IC+M-1, JC:JC+N-1). */
#define SHARDMM_PXTRAN_PARAMS(T)                                                        \
  const int *m, const int *n, const T *alpha, const T *a, const int *ia, const int *ja, \
      const int *desca, const T *beta, T *c, const int *ic, const int *jc, const int *descc
#define SHARDMM_PXGEADD_PARAMS(T) const char *trans, SHARDMM_PXTRAN_PARAMS(T)
#define SHARDMM_PXTRADD_PARAMS(T) const char *uplo, const char *trans, SHARDMM_PXTRAN_PARAMS(T)

void shardmm_pstran(SHARDMM_PXTRAN_PARAMS(float));
void shardmm_pdtran(SHARDMM_PXTRAN_PARAMS(double));
void shardmm_pctranu(SHARDMM_PXTRAN_PARAMS(void));
void shardmm_pztranu(SHARDMM_PXTRAN_PARAMS(void));
void shardmm_pctranc(SHARDMM_PXTRAN_PARAMS(void));
void shardmm_pztranc(SHARDMM_PXTRAN_PARAMS(void));
void shardmm_psgeadd(SHARDMM_PXGEADD_PARAMS(float));
void shardmm_pdgeadd(SHARDMM_PXGEADD_PARAMS(double));
void shardmm_pcgeadd(SHARDMM_PXGEADD_PARAMS(void));
void shardmm_pzgeadd(SHARDMM_PXGEADD_PARAMS(void));
void shardmm_pstradd(SHARDMM_PXTRADD_PARAMS(float));
void shardmm_pdtradd(SHARDMM_PXTRADD_PARAMS(double));
void shardmm_pctradd(SHARDMM_PXTRADD_PARAMS(void));
void shardmm_pztradd(SHARDMM_PXTRADD_PARAMS(void));

/* The rank-k updates: sub(C) := alpha * op(sub(A)) * op(sub(A))' + beta * sub(C) on the UPLO
 * triangle of the N x N sub(C), op(sub(A)) N x K, ' = ^T (p?syrk; TRANS N or T, and C for
 * real types) or ^H (p?herk; TRANS N or C; ALPHA and BETA real, the diagonal's imaginary
 * parts set to zero). R is the type of ALPHA and BETA. */
#define SHARDMM_PXSYRK_PARAMS(T, R)                                                            \
  const char *uplo, const char *trans, const int *n, const int *k, const R *alpha, const T *a, \
      const int *ia, const int *ja, const int *desca, const R *beta, T *c, const int *ic,      \
      const int *jc, const int *descc

void shardmm_pssyrk(SHARDMM_PXSYRK_PARAMS(float, float));
void shardmm_pdsyrk(SHARDMM_PXSYRK_PARAMS(double, double));
void shardmm_pcsyrk(SHARDMM_PXSYRK_PARAMS(void, void));
void shardmm_pzsyrk(SHARDMM_PXSYRK_PARAMS(void, void));
void shardmm_pcherk(SHARDMM_PXSYRK_PARAMS(void, float));
void shardmm_pzherk(SHARDMM_PXSYRK_PARAMS(void, double));

/* p?trsm / p?trmm: sub(B) <- alpha op(sub(A))^-1 sub(B), alpha op(sub(A)) sub(B) (SIDE 'L') or
 * the same on sub(B)'s right (SIDE 'R'), sub(A) triangular (UPLO, DIAG). */
#define SHARDMM_PXTRSM_PARAMS(T)                                                                \
  const char *side, const char *uplo, const char *transa, const char *diag, const int *m,       \
      const int *n, const T *alpha, const T *a, const int *ia, const int *ja, const int *desca, \
      T *b, const int *ib, const int *jb, const int *descb

void shardmm_pstrsm(SHARDMM_PXTRSM_PARAMS(float));
void shardmm_pdtrsm(SHARDMM_PXTRSM_PARAMS(double));
void shardmm_pctrsm(SHARDMM_PXTRSM_PARAMS(void));
void shardmm_pztrsm(SHARDMM_PXTRSM_PARAMS(void));
void shardmm_pstrmm(SHARDMM_PXTRSM_PARAMS(float));
void shardmm_pdtrmm(SHARDMM_PXTRSM_PARAMS(double));
void shardmm_pctrmm(SHARDMM_PXTRSM_PARAMS(void));
void shardmm_pztrmm(SHARDMM_PXTRSM_PARAMS(void));

/* p?symm / p?hemm: sub(C) <- alpha sub(A) sub(B) + beta sub(C) (SIDE 'L') or alpha sub(B)
 * sub(A) + beta sub(C) (SIDE 'R'), sub(A) symmetric / Hermitian with its UPLO triangle read. */
#define SHARDMM_PXSYMM_PARAMS(T)                                                                \
  const char *side, const char *uplo, const int *m, const int *n, const T *alpha, const T *a,   \
      const int *ia, const int *ja, const int *desca, const T *b, const int *ib, const int *jb, \
      const int *descb, const T *beta, T *c, const int *ic, const int *jc, const int *descc

void shardmm_pssymm(SHARDMM_PXSYMM_PARAMS(float));
void shardmm_pdsymm(SHARDMM_PXSYMM_PARAMS(double));
void shardmm_pcsymm(SHARDMM_PXSYMM_PARAMS(void));
void shardmm_pzsymm(SHARDMM_PXSYMM_PARAMS(void));
void shardmm_pchemm(SHARDMM_PXSYMM_PARAMS(void));
void shardmm_pzhemm(SHARDMM_PXSYMM_PARAMS(void));

/* p?syr2k / p?her2k: sub(C) := alpha op(sub(A)) op(sub(B))' + alpha' op(sub(B)) op(sub(A))' +
 * beta sub(C) on the UPLO triangle of the N x N sub(C), op(.) N x K; ' = ^T and alpha' = alpha
 * (p?syr2k) or ^H and conj(alpha) (p?her2k: BETA real, the diagonal's imaginary parts set to
 * zero). R is the type of BETA. */
#define SHARDMM_PXSYR2K_PARAMS(T, R)                                                            \
  const char *uplo, const char *trans, const int *n, const int *k, const T *alpha, const T *a,  \
      const int *ia, const int *ja, const int *desca, const T *b, const int *ib, const int *jb, \
      const int *descb, const R *beta, T *c, const int *ic, const int *jc, const int *descc

void shardmm_pssyr2k(SHARDMM_PXSYR2K_PARAMS(float, float));
void shardmm_pdsyr2k(SHARDMM_PXSYR2K_PARAMS(double, double));
void shardmm_pcsyr2k(SHARDMM_PXSYR2K_PARAMS(void, void));
void shardmm_pzsyr2k(SHARDMM_PXSYR2K_PARAMS(void, void));
void shardmm_pcher2k(SHARDMM_PXSYR2K_PARAMS(void, float));
void shardmm_pzher2k(SHARDMM_PXSYR2K_PARAMS(void, double));

#ifdef __cplusplus
}
#endif

#endif /* SHARDMM_C_SCALAPACK_H */
