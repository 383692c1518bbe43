/* The SPMD mistake through the drop-in: on a 1 x 2 BLACS grid, rank 0 alone calls pdgemm_ (its
 * first call, which makes the drop-in's mesh) while rank 1 goes on to the end of the program.
 * Under SHARDMM_WATCHDOG=1:abort the job must end, rank 0 naming rank 1 (dropin_hang.sh).
 * Written against ScaLAPACK's API only, as an unchanged ScaLAPACK program would be. */
#include <mpi.h>
#include <stdio.h>

#include "dropin.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, ctxt = 0, info = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", 1, 2);
  const int n = 8, nb = 4, zero = 0, one = 1, lld = 8;
  int desc[9];
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
  double a[32] = {0}, c[32] = {0}; /* 8 x 4 local columns on each of the 2 processes */
  const double alpha = 1, beta = 0;
  if (me == 0) {
    printf("rank 0 alone calls pdgemm_\n");
    fflush(stdout);
    pdgemm_("N", "N", &n, &n, &n, &alpha, a, &one, &one, desc, a, &one, &one, desc, &beta, c, &one,
            &one, desc);
    printf("rank 0 came back: the mistake went unnoticed\n");
  }
  MPI_Finalize();
  return 0;
}
