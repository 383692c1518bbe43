// ScaLAPACK's own names for p?gemm, p?geadd, p?tradd, p?tran / p?tranu / p?tranc, p?syrk,
// p?herk, p?syr2k, p?her2k, p?trsm, p?trmm, p?symm and p?hemm, in the three Fortran spellings
// (psgemm_, psgemm, PSGEMM, ...), forwarding to shardmm_p?gemm, ... Only libshardmm_scalapack (the
// drop-in) has them; libshardmm_pxgemm has the prefixed names alone, so it coexists with ScaLAPACK
// in any order.
//
// With SHARDMM_VERBOSE set (and not "0"), the first call of any of them on MPI_COMM_WORLD's
// rank 0 prints one line to stderr saying the drop-in is active, naming the symbol the program
// called and shardmm's version; other ranks print nothing.
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "shardmm/c/scalapack.h"
#include "shardmm/config.hpp"
#include "shardmm/version.hpp"

namespace {

std::atomic<bool> g_announced{false};

bool verbose() {
  const auto env = shardmm::environment("SHARDMM_VERBOSE");
  return env && *env != "0";
}

// Once per process, on world rank 0 only; MPI is initialized (the caller has a BLACS grid).
void announce(const char* symbol) noexcept {
  if (g_announced.exchange(true) || !verbose()) return;
  int rank = -1;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS || rank != 0) return;
  // Best effort: a lost notice does not change the result.
  (void)std::fprintf(stderr, "shardmm: ScaLAPACK drop-in active (%s on shardmm %s)\n", symbol,
                     shardmm::version_string);
  (void)std::fflush(stderr);
}

}  // namespace

// Argument lists as function-like macros, so their names pass through the macros below
// unexpanded (an expanded list's commas would split the arguments).
#define SHARDMM_GEMM_ARGS() \
  transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc
#define SHARDMM_TRAN_ARGS() m, n, alpha, a, ia, ja, desca, beta, c, ic, jc, descc
#define SHARDMM_GEADD_ARGS() trans, SHARDMM_TRAN_ARGS()
#define SHARDMM_TRADD_ARGS() uplo, trans, SHARDMM_TRAN_ARGS()
#define SHARDMM_SYRK_ARGS() uplo, trans, n, k, alpha, a, ia, ja, desca, beta, c, ic, jc, descc
#define SHARDMM_SYMM_ARGS() \
  side, uplo, m, n, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc
#define SHARDMM_SYR2K_ARGS() \
  uplo, trans, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc
#define SHARDMM_SYR2K_PARAMS(CT) SHARDMM_PXSYR2K_PARAMS(CT, CT)
#define SHARDMM_CHER2K_PARAMS(CT) SHARDMM_PXSYR2K_PARAMS(CT, float)
#define SHARDMM_ZHER2K_PARAMS(CT) SHARDMM_PXSYR2K_PARAMS(CT, double)
#define SHARDMM_TRSM_ARGS() \
  side, uplo, transa, diag, m, n, alpha, a, ia, ja, desca, b, ib, jb, descb
