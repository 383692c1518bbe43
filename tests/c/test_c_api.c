/* The C API from C: meshes, matrices over caller buffers (and library-owned ones), gemm with
 * options and reports, plan, version, status codes, and the thread-local last error. Every
 * rank checks its own tile against values computed from the global formulas. */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "c_check.h"
#include "shardmm/c/scalapack.h" /* compiles as C (declarations only: not linked here) */
#include "shardmm/c/shardmm.h"

static int g_failures, g_rank, g_size;

static double complex value(int which, int64_t i, int64_t j) {
  return sin(0.3 * (double)i + 0.7 * (double)j + which) +
         I * cos(0.2 * (double)i - 0.5 * (double)j);
}

/* Near-square p x q with p * q = P. */
static void grid_of(int P, int *p, int *q) {
  *p = 1;
  for (int d = 1; d * d <= P; ++d)
    if (P % d == 0) *p = d;
  *q = P / *p;
}

/* Element (i, j) of op(X) for stored X of matrix `which`. */
static double complex op_value(int which, char t, int64_t i, int64_t j) {
  if (t == 'N') return value(which, i, j);
  return t == 'C' ? conj(value(which, j, i)) : value(which, j, i);
}

/* A matrix whose tile is caller memory with padding (ld = local rows + 2), filled with
 * value(which, ., .) rounded to the type: complex types keep the imaginary part. */
static shardmm_matrix make(shardmm_mesh mesh, shardmm_dtype dt, int64_t m, int64_t n,
                           const char *layout, int which, void **buffer) {
  int64_t lr = 0, lc = 0;
  CHECK(shardmm_local_shape(mesh, m, n, layout, &lr, &lc) == SHARDMM_OK, "local_shape %s", layout);
  const int64_t ld = lr + 2;
  const size_t elem = dt == SHARDMM_F64 ? sizeof(double) : sizeof(float complex);
  *buffer = calloc((size_t)(ld * (lc > 0 ? lc : 1)), elem);
  shardmm_matrix X = NULL;
  CHECK(shardmm_matrix_create(mesh, dt, m, n, layout, *buffer, ld, &X) == SHARDMM_OK, "create");
  for (int64_t jl = 0; jl < lc; ++jl)
    for (int64_t il = 0; il < lr; ++il) {
      int64_t i = 0, j = 0;
      shardmm_matrix_global_index(X, il, jl, &i, &j);
      const double complex v = value(which, i, j);
      if (dt == SHARDMM_F64) ((double *)*buffer)[il + jl * ld] = creal(v);
      else ((float complex *)*buffer)[il + jl * ld] = (float complex)v;
    }
  return X;
}

/* Checks C = alpha op(A) op(B) + beta C0 on this rank's tile (values from the formulas). */
static void check_product(shardmm_matrix C, shardmm_dtype dt, char ta, char tb, int64_t k,
                          double complex alpha, double complex beta, double tol) {
  void *data = NULL;
  int64_t lr = 0, lc = 0, ld = 0;
  shardmm_matrix_local(C, &data, &lr, &lc, &ld);
  double worst = 0;
  for (int64_t jl = 0; jl < lc; ++jl)
    for (int64_t il = 0; il < lr; ++il) {
      int64_t i = 0, j = 0;
      shardmm_matrix_global_index(C, il, jl, &i, &j);
      double complex want = 0;
      for (int64_t l = 0; l < k; ++l) {
        double complex a = op_value(0, ta, i, l), b = op_value(1, tb, l, j);
        if (dt == SHARDMM_F64) a = creal(a), b = creal(b);
        want += a * b;
      }
      const double complex c0 = dt == SHARDMM_F64 ? creal(value(2, i, j)) : value(2, i, j);
      want = alpha * want + beta * c0;
      const double complex got = dt == SHARDMM_F64 ? ((double *)data)[il + jl * ld]
                                                   : ((float complex *)data)[il + jl * ld];
      const double err = cabs(got - want) / (1 + cabs(want));
      if (err > worst) worst = err;
    }
  CHECK(worst <= tol, "C differs from the formula by %.3g (tolerance %.3g)", worst, tol);
}

