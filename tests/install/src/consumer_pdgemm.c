/* Downstream ScaLAPACK program relinked against shardmm::scalapack: pdgemm_ (ScaLAPACK's own
 * name) and shardmm_pdgemm (installed header) both compute C = A * (2 I) = 2 A on a 1 x P
 * BLACS grid; pdgemm_ must come from libshardmm_scalapack. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <shardmm/c/scalapack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdgemm_(SHARDMM_PXGEMM_PARAMS(double));

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 1, rank = 0, ctxt = 0, p, q, row, col, info = 0, failed = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", 1, size);
  Cblacs_gridinfo(ctxt, &p, &q, &row, &col);
  const int n = 16, nb = 3, zero = 0, one = 1;
  const int lc = numroc_(&n, &nb, &col, &zero, &q);
  int desc[9];
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctxt, &n, &info);
  double *a = malloc(sizeof(double) * (size_t)(n * lc)),
         *b = malloc(sizeof(double) * (size_t)(n * lc)),
         *c = malloc(sizeof(double) * (size_t)(n * lc));
  for (int jl = 0; jl < lc; ++jl) {
    const int j = (jl / nb * q + col) * nb + jl % nb;
    for (int i = 0; i < n; ++i) a[i + jl * n] = i + 3 * j, b[i + jl * n] = i == j ? 2 : 0;
  }
  const double alpha = 1, beta = 0;
  for (int call = 0; call < 2; ++call) {
    (call ? shardmm_pdgemm : pdgemm_)("N", "N", &n, &n, &n, &alpha, a, &one, &one, desc, b, &one,
                                      &one, desc, &beta, c, &one, &one, desc);
    for (int jl = 0; jl < lc; ++jl) {
      const int j = (jl / nb * q + col) * nb + jl % nb;
      for (int i = 0; i < n; ++i) failed |= c[i + jl * n] != 2.0 * (i + 3 * j);
    }
  }
  union {
    void (*f)(SHARDMM_PXGEMM_PARAMS(double));
    void *p;
  } u = {pdgemm_};
  Dl_info where;
  const char *lib = dladdr(u.p, &where) && where.dli_fname ? where.dli_fname : "?";
  failed |= strstr(lib, "libshardmm_scalapack") == NULL;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("ScaLAPACK relink: pdgemm_ from %s: %s\n", lib, failed ? "WRONG" : "ok");
  free(a), free(b), free(c);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return failed;
}