// p?syrk / p?herk signatures by element type (ALPHA and BETA: the element type, or real).
#define SHARDMM_SYRK_PARAMS(CT) SHARDMM_PXSYRK_PARAMS(CT, CT)
#define SHARDMM_CHERK_PARAMS(CT) SHARDMM_PXSYRK_PARAMS(CT, float)
#define SHARDMM_ZHERK_PARAMS(CT) SHARDMM_PXSYRK_PARAMS(CT, double)
// name: the spelling; target: shardmm_<target>; PARAMS(CT) / ARGS(): the signature.
#define SHARDMM_SPELLING(name, target, PARAMS, CT, ARGS) \
  void name(PARAMS(CT)) {                                \
    announce(#name);                                     \
    shardmm_##target(ARGS());                            \
  }
#define SHARDMM_SPELLINGS(lower, UPPER, PARAMS, CT, ARGS) \
  SHARDMM_SPELLING(lower##_, lower, PARAMS, CT, ARGS)     \
  SHARDMM_SPELLING(lower, lower, PARAMS, CT, ARGS)        \
  SHARDMM_SPELLING(UPPER, lower, PARAMS, CT, ARGS)
#define SHARDMM_TYPE(x, X, CT)                                                                \
  SHARDMM_SPELLINGS(p##x##gemm, P##X##GEMM, SHARDMM_PXGEMM_PARAMS, CT, SHARDMM_GEMM_ARGS)     \
  SHARDMM_SPELLINGS(p##x##geadd, P##X##GEADD, SHARDMM_PXGEADD_PARAMS, CT, SHARDMM_GEADD_ARGS) \
  SHARDMM_SPELLINGS(p##x##tradd, P##X##TRADD, SHARDMM_PXTRADD_PARAMS, CT, SHARDMM_TRADD_ARGS) \
  SHARDMM_SPELLINGS(p##x##syrk, P##X##SYRK, SHARDMM_SYRK_PARAMS, CT, SHARDMM_SYRK_ARGS)       \
  SHARDMM_SPELLINGS(p##x##trsm, P##X##TRSM, SHARDMM_PXTRSM_PARAMS, CT, SHARDMM_TRSM_ARGS)     \
  SHARDMM_SPELLINGS(p##x##trmm, P##X##TRMM, SHARDMM_PXTRSM_PARAMS, CT, SHARDMM_TRSM_ARGS)     \
  SHARDMM_SPELLINGS(p##x##symm, P##X##SYMM, SHARDMM_PXSYMM_PARAMS, CT, SHARDMM_SYMM_ARGS)     \
  SHARDMM_SPELLINGS(p##x##syr2k, P##X##SYR2K, SHARDMM_SYR2K_PARAMS, CT, SHARDMM_SYR2K_ARGS)

extern "C" {
SHARDMM_TYPE(s, S, float)
SHARDMM_TYPE(d, D, double)
SHARDMM_TYPE(c, C, void)
SHARDMM_TYPE(z, Z, void)
SHARDMM_SPELLINGS(pstran, PSTRAN, SHARDMM_PXTRAN_PARAMS, float, SHARDMM_TRAN_ARGS)
SHARDMM_SPELLINGS(pdtran, PDTRAN, SHARDMM_PXTRAN_PARAMS, double, SHARDMM_TRAN_ARGS)
SHARDMM_SPELLINGS(pctranu, PCTRANU, SHARDMM_PXTRAN_PARAMS, void, SHARDMM_TRAN_ARGS)
SHARDMM_SPELLINGS(pztranu, PZTRANU, SHARDMM_PXTRAN_PARAMS, void, SHARDMM_TRAN_ARGS)
SHARDMM_SPELLINGS(pctranc, PCTRANC, SHARDMM_PXTRAN_PARAMS, void, SHARDMM_TRAN_ARGS)
SHARDMM_SPELLINGS(pztranc, PZTRANC, SHARDMM_PXTRAN_PARAMS, void, SHARDMM_TRAN_ARGS)
SHARDMM_SPELLINGS(pcherk, PCHERK, SHARDMM_CHERK_PARAMS, void, SHARDMM_SYRK_ARGS)
SHARDMM_SPELLINGS(pzherk, PZHERK, SHARDMM_ZHERK_PARAMS, void, SHARDMM_SYRK_ARGS)
SHARDMM_SPELLINGS(pchemm, PCHEMM, SHARDMM_PXSYMM_PARAMS, void, SHARDMM_SYMM_ARGS)
SHARDMM_SPELLINGS(pzhemm, PZHEMM, SHARDMM_PXSYMM_PARAMS, void, SHARDMM_SYMM_ARGS)
SHARDMM_SPELLINGS(pcher2k, PCHER2K, SHARDMM_CHER2K_PARAMS, void, SHARDMM_SYR2K_ARGS)
SHARDMM_SPELLINGS(pzher2k, PZHER2K, SHARDMM_ZHER2K_PARAMS, void, SHARDMM_SYR2K_ARGS)
}