static void test_double_summa_and_auto(shardmm_mesh mesh) {
  const int64_t m = 37, n = 29, k = 23;
  void *a, *b, *c;
  shardmm_matrix A = make(mesh, SHARDMM_F64, m, k, "A[I_X,J_Y]", 0, &a);
  shardmm_matrix B = make(mesh, SHARDMM_F64, k, n, "B[I_X,J_Y]", 1, &b);
  shardmm_matrix C = make(mesh, SHARDMM_F64, m, n, "C[I_X,J_Y]", 2, &c);
  shardmm_options o;
  shardmm_options_init(&o);
  CHECK(o.algorithm == SHARDMM_ALGORITHM_AUTO && o.overlap == 1 && o.wait == SHARDMM_WAIT_AUTO,
        "defaults");
  o.algorithm = SHARDMM_ALGORITHM_SUMMA;
  o.wait = SHARDMM_WAIT_SLEEP; /* the ranks nap while they wait: the same product */
  char plan[256];
  size_t len = 0;
  CHECK(shardmm_plan('N', 'N', A, B, C, &o, plan, sizeof plan, &len) == SHARDMM_OK, "plan");
  CHECK(strncmp(plan, "summa on ", 9) == 0 && len == strlen(plan), "plan is '%s'", plan);
  const double alpha = 2, beta = -1;
  shardmm_report rep;
  CHECK(shardmm_gemm('N', 'N', &alpha, A, B, &beta, C, &o, &rep) == SHARDMM_OK, "gemm summa");
  CHECK(strcmp(rep.algorithm, "summa") == 0, "report says '%s'", rep.algorithm);
  CHECK(strcmp(shardmm_last_error(), "") == 0, "no error after success");
  check_product(C, SHARDMM_F64, 'N', 'N', k, alpha, beta, 1e-13);
  /* Auto, C <- 1 * A B + 0 * C: plan text non-empty; a 4-byte buffer is too small. */
  const double one = 1, zero = 0;
  CHECK(shardmm_plan('N', 'N', A, B, C, NULL, plan, sizeof plan, NULL) == SHARDMM_OK, "plan auto");
  CHECK(strlen(plan) > 5, "auto plan '%s'", plan);
  CHECK(shardmm_plan('N', 'N', A, B, C, NULL, plan, 4, &len) == SHARDMM_ERROR_BUFFER_TOO_SMALL &&
            strlen(plan) == 3 && len > 3,
        "small buffer: '%s', length %zu", plan, len);
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, NULL, NULL) == SHARDMM_OK, "gemm auto");
  check_product(C, SHARDMM_F64, 'N', 'N', k, 1, 0, 1e-13);
  /* Strassen by name (too small to recurse at the default crossover: classical leaves). */
  o.algorithm = SHARDMM_ALGORITHM_STRASSEN;
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, &o, &rep) == SHARDMM_OK, "gemm strassen");
  CHECK(strcmp(rep.algorithm, "strassen") == 0, "report says '%s'", rep.algorithm);
  check_product(C, SHARDMM_F64, 'N', 'N', k, 1, 0, 1e-13);
  shardmm_matrix_destroy(A), shardmm_matrix_destroy(B), shardmm_matrix_destroy(C);
  free(a), free(b), free(c);
}

/* Complex float, ScaLAPACK block-cyclic layouts on a column-major mesh, op C and T. */
static void test_complex_block_cyclic(void) {
  int p, q;
  grid_of(g_size, &p, &q);
  const char *names[2] = {"r", "c"};
  const int sizes[2] = {p, q};
  shardmm_mesh mesh = NULL;
  CHECK(shardmm_mesh_create_axes(MPI_COMM_WORLD, 2, names, sizes, 1, &mesh) == SHARDMM_OK, "mesh");
  const int64_t m = 19, n = 13, k = 11;
  shardmm_matrix X[3];
  void *buf[3];
  const int64_t rows[3] = {k, n, m}, cols[3] = {m, k, n}; /* A^C: A is k x m; B^T: n x k */
  for (int w = 0; w < 3; ++w) {
    int64_t lr, lc;
    shardmm_matrix probe = NULL;
    CHECK(shardmm_matrix_create_block_cyclic(mesh, SHARDMM_C64, rows[w], cols[w], 4, 3, p - 1, 0,
                                             NULL, 0, &probe) == SHARDMM_OK,
          "owning matrix");
    shardmm_matrix_local(probe, NULL, &lr, &lc, NULL);
    shardmm_matrix_destroy(probe);
    buf[w] = calloc((size_t)((lr + 1) * (lc > 0 ? lc : 1)), sizeof(float complex));
    CHECK(shardmm_matrix_create_block_cyclic(mesh, SHARDMM_C64, rows[w], cols[w], 4, 3, p - 1, 0,
                                             buf[w], lr + 1, &X[w]) == SHARDMM_OK,
          "view");
    for (int64_t jl = 0; jl < lc; ++jl)
      for (int64_t il = 0; il < lr; ++il) {
        int64_t i, j;
        shardmm_matrix_global_index(X[w], il, jl, &i, &j);
        ((float complex *)buf[w])[il + jl * (lr + 1)] = (float complex)value(w, i, j);
      }
  }
  const float complex alpha = 2 + 1 * I, beta = 0.5f;
  CHECK(shardmm_gemm('C', 't', &alpha, X[0], X[1], &beta, X[2], NULL, NULL) == SHARDMM_OK, "gemm");
  check_product(X[2], SHARDMM_C64, 'C', 'T', k, alpha, beta, 2e-5);
  for (int w = 0; w < 3; ++w) shardmm_matrix_destroy(X[w]), free(buf[w]);
  shardmm_mesh_destroy(mesh);
}

