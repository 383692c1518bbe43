/* shardmm_gemm_files from C: a product streamed under a tiny budget (both I/O methods) against
 * a serial triple loop, and an output that is an input refused on every rank, nothing written. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shardmm/c/shardmm.h"

enum { M = 37, N = 29, K = 41 };

static double entry(int i, int j, int seed) { return sin(0.37 * i + 1.13 * j + 0.71 * seed); }

/* Rank 0 writes an m x n float64 .npy file (Fortran order) of entry(i, j, seed). */
static void put_npy(const char *path, int m, int n, int seed) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    char dict[128], head[128];
    snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': True, 'shape': (%d, %d), }", m,
             n);
    const size_t len = 128 - 10; /* header of 128 bytes in all */
    memset(head, ' ', sizeof head);
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)len, head[9] = 0;
    memcpy(head + 10, dict, strlen(dict));
    head[127] = '\n';
    FILE *f = fopen(path, "wb");
    fwrite(head, 1, 128, f);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        const double v = entry(i, j, seed);
        fwrite(&v, sizeof v, 1, f);
      }
    fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static int failures = 0;
#define CHECK(cond, ...)                     \
  do {                                       \
    if (!(cond)) {                           \
      fprintf(stderr, "FAILED %s: ", #cond); \
      fprintf(stderr, __VA_ARGS__);          \
      fprintf(stderr, "\n");                 \
      ++failures;                            \
    }                                        \
  } while (0)

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char dir[64] = "/tmp/shardmm_c_ooc_XXXXXX";
  if (rank == 0 && !mkdtemp(dir)) dir[0] = 0;
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  char a[96], b[96], c[96];
  snprintf(a, sizeof a, "%s/a.npy", dir), snprintf(b, sizeof b, "%s/b.npy", dir);
  snprintf(c, sizeof c, "%s/c.npy", dir);
  put_npy(a, M, K, 1);
  put_npy(b, K, N, 2);
  const char *ios[2] = {"mpiio", "mmap"};
  for (int t = 0; t < 2; ++t) {
    const int st = shardmm_gemm_files(MPI_COMM_WORLD, 'N', a, 'N', b, 1.5, 0, 0, 0, NULL, c, 1,
                                      1600 * 8, ios[t]);
    CHECK(st == SHARDMM_OK, "%s: %s", ios[t], shardmm_last_error());
    if (rank == 0 && st == SHARDMM_OK) {
      FILE *f = fopen(c, "rb");
      double got[M * N], err = 0, norm = 0;
      unsigned char pre[10];
      CHECK(fread(pre, 1, 10, f) == 10, "%s: no header", ios[t]);
      fseek(f, 10 + pre[8] + 256 * pre[9], SEEK_SET); /* version 1.0: u16 header length */
      CHECK(fread(got, sizeof(double), M * N, f) == M * N, "%s: short result", ios[t]);
      fclose(f);
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < M; ++i) {
          double want = 0;
          for (int l = 0; l < K; ++l) want += 1.5 * entry(i, l, 1) * entry(l, j, 2);
          err += (got[i + j * M] - want) * (got[i + j * M] - want), norm += want * want;
        }
      CHECK(sqrt(err / norm) < 1e-13, "%s: relative error %g", ios[t], sqrt(err / norm));
    }
  }
  const int st =
      shardmm_gemm_files(MPI_COMM_WORLD, 'N', a, 'N', b, 1, 0, 0, 0, NULL, a, 1, 0, NULL);
  CHECK(st == SHARDMM_ERROR_INVALID_ARGUMENT, "output = input gave %d: %s", st,
        shardmm_last_error());
  CHECK(strstr(shardmm_last_error(), "is also an input") != NULL, "%s", shardmm_last_error());
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    unlink(a), unlink(b), unlink(c), rmdir(dir);
  }
  int any = 0;
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("%s\n", any ? "c_ooc FAILED" : "c_ooc passed");
  MPI_Finalize();
  return any ? 1 : 0;
}
