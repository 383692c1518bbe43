// ScaLAPACK's own names for p?gemm, in the three Fortran spellings (psgemm_, psgemm, PSGEMM,
// ...), forwarding to shardmm_p?gemm. Only libshardmm_scalapack (the drop-in) has them;
// libshardmm_pxgemm has the prefixed names alone, so it coexists with ScaLAPACK in any order.
#include "shardmm/c/scalapack.h"

#define SHARDMM_ARGS \
  transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc
#define SHARDMM_SPELLING(name, x, CT) \
  void name(SHARDMM_PXGEMM_PARAMS(CT)) { shardmm_p##x##gemm(SHARDMM_ARGS); }
#define SHARDMM_SPELLINGS(x, X, CT)    \
  SHARDMM_SPELLING(p##x##gemm_, x, CT) \
  SHARDMM_SPELLING(p##x##gemm, x, CT)  \
  SHARDMM_SPELLING(P##X##GEMM, x, CT)

extern "C" {
SHARDMM_SPELLINGS(s, S, float)
SHARDMM_SPELLINGS(d, D, double)
SHARDMM_SPELLINGS(c, C, void)
SHARDMM_SPELLINGS(z, Z, void)
}