static void *other_thread(void *arg) {
  (void)arg;
  static int ok;
  ok = strcmp(shardmm_last_error(), "") == 0; /* the main thread's error is not visible */
  shardmm_matrix_destroy(NULL);
  return &ok;
}

/* Each failure: its status, on every rank, and a message. */
static void test_errors(shardmm_mesh mesh) {
  shardmm_matrix A = NULL, Cf = NULL, Cbad = NULL;
  CHECK(
      shardmm_matrix_create(mesh, SHARDMM_F64, 4, 4, "A[I_Q", NULL, 0, &A) == SHARDMM_ERROR_PARSE &&
          A == NULL && strlen(shardmm_last_error()) > 0,
      "parse error");
  CHECK(shardmm_matrix_create(mesh, SHARDMM_F64, 4, 4, "A[I_X,J_Y]", NULL, 0, NULL) ==
            SHARDMM_ERROR_INVALID_ARGUMENT,
        "null output");
  CHECK(shardmm_matrix_create(mesh, (shardmm_dtype)7, 4, 4, "A[I_X,J_Y]", NULL, 0, &A) ==
            SHARDMM_ERROR_INVALID_ARGUMENT,
        "bad dtype");
  shardmm_matrix_create(mesh, SHARDMM_F64, 6, 5, "A[I_X,J_Y]", NULL, 0, &A);
  shardmm_matrix_create(mesh, SHARDMM_F32, 6, 6, "C[I_X,J_Y]", NULL, 0, &Cf);
  shardmm_matrix_create(mesh, SHARDMM_F64, 6, 7, "C[I_X,J_Y]", NULL, 0, &Cbad);
  const double one = 1;
  int status = shardmm_gemm('N', 'N', &one, A, A, &one, Cbad, NULL, NULL);
  CHECK(status == SHARDMM_ERROR_DIMENSION_MISMATCH, "mismatch gives %d", status);
  int lo = status, hi = status;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == hi, "ranks disagree on the status: %d..%d", lo, hi);
  CHECK(
      shardmm_gemm('N', 'T', &one, A, A, &one, Cf, NULL, NULL) == SHARDMM_ERROR_INVALID_ARGUMENT &&
          strstr(shardmm_last_error(), "dtype"),
      "dtype mismatch");
  CHECK(
      shardmm_gemm('X', 'N', &one, A, A, &one, Cbad, NULL, NULL) == SHARDMM_ERROR_INVALID_ARGUMENT,
      "bad trans");
  CHECK(shardmm_gemm('N', 'N', &one, NULL, A, &one, Cbad, NULL, NULL) ==
            SHARDMM_ERROR_INVALID_ARGUMENT,
        "null matrix");
  /* A bad argument on one rank only (the last passes a null alpha, or a bad trans): every
   * rank fails the same way instead of the others hanging in gemm, and the mesh stays usable. */
  int me = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  status = shardmm_gemm('N', 'T', me == np - 1 ? NULL : &one, A, A, &one, Cbad, NULL, NULL);
  CHECK(status == SHARDMM_ERROR_INVALID_ARGUMENT && strstr(shardmm_last_error(), "alpha") &&
            strstr(shardmm_last_error(), "first failing rank"),
        "null alpha on one rank: %d %s", status, shardmm_last_error());
  status = shardmm_gemm(me == np - 1 ? 'Q' : 'N', 'T', &one, A, A, &one, Cbad, NULL, NULL);
  CHECK(status == SHARDMM_ERROR_INVALID_ARGUMENT && strstr(shardmm_last_error(), "transa"),
        "bad trans on one rank: %d %s", status, shardmm_last_error());
  shardmm_matrix Csq = NULL;
  shardmm_matrix_create(mesh, SHARDMM_F64, 6, 6, "C[I_X,J_Y]", NULL, 0, &Csq);
  CHECK(shardmm_gemm('N', 'T', &one, A, A, &one, Csq, NULL, NULL) == SHARDMM_OK,
        "gemm after an agreed failure");
  shardmm_matrix_destroy(Csq);
  shardmm_options o;
  shardmm_options_init(&o);
  o.algorithm = (shardmm_algorithm)42;
  CHECK(shardmm_plan('N', 'T', A, A, Cf, &o, NULL, 0, NULL) == SHARDMM_ERROR_INVALID_ARGUMENT &&
            strstr(shardmm_last_error(), "algorithm"),
        "bad option");
  shardmm_options_init(&o);
  o.wait = (shardmm_wait)3;
  CHECK(shardmm_plan('N', 'T', A, A, Cf, &o, NULL, 0, NULL) == SHARDMM_ERROR_INVALID_ARGUMENT &&
            strstr(shardmm_last_error(), "wait"),
        "bad wait: %s", shardmm_last_error());
  double small[4];
  int64_t lr = 0;
  shardmm_local_shape(mesh, 6, 5, "A[I_X,J_Y]", &lr, NULL);
  if (lr >= 2) {
    shardmm_matrix V = NULL;
    CHECK(shardmm_matrix_create(mesh, SHARDMM_F64, 6, 5, "A[I_X,J_Y]", small, lr - 1, &V) ==
                  SHARDMM_ERROR_INVALID_ARGUMENT &&
              V == NULL,
          "ld below the local rows");
  }
  CHECK(shardmm_matrix_global_index(A, -1, 0, NULL, NULL) == SHARDMM_ERROR_INVALID_ARGUMENT,
        "index");
  pthread_t t;
  void *ok = NULL;
  pthread_create(&t, NULL, other_thread, NULL);
  pthread_join(t, &ok);
  CHECK(*(int *)ok && strlen(shardmm_last_error()) > 0, "last error is per thread");
  CHECK(shardmm_matrix_destroy(NULL) == SHARDMM_OK && strcmp(shardmm_last_error(), "") == 0,
        "success clears the last error");
  shardmm_matrix_destroy(A), shardmm_matrix_destroy(Cf), shardmm_matrix_destroy(Cbad);
}

