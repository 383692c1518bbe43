// ScaLAPACK's own names for p?gemm, in the three Fortran spellings (psgemm_, psgemm, PSGEMM,
// ...), forwarding to shardmm_p?gemm. Only libshardmm_scalapack (the drop-in) has them;
// libshardmm_pxgemm has the prefixed names alone, so it coexists with ScaLAPACK in any order.
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
#include "shardmm/version.hpp"

namespace {

std::atomic<bool> g_announced{false};

bool verbose() {
  const char* env = std::getenv("SHARDMM_VERBOSE");
  return env != nullptr && env[0] != '\0' && std::strcmp(env, "0") != 0;
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

#define SHARDMM_ARGS \
  transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc
#define SHARDMM_SPELLING(name, x, CT)    \
  void name(SHARDMM_PXGEMM_PARAMS(CT)) { \
    announce(#name);                     \
    shardmm_p##x##gemm(SHARDMM_ARGS);    \
  }
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
