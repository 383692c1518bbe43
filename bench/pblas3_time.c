/* Times PBLAS level-3 calls of an unchanged ScaLAPACK program: pdgemm_ (C = A A^T, the
 * product syrk computes), pdsyrk_ (lower triangle) and pdtran_ (C = A^T), n x n C, n x k A,
 * on a P x Q BLACS grid with NB x NB blocks. Written only against ScaLAPACK's API: run it as
 * built for ScaLAPACK's own routines, with LD_PRELOAD=libshardmm_scalapack.so for shardmm's.
 *
 *   mpirun -n 4 build/bench_pblas3 N K P Q NB REPS
 *
 * Prints, on rank 0, one line per routine: the best of REPS calls (after one warm-up) in
 * seconds, and its rate in GFLOP/s (gemm 2 n^2 k, syrk n (n + 1) k; tran: none). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
void pdgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
             const double *alpha, const double *a, const int *ia, const int *ja, const int *desca,
             const double *b, const int *ib, const int *jb, const int *descb, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void pdsyrk_(const char *uplo, const char *trans, const int *n, const int *k, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca, const double *beta,
             double *c, const int *ic, const int *jc, const int *descc);
void pdtran_(const int *m, const int *n, const double *alpha, const double *a, const int *ia,
             const int *ja, const int *desca, const double *beta, double *c, const int *ic,
             const int *jc, const int *descc);

typedef struct {
  int desc[9];
  double *data;
} Mat;

static Mat make(int ctxt, int m, int n, int nb, int row, int col, int p, int q) {
  const int zero = 0, lr = numroc_(&m, &nb, &row, &zero, &p),
            lc = numroc_(&n, &nb, &col, &zero, &q);
  const int lld = lr > 1 ? lr : 1;
  int info = 0;
  Mat x;
  descinit_(x.desc, &m, &n, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
  x.data = malloc(sizeof(double) * (size_t)lld * (size_t)(lc > 1 ? lc : 1));
  for (size_t i = 0; i < (size_t)lld * (size_t)(lc > 1 ? lc : 1); ++i)
    x.data[i] = (double)((i * 7919 + (size_t)row * 31 + (size_t)col) % 1000) / 1000.0 - 0.5;
  return x;
}

/* Best of reps calls of routine r (0 gemm, 1 syrk, 2 tran) after one warm-up. */
static double best(int r, int reps, int n, int k, Mat *A, Mat *C, Mat *T) {
  const int one = 1;
  const double alpha = 1.0, beta = 0.0;
  double t_best = 1e30;
  for (int i = 0; i <= reps; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    if (r == 0)
      pdgemm_("N", "T", &n, &n, &k, &alpha, A->data, &one, &one, A->desc, A->data, &one, &one,
              A->desc, &beta, C->data, &one, &one, C->desc);
    if (r == 1)
      pdsyrk_("L", "N", &n, &k, &alpha, A->data, &one, &one, A->desc, &beta, C->data, &one, &one,
              C->desc);
    if (r == 2)
      pdtran_(&k, &n, &alpha, A->data, &one, &one, A->desc, &beta, T->data, &one, &one, T->desc);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (i > 0 && t < t_best) t_best = t;
  }
  return t_best;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc != 7) {
    fprintf(stderr, "usage: bench_pblas3 N K P Q NB REPS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int n = atoi(argv[1]), k = atoi(argv[2]), p = atoi(argv[3]), q = atoi(argv[4]);
  const int nb = atoi(argv[5]), reps = atoi(argv[6]);
  int ctxt = 0, pp = 0, qq = 0, row = -1, col = -1, rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Row", p, q);
  Cblacs_gridinfo(ctxt, &pp, &qq, &row, &col);
  if (row < 0) { /* outside the grid: nothing to time, but the barriers count us */
    for (int r = 0; r < 3 * (reps + 1); ++r) {
      double t = 0;
      MPI_Barrier(MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
  }
  Mat A = make(ctxt, n, k, nb, row, col, p, q), C = make(ctxt, n, n, nb, row, col, p, q);
  Mat T = make(ctxt, k, n, nb, row, col, p, q);
  const char *names[3] = {"pdgemm_ (A A^T)", "pdsyrk_ (L, N)", "pdtran_ (A^T)"};
  const double flops[3] = {2.0 * n * (double)n * k, (double)n * (n + 1.0) * k, 0};
  for (int r = 0; r < 3; ++r) {
    const double t = best(r, reps, n, k, &A, &C, &T);
    if (rank == 0)
      printf("%-16s n %d k %d grid %dx%d nb %d: %.4f s  %.2f GFLOP/s\n", names[r], n, k, p, q, nb,
             t, flops[r] / t / 1e9);
  }
  free(A.data), free(C.data), free(T.data);
  Cblacs_gridexit(ctxt);
  MPI_Finalize();
  return 0;
}