/* One meaning per option: ring_chunk cuts the p = 2 ring's swap (more messages, the same
 * product); strassen_step is read (BREADTH_FIRST is NOT_SUPPORTED off 7 Q ranks, DEPTH_FIRST
 * runs); bad values fail with the same status on every rank: an unknown step, a negative
 * chunk, the old spellings (a panel for the ring, grid_k for Strassen). */
static void test_algorithm_options(shardmm_mesh mesh) {
  const int64_t m = 37, n = 29, k = 23;
  void *a, *b, *c;
  shardmm_matrix A = make(mesh, SHARDMM_F64, m, k, "A[I_X,J_Y]", 0, &a);
  shardmm_matrix B = make(mesh, SHARDMM_F64, k, n, "B[I_X,J_Y]", 1, &b);
  shardmm_matrix C = make(mesh, SHARDMM_F64, m, n, "C[I_X,J_Y]", 2, &c);
  const double one = 1, zero = 0;
  shardmm_options o;
  shardmm_options_init(&o);
  CHECK(
      o.ring_chunk == 0 && o.stationary_chunk == 0 && o.strassen_step == SHARDMM_STRASSEN_STEP_AUTO,
      "new defaults");
  o.algorithm = SHARDMM_ALGORITHM_RING;
  shardmm_report whole, chunked;
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, &o, &whole) == SHARDMM_OK, "ring");
  o.ring_chunk = 1;
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, &o, &chunked) == SHARDMM_OK, "ring chunk 1");
  check_product(C, SHARDMM_F64, 'N', 'N', k, 1, 0, 1e-13);
  if (g_size == 2)
    CHECK(chunked.messages > whole.messages, "ring_chunk 1: %lld messages, default %lld",
          (long long)chunked.messages, (long long)whole.messages);
  o.ring_chunk = -1;
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, &o, NULL) == SHARDMM_ERROR_INVALID_ARGUMENT &&
            strstr(shardmm_last_error(), "ring_chunk"),
        "negative ring_chunk: %s", shardmm_last_error());
  o.ring_chunk = 0, o.panel = 8;
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, &o, NULL) == SHARDMM_ERROR_INVALID_ARGUMENT &&
            strstr(shardmm_last_error(), "ring_chunk"),
        "panel for the ring: %s", shardmm_last_error());
  shardmm_options_init(&o);
  o.algorithm = SHARDMM_ALGORITHM_STRASSEN;
  o.strassen_step = SHARDMM_STRASSEN_STEP_DEPTH_FIRST;
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, &o, NULL) == SHARDMM_OK, "depth-first");
  check_product(C, SHARDMM_F64, 'N', 'N', k, 1, 0, 1e-13);
  o.strassen_step = SHARDMM_STRASSEN_STEP_BREADTH_FIRST; /* 1 to 4 ranks: never 7 Q */
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, &o, NULL) == SHARDMM_ERROR_NOT_SUPPORTED &&
            strstr(shardmm_last_error(), "breadth-first"),
        "breadth-first off 7 Q ranks: %s", shardmm_last_error());
  o.strassen_step = (shardmm_strassen_step)3;
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, &o, NULL) == SHARDMM_ERROR_INVALID_ARGUMENT &&
            strstr(shardmm_last_error(), "strassen step"),
        "unknown step: %s", shardmm_last_error());
  o.strassen_step = SHARDMM_STRASSEN_STEP_AUTO, o.grid_k = 7;
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, &o, NULL) == SHARDMM_ERROR_INVALID_ARGUMENT &&
            strstr(shardmm_last_error(), "strassen_step"),
        "grid_k for Strassen: %s", shardmm_last_error());
  shardmm_matrix_destroy(A), shardmm_matrix_destroy(B), shardmm_matrix_destroy(C);
  free(a), free(b), free(c);
}

