/* shardmm's ScaLAPACK-compatible p?gemm, callable next to ScaLAPACK's own.
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

#ifdef __cplusplus
}
#endif

#endif /* SHARDMM_C_SCALAPACK_H */
