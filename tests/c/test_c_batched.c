/* Batched products through the C API: f64 batches in caller memory (tiles padded, strided),
 * a shared f32 weight (merged), bf16 batches as raw 16-bit data, and a mismatch that fails
 * with the same status on every rank. Every rank checks its own tiles against values computed
 * from the global formulas. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shardmm/c/shardmm.h"

static int g_failures, g_rank, g_size;

#include "c_check.h" /* CHECK, counting into g_failures */

enum { NB = 5, M = 6, N = 4, K = 7 };

static double value(int which, int64_t b, int64_t i, int64_t j) {
  return sin(0.3 * (double)i + 0.7 * (double)j + 0.9 * (double)b + which);
}

static uint16_t to_bf16(float x) { /* round to nearest even (finite inputs) */
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* A batched matrix over caller memory (ld = local rows + 1, stride = ld * cols + 3), filled
 * with value(which, b, i, j) rounded to dtype. */
static shardmm_batched make(shardmm_mesh mesh, shardmm_dtype dt, int64_t r, int64_t c,
                            const char *layout, int which, void **buf) {
  int64_t lb = 0, lr = 0, lc = 0;
  CHECK(shardmm_batched_local_shape(mesh, NB, r, c, layout, &lb, &lr, &lc) == SHARDMM_OK, "shape");
  const int64_t ld = lr + 1, stride = ld * lc + 3;
  const size_t elem = dt == SHARDMM_F64 ? 8 : dt == SHARDMM_F32 ? 4 : 2;
  *buf = calloc((size_t)(stride * (lb > 0 ? lb : 1)), elem);
  shardmm_batched X = NULL;
  CHECK(shardmm_batched_create(mesh, dt, NB, r, c, layout, *buf, ld, stride, &X) == SHARDMM_OK,
        "create %s", layout);
  for (int64_t b = 0; b < lb; ++b)
    for (int64_t jl = 0; jl < lc; ++jl)
      for (int64_t il = 0; il < lr; ++il) {
        int64_t bg = 0, i = 0, j = 0;
        shardmm_batched_global_index(X, b, il, jl, &bg, &i, &j);
        const double v = value(which, bg, i, j);
        const int64_t at = b * stride + il + jl * ld;
        if (dt == SHARDMM_F64) ((double *)*buf)[at] = v;
        else if (dt == SHARDMM_F32) ((float *)*buf)[at] = (float)v;
        else ((uint16_t *)*buf)[at] = to_bf16((float)v);
      }
  return X;
}

/* Largest |C - sum_k A B| on this rank's tiles; shared_b: B is value(2, 0, k, j). */
static double worst_error(shardmm_batched C, shardmm_dtype dt, int shared_b) {
  void *data = NULL;
  int64_t lb = 0, lr = 0, lc = 0, ld = 0, stride = 0;
  shardmm_batched_local(C, &data, &lb, &lr, &lc, &ld, &stride);
  double worst = 0;
  for (int64_t b = 0; b < lb; ++b)
    for (int64_t jl = 0; jl < lc; ++jl)
      for (int64_t il = 0; il < lr; ++il) {
        int64_t bg = 0, i = 0, j = 0;
        shardmm_batched_global_index(C, b, il, jl, &bg, &i, &j);
        double want = 0;
        for (int64_t k = 0; k < K; ++k) {
          double a = value(1, bg, i, k), bv = value(2, shared_b ? 0 : bg, k, j);
          if (dt == SHARDMM_BF16)
            a = from_bf16(to_bf16((float)a)), bv = from_bf16(to_bf16((float)bv));
          want += a * bv;
        }
        const int64_t at = b * stride + il + jl * ld;
        const double got = dt == SHARDMM_F64   ? ((double *)data)[at]
                           : dt == SHARDMM_F32 ? ((float *)data)[at]
                                               : from_bf16(((uint16_t *)data)[at]);
        if (fabs(got - want) > worst) worst = fabs(got - want);
      }
  return worst;
}

static void batched_product(shardmm_mesh mesh, shardmm_dtype dt, double tol) {
  void *a = NULL, *b = NULL, *c = NULL;
  shardmm_batched A = make(mesh, dt, M, K, "A[B_X,I,K_Y]", 1, &a);
  shardmm_batched B = make(mesh, dt, K, N, "B[B_X,K_Y,J]", 2, &b);
  shardmm_batched C = make(mesh, dt, M, N, "C[B_X,I_Y,J]", 3, &c);
  double d1 = 1, d0 = 0;
  float f1 = 1, f0 = 0;
  const void *one = dt == SHARDMM_F64 ? (const void *)&d1 : (const void *)&f1;
  const void *zero = dt == SHARDMM_F64 ? (const void *)&d0 : (const void *)&f0;
  shardmm_batched_report rep;
  CHECK(shardmm_gemm_batched('N', 'N', one, A, NULL, B, NULL, zero, C, NULL, SHARDMM_MERGE_AUTO,
                             &rep) == SHARDMM_OK,
        "gemm_batched dtype %d", (int)dt);
  const double err = worst_error(C, dt, 0);
  CHECK(err <= tol, "dtype %d: error %g above %g", (int)dt, err, tol);
  CHECK(rep.merged == 0, "merged %d", rep.merged);
  shardmm_batched_destroy(A), shardmm_batched_destroy(B), shardmm_batched_destroy(C);
  free(a), free(b), free(c);
}

static void shared_weight(shardmm_mesh mesh) {
  void *a = NULL, *c = NULL;
  shardmm_batched A = make(mesh, SHARDMM_F32, M, K, "X[B_X,S,D]", 1, &a);
  shardmm_batched C = make(mesh, SHARDMM_F32, M, N, "Y[B_X,S,F_Y]", 3, &c);
  shardmm_matrix W = NULL;
  CHECK(shardmm_matrix_create(mesh, SHARDMM_F32, K, N, "W[D,F_Y]", NULL, 0, &W) == SHARDMM_OK, "W");
  float *w = NULL;
  int64_t lr = 0, lc = 0, ld = 0;
  shardmm_matrix_local(W, (void **)&w, &lr, &lc, &ld);
  for (int64_t jl = 0; jl < lc; ++jl)
    for (int64_t il = 0; il < lr; ++il) {
      int64_t i = 0, j = 0;
      shardmm_matrix_global_index(W, il, jl, &i, &j);
      w[il + jl * ld] = (float)value(2, 0, i, j);
    }
  const float one = 1, zero = 0;
  shardmm_batched_report rep;
  CHECK(shardmm_gemm_batched('N', 'N', &one, A, NULL, NULL, W, &zero, C, NULL, SHARDMM_MERGE_ALWAYS,
                             &rep) == SHARDMM_OK,
        "shared W");
  CHECK(rep.merged == 1, "merged %d", rep.merged);
  const double err = worst_error(C, SHARDMM_F32, 1);
  CHECK(err <= 1e-5, "shared W: error %g", err);
  shardmm_batched_destroy(A), shardmm_batched_destroy(C), shardmm_matrix_destroy(W);
  free(a), free(c);
}

static void mismatch(shardmm_mesh mesh) {
  shardmm_batched A = NULL, B = NULL, C = NULL;
  shardmm_batched_create(mesh, SHARDMM_F64, 4, M, K, "A[B_X,I,K]", NULL, 0, 0, &A);
  shardmm_batched_create(mesh, SHARDMM_F64, 3, K, N, "B[B_X,K,J]", NULL, 0, 0, &B);
  shardmm_batched_create(mesh, SHARDMM_F64, 4, M, N, "C[B_X,I,J]", NULL, 0, 0, &C);
  const double one = 1;
  const int st = shardmm_gemm_batched('N', 'N', &one, A, NULL, B, NULL, &one, C, NULL,
                                      SHARDMM_MERGE_AUTO, NULL);
  CHECK(st == SHARDMM_ERROR_DIMENSION_MISMATCH, "status %d", st);
  CHECK(strstr(shardmm_last_error(), "batch sizes differ") != NULL, "message");
  int all = 0;
  MPI_Allreduce(&st, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  CHECK(all == st, "ranks disagree");
  const int bad = shardmm_gemm_batched('N', 'N', &one, A, NULL, B, NULL, &one, C, NULL,
                                       (shardmm_batch_merge)7, NULL);
  CHECK(bad == SHARDMM_ERROR_INVALID_ARGUMENT, "merge 7: status %d", bad);
  shardmm_batched_destroy(A), shardmm_batched_destroy(B), shardmm_batched_destroy(C);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  int p = 1;
  for (int d = 1; d * d <= g_size; ++d)
    if (g_size % d == 0) p = d;
  char shape[32];
  snprintf(shape, sizeof shape, "x=%d,y=%d", g_size / p, p);
  shardmm_mesh mesh = NULL;
  CHECK(shardmm_mesh_create(MPI_COMM_WORLD, shape, &mesh) == SHARDMM_OK, "mesh");
  batched_product(mesh, SHARDMM_F64, 1e-12);
  batched_product(mesh, SHARDMM_F32, 1e-5);
  batched_product(mesh, SHARDMM_BF16, 0.05); /* C rounded to bf16: |C| <= 7, 2^-8 relative */
  shared_weight(mesh);
  mismatch(mesh);
  shardmm_mesh_destroy(mesh);
  int failures = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
  MPI_Finalize();
  return failures ? 1 : 0;
}