/* Options.trace: the call's trace is in the file (a trace-event JSON object with the gemm span);
 * a file whose directory does not exist fails the call with SHARDMM_ERROR_IO on every rank. */
static void test_trace_option(shardmm_mesh mesh) {
  void *a, *b, *c;
  shardmm_matrix A = make(mesh, SHARDMM_F64, 16, 12, "A[I_X,J_Y]", 0, &a);
  shardmm_matrix B = make(mesh, SHARDMM_F64, 12, 8, "B[I_X,J_Y]", 1, &b);
  shardmm_matrix C = make(mesh, SHARDMM_F64, 16, 8, "C[I_X,J_Y]", 2, &c);
  int id = (int)getpid();
  MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char path[64];
  snprintf(path, sizeof path, "/tmp/shardmm_c_trace_%d.json", id);
  shardmm_options o;
  shardmm_options_init(&o);
  CHECK(o.trace == NULL, "no trace by default");
  o.trace = path;
  const double one = 1, zero = 0;
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, &o, NULL) == SHARDMM_OK, "traced gemm");
  if (g_rank == 0) {
    char text[256] = "";
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "no trace file %s", path);
    if (f) {
      CHECK(fread(text, 1, sizeof text - 1, f) > 0 && strstr(text, "\"traceEvents\""),
            "%s is no trace", path);
      fclose(f);
    }
    remove(path);
  }
  o.trace = "/nonexistent-shardmm-dir/t.json";
  CHECK(shardmm_gemm('N', 'N', &one, A, B, &zero, C, &o, NULL) == SHARDMM_ERROR_IO &&
            strstr(shardmm_last_error(), "no directory"),
        "unwritable trace: %s", shardmm_last_error());
  shardmm_matrix_destroy(A), shardmm_matrix_destroy(B), shardmm_matrix_destroy(C);
  free(a), free(b), free(c);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  CHECK(strcmp(shardmm_version(), "") != 0, "version");
  int p, q;
  grid_of(g_size, &p, &q);
  char shape[64];
  snprintf(shape, sizeof shape, "x=%d,y=%d", p, q);
  shardmm_mesh mesh = NULL;
  CHECK(shardmm_mesh_create(MPI_COMM_WORLD, shape, &mesh) == SHARDMM_OK, "mesh %s", shape);
  int rank = -1, size = 0, ndims = 0, coords[2] = {-1, -1};
  shardmm_mesh_info(mesh, &rank, &size, &ndims, coords);
  CHECK(size == g_size && ndims == 2 && coords[0] * q + coords[1] == rank, "mesh info");
  CHECK(shardmm_mesh_create(MPI_COMM_WORLD, "x=2,y=", NULL) == SHARDMM_ERROR_INVALID_ARGUMENT,
        "null");
  test_double_summa_and_auto(mesh);
  test_complex_block_cyclic();
  test_errors(mesh);
  test_trace_option(mesh);
  test_algorithm_options(mesh);
  shardmm_mesh_destroy(mesh);
  MPI_Allreduce(MPI_IN_PLACE, &g_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0)
    printf("C API (shardmm %s) on %d ranks: %d failures\n", shardmm_version(), g_size, g_failures);
  MPI_Finalize();
  return g_failures ? 1 : 0;
}
