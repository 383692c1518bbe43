/* The C API's PBLAS level-3 calls from C (shardmm_symm ... shardmm_tradd) on block-cyclic
 * matrices with nonzero source processes, every dtype: each result is gathered onto every
 * rank and compared with a serial OpenBLAS reference (cblas_z* on the same rounded inputs;
 * loops for the additions, which BLAS lacks) under a normwise bound. The unused triangle of A
 * holds NaN in the distributed copy, so reading it would show. Then the failures: each status
 * the same on every rank, a bad flag on one rank included. */
#include <complex.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include SHARDMM_CBLAS_HEADER
#include "c_check.h"
#include "shardmm/c/shardmm.h"

static int g_failures, g_rank, g_p, g_q;
static shardmm_mesh g_mesh;

typedef double complex zd;

static int is_complex(shardmm_dtype dt) { return dt == SHARDMM_C64 || dt == SHARDMM_C128; }
static int is_single(shardmm_dtype dt) { return dt == SHARDMM_F32 || dt == SHARDMM_C64; }
static size_t elem_size(shardmm_dtype dt) {
  return dt == SHARDMM_F32 ? 4 : dt == SHARDMM_F64 || dt == SHARDMM_C64 ? 8 : 16;
}

/* v rounded to the dtype (real types drop the imaginary part). */
static zd rounded(shardmm_dtype dt, zd v) {
  if (!is_complex(dt)) v = creal(v);
  return is_single(dt) ? (zd)(float complex)v : v;
}

/* Global rows x cols matrix `which`, column-major, from its indices; `scale` divides the
 * off-diagonal (a well-conditioned triangle for trsm). */
static zd *global_matrix(shardmm_dtype dt, int which, int64_t rows, int64_t cols, double scale) {
  zd *X = malloc(sizeof(zd) * (size_t)(rows * cols + 1));
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      zd v = sin(0.3 * (double)i + 0.7 * (double)j + which) +
             I * cos(0.2 * (double)i - 0.5 * (double)j + which);
      X[i + j * rows] = rounded(dt, i == j ? v + 2 : v / scale);
    }
  return X;
}

/* A distributed copy of the global X: 4 x 3 blocks from process (p-1, q-1). Elements on the
 * `nan_side` of the diagonal (+1: i < j, -1: i > j, 0: none) hold NaN instead. */
static shardmm_matrix scatter(shardmm_dtype dt, const zd *X, int64_t rows, int64_t cols,
                              int nan_side, void **buffer) {
  shardmm_matrix M = NULL;
  CHECK(shardmm_matrix_create_block_cyclic(g_mesh, dt, rows, cols, 4, 3, g_p - 1, g_q - 1, NULL, 0,
                                           &M) == SHARDMM_OK,
        "create %lldx%lld", (long long)rows, (long long)cols);
  *buffer = NULL;
  int64_t lr = 0, lc = 0, ld = 0;
  shardmm_matrix_local(M, buffer, &lr, &lc, &ld);
  for (int64_t jl = 0; jl < lc; ++jl)
    for (int64_t il = 0; il < lr; ++il) {
      int64_t i = 0, j = 0;
      shardmm_matrix_global_index(M, il, jl, &i, &j);
      const zd v = (nan_side > 0 && i < j) || (nan_side < 0 && i > j) ? NAN : X[i + j * rows];
      char *at = (char *)*buffer + (size_t)(il + jl * ld) * elem_size(dt);
      if (dt == SHARDMM_F32) *(float *)at = (float)creal(v);
      else if (dt == SHARDMM_F64) *(double *)at = creal(v);
      else if (dt == SHARDMM_C64) *(float complex *)at = (float complex)v;
      else *(zd *)at = v;
    }
  return M;
}

/* M's elements gathered into a global column-major array on every rank. */
static zd *gather(shardmm_dtype dt, shardmm_matrix M, int64_t rows, int64_t cols) {
  zd *X = calloc((size_t)(rows * cols + 1), sizeof(zd));
  void *data = NULL;
  int64_t lr = 0, lc = 0, ld = 0;
  shardmm_matrix_local(M, &data, &lr, &lc, &ld);
  for (int64_t jl = 0; jl < lc; ++jl)
    for (int64_t il = 0; il < lr; ++il) {
      int64_t i = 0, j = 0;
      shardmm_matrix_global_index(M, il, jl, &i, &j);
      const char *at = (const char *)data + (size_t)(il + jl * ld) * elem_size(dt);
      X[i + j * rows] = dt == SHARDMM_F32   ? *(const float *)at
                        : dt == SHARDMM_F64 ? *(const double *)at
                        : dt == SHARDMM_C64 ? *(const float complex *)at
                                            : *(const zd *)at;
    }
  MPI_Allreduce(MPI_IN_PLACE, X, (int)(2 * rows * cols), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return X;
}

static double fro(const zd *X, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += creal(X[i] * conj(X[i]));
  return sqrt(s);
}

/* ||got - want||_F <= 50 (inner + 2) eps (scale + ||want||_F), scale the terms' norms. */
static void compare(const char *what, shardmm_dtype dt, const zd *got, const zd *want, int64_t n,
                    int64_t inner, double scale) {
  double d = 0;
  for (int64_t i = 0; i < n; ++i) d += creal((got[i] - want[i]) * conj(got[i] - want[i]));
  const double eps = is_single(dt) ? 0x1p-24 : 0x1p-53;
  const double bound = 50.0 * (double)(inner + 2) * eps * (scale + fro(want, n));
  CHECK(sqrt(d) <= bound, "%s dtype %d: error %.3g over the bound %.3g", what, (int)dt, sqrt(d),
        bound);
}

/* The C API's scalar argument for v: a value of the dtype, or of its real type (`real`). */
typedef union {
  float f;
  double d;
  float complex c;
  zd z;
} scalar_arg;
static scalar_arg arg(shardmm_dtype dt, zd v, int real) {
  scalar_arg s;
  memset(&s, 0, sizeof s);
  if (dt == SHARDMM_F32 || (real && dt == SHARDMM_C64)) s.f = (float)creal(v);
  else if (dt == SHARDMM_F64 || (real && dt == SHARDMM_C128)) s.d = creal(v);
  else if (dt == SHARDMM_C64) s.c = (float complex)v;
  else s.z = v;
  return s;
}

static enum CBLAS_UPLO cb_uplo(char u) { return u == 'U' ? CblasUpper : CblasLower; }
static enum CBLAS_SIDE cb_side(char s) { return s == 'L' ? CblasLeft : CblasRight; }
static enum CBLAS_DIAG cb_diag(char d) { return d == 'U' ? CblasUnit : CblasNonUnit; }
static enum CBLAS_TRANSPOSE cb_trans(char t) {
  return t == 'N' ? CblasNoTrans : t == 'T' ? CblasTrans : CblasConjTrans;
}

/* symm / hemm: C (m x n) <- alpha A B + beta C (side L, A m x m) or alpha B A + beta C. */
static void test_symm(shardmm_dtype dt, int herm, char side, char uplo) {
  const int64_t m = 17, n = 13, na = side == 'L' ? m : n;
  const zd alpha = rounded(dt, 0.75 - 0.5 * I), beta = rounded(dt, -1.25 + 0.25 * I);
  zd *A = global_matrix(dt, 0, na, na, 1), *B = global_matrix(dt, 1, m, n, 1),
     *C = global_matrix(dt, 2, m, n, 1);
  void *a, *b, *c;
  shardmm_matrix dA = scatter(dt, A, na, na, uplo == 'U' ? -1 : 1, &a);
  shardmm_matrix dB = scatter(dt, B, m, n, 0, &b), dC = scatter(dt, C, m, n, 0, &c);
  const scalar_arg al = arg(dt, alpha, 0), be = arg(dt, beta, 0);
  const int st = (herm ? shardmm_hemm : shardmm_symm)(side, uplo, &al, dA, dB, &be, dC);
  CHECK(st == SHARDMM_OK, "%s %c%c status %d", herm ? "hemm" : "symm", side, uplo, st);
  zd *got = gather(dt, dC, m, n);
  (herm ? cblas_zhemm : cblas_zsymm)(CblasColMajor, cb_side(side), cb_uplo(uplo), (int)m, (int)n,
                                     &alpha, A, (int)na, B, (int)m, &beta, C, (int)m);
  compare(herm ? "hemm" : "symm", dt, got, C, m * n, na,
          cabs(alpha) * fro(A, na * na) * fro(B, m * n));
  shardmm_matrix_destroy(dA), shardmm_matrix_destroy(dB), shardmm_matrix_destroy(dC);
  free(A), free(B), free(C), free(got);
}

/* syrk / herk (B NULL) and syr2k / her2k: the uplo triangle of the n x n C. */
static void test_rank_k(shardmm_dtype dt, int herm, int two, char uplo, char trans) {
  const int64_t n = 15, k = 11, ar = trans == 'N' ? n : k, ac = trans == 'N' ? k : n;
  const zd alpha = rounded(dt, herm && !two ? 1.5 : 0.75 - 0.5 * I);
  const zd beta = rounded(dt, herm ? -0.5 : -0.5 + 0.25 * I);
  zd *A = global_matrix(dt, 0, ar, ac, 1), *B = global_matrix(dt, 1, ar, ac, 1),
     *C = global_matrix(dt, 2, n, n, 1);
  void *a, *b = NULL, *c;
  shardmm_matrix dA = scatter(dt, A, ar, ac, 0, &a), dC = scatter(dt, C, n, n, 0, &c);
  shardmm_matrix dB = two ? scatter(dt, B, ar, ac, 0, &b) : NULL;
  const scalar_arg al = arg(dt, alpha, herm && !two), be = arg(dt, beta, herm);
  int st;
  if (two) st = (herm ? shardmm_her2k : shardmm_syr2k)(uplo, trans, &al, dA, dB, &be, dC);
  else st = (herm ? shardmm_herk : shardmm_syrk)(uplo, trans, &al, dA, &be, dC);
  const char *name = herm ? (two ? "her2k" : "herk") : (two ? "syr2k" : "syrk");
  CHECK(st == SHARDMM_OK, "%s %c%c status %d", name, uplo, trans, st);
  zd *got = gather(dt, dC, n, n);
  const char t = !is_complex(dt) && trans != 'N' ? (herm ? 'C' : 'T') : trans;
  const int lda = (int)ar;
  if (two && herm)
    cblas_zher2k(CblasColMajor, cb_uplo(uplo), cb_trans(t), (int)n, (int)k, &alpha, A, lda, B, lda,
                 creal(beta), C, (int)n);
  else if (two)
    cblas_zsyr2k(CblasColMajor, cb_uplo(uplo), cb_trans(t), (int)n, (int)k, &alpha, A, lda, B, lda,
                 &beta, C, (int)n);
  else if (herm)
    cblas_zherk(CblasColMajor, cb_uplo(uplo), cb_trans(t), (int)n, (int)k, creal(alpha), A, lda,
                creal(beta), C, (int)n);
  else
    cblas_zsyrk(CblasColMajor, cb_uplo(uplo), cb_trans(t), (int)n, (int)k, &alpha, A, lda, &beta, C,
                (int)n);
  compare(name, dt, got, C, n * n, k, 2 * cabs(alpha) * fro(A, n * k) * fro(B, n * k));
  shardmm_matrix_destroy(dA), shardmm_matrix_destroy(dB), shardmm_matrix_destroy(dC);
  free(A), free(B), free(C), free(got);
}

/* trmm / trsm: B (m x n) <- alpha op(A) B, alpha B op(A), or the same with op(A)^-1. */
static void test_triangular(shardmm_dtype dt, int solve, char side, char uplo, char ta, char diag) {
  const int64_t m = 14, n = 9, na = side == 'L' ? m : n;
  const zd alpha = rounded(dt, -1.5 + 0.5 * I);
  zd *A = global_matrix(dt, 0, na, na, (double)na), *B = global_matrix(dt, 1, m, n, 1);
  void *a, *b;
  shardmm_matrix dA = scatter(dt, A, na, na, uplo == 'U' ? -1 : 1, &a);
  shardmm_matrix dB = scatter(dt, B, m, n, 0, &b);
  const scalar_arg al = arg(dt, alpha, 0);
  const int st = (solve ? shardmm_trsm : shardmm_trmm)(side, uplo, ta, diag, &al, dA, dB);
  CHECK(st == SHARDMM_OK, "%s %c%c%c%c status %d", solve ? "trsm" : "trmm", side, uplo, ta, diag,
        st);
  zd *got = gather(dt, dB, m, n);
  const double scale = cabs(alpha) * fro(A, na * na) * fro(B, m * n);
  (solve ? cblas_ztrsm : cblas_ztrmm)(CblasColMajor, cb_side(side), cb_uplo(uplo), cb_trans(ta),
                                      cb_diag(diag), (int)m, (int)n, &alpha, A, (int)na, B, (int)m);
  compare(solve ? "trsm" : "trmm", dt, got, B, m * n, na, scale);
  shardmm_matrix_destroy(dA), shardmm_matrix_destroy(dB);
  free(A), free(B), free(got);
}

/* transpose (op T or C), geadd (op N, T, C) and tradd (uplo 'U' / 'L'; 0: none):
 * C (m x n) <- alpha op(A) + beta C, referenced element by element. */
static void test_add(shardmm_dtype dt, int routine, char trans, char uplo) {
  const int64_t m = 13, n = 10, ar = trans == 'N' ? m : n, ac = trans == 'N' ? n : m;
  const zd alpha = rounded(dt, 0.5 + 1.0 * I), beta = rounded(dt, 2.0 - 0.5 * I);
  zd *A = global_matrix(dt, 0, ar, ac, 1), *C = global_matrix(dt, 2, m, n, 1);
  void *a, *c;
  shardmm_matrix dA = scatter(dt, A, ar, ac, 0, &a), dC = scatter(dt, C, m, n, 0, &c);
  const scalar_arg al = arg(dt, alpha, 0), be = arg(dt, beta, 0);
  const char *name = routine == 0 ? "transpose" : routine == 1 ? "geadd" : "tradd";
  int st = routine == 0   ? shardmm_transpose(trans, &al, dA, &be, dC)
           : routine == 1 ? shardmm_geadd(trans, &al, dA, &be, dC)
                          : shardmm_tradd(uplo, trans, &al, dA, &be, dC);
  CHECK(st == SHARDMM_OK, "%s %c%c status %d", name, trans, uplo, st);
  zd *got = gather(dt, dC, m, n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      if ((uplo == 'U' && i > j) || (uplo == 'L' && i < j)) continue;
      const zd x = trans == 'N' ? A[i + j * ar] : A[j + i * ar];
      C[i + j * m] = alpha * (trans == 'C' ? conj(x) : x) + beta * C[i + j * m];
    }
  compare(name, dt, got, C, m * n, 1, cabs(alpha) * fro(A, m * n));
  shardmm_matrix_destroy(dA), shardmm_matrix_destroy(dC);
  free(A), free(C), free(got);
}

/* Every flag combination (`all`), or for the single-precision dtypes one SIDE / UPLO pair of
 * the products and solves beside every TRANS. */
static void test_dtype(shardmm_dtype dt, int all) {
  const char sides[2] = {'L', 'R'}, uplos[2] = {'U', 'L'}, ops[3] = {'N', 'T', 'C'};
  for (int s = 0; s < 2; ++s)
    for (int u = 0; u < 2; ++u) {
      if (!all && s != u) continue;
      test_symm(dt, 0, sides[s], uplos[u]);
      test_symm(dt, 1, sides[s], uplos[u]);
      for (int t = 0; t < 3; ++t) {
        test_triangular(dt, 1, sides[s], uplos[u], ops[t], "NU"[(s + t) % 2]);
        test_triangular(dt, 0, sides[s], uplos[u], ops[t], "UN"[(s + t) % 2]);
      }
    }
  for (int u = 0; u < 2; ++u)
    for (int two = 0; two < 2; ++two) {
      test_rank_k(dt, 0, two, uplos[u], 'N'), test_rank_k(dt, 0, two, uplos[u], 'T');
      test_rank_k(dt, 1, two, uplos[u], 'N'), test_rank_k(dt, 1, two, uplos[u], 'C');
    }
  for (int t = 0; t < 3; ++t) {
    if (ops[t] != 'N') test_add(dt, 0, ops[t], 0);
    test_add(dt, 1, ops[t], 0);
    test_add(dt, 2, ops[t], uplos[t % 2]);
  }
}

/* Every status agreed: the same on every rank. */
static void check_agreed(int status, int want, const char *what) {
  int lo = status, hi = status;
  MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(status == want && lo == hi, "%s: status %d (want %d), ranks %d..%d", what, status, want, lo,
        hi);
}

static void test_errors(void) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  shardmm_matrix A = NULL, C = NULL, Cf = NULL, Z = NULL;
  shardmm_matrix_create_block_cyclic(g_mesh, SHARDMM_F64, 6, 6, 2, 2, 0, 0, NULL, 0, &A);
  shardmm_matrix_create_block_cyclic(g_mesh, SHARDMM_F64, 6, 5, 2, 2, 0, 0, NULL, 0, &C);
  shardmm_matrix_create_block_cyclic(g_mesh, SHARDMM_F32, 6, 6, 2, 2, 0, 0, NULL, 0, &Cf);
  shardmm_matrix_create_block_cyclic(g_mesh, SHARDMM_C128, 6, 6, 2, 2, 0, 0, NULL, 0, &Z);
  const double one = 1;
  const zd z1 = 1;
  check_agreed(shardmm_syrk('U', 'N', &one, A, &one, C), SHARDMM_ERROR_DIMENSION_MISMATCH,
               "syrk into a non-square C");
  check_agreed(shardmm_trsm('L', 'U', 'N', 'N', &one, A, C), SHARDMM_OK, "trsm 6x6 \\ 6x5");
  check_agreed(shardmm_trsm('R', 'U', 'N', 'N', &one, A, C), SHARDMM_ERROR_DIMENSION_MISMATCH,
               "trsm 6x5 / 6x6");
  check_agreed(shardmm_symm('L', 'U', &one, A, A, &one, Cf), SHARDMM_ERROR_INVALID_ARGUMENT,
               "symm over two dtypes");
  CHECK(strstr(shardmm_last_error(), "dtype") != NULL, "dtype message");
  check_agreed(shardmm_syrk('X', 'N', &one, A, &one, A), SHARDMM_ERROR_INVALID_ARGUMENT,
               "uplo 'X'");
  check_agreed(shardmm_trmm('L', 'U', 'N', 'Q', &one, A, C), SHARDMM_ERROR_INVALID_ARGUMENT,
               "diag 'Q'");
  check_agreed(shardmm_herk('U', 'T', &one, Z, &one, Z), SHARDMM_ERROR_INVALID_ARGUMENT,
               "herk op T on a complex dtype");
  check_agreed(shardmm_transpose('N', &z1, Z, &z1, Z), SHARDMM_ERROR_INVALID_ARGUMENT,
               "transpose op N");
  check_agreed(shardmm_geadd('N', &one, NULL, &one, A), SHARDMM_ERROR_INVALID_ARGUMENT, "null A");
  /* A bad side on the last rank only, then a null beta there: every rank fails alike. */
  const int last = g_rank == size - 1;
  check_agreed(shardmm_symm(last ? 'M' : 'L', 'U', &one, A, A, &one, A),
               SHARDMM_ERROR_INVALID_ARGUMENT, "side 'M' on one rank");
  CHECK(strstr(shardmm_last_error(), "side") && strstr(shardmm_last_error(), "first failing rank"),
        "message names side and the rank");
  check_agreed(shardmm_tradd('U', 'N', &one, A, last ? NULL : &one, A),
               SHARDMM_ERROR_INVALID_ARGUMENT, "null beta on one rank");
  CHECK(strstr(shardmm_last_error(), "beta") != NULL, "message names beta");
  check_agreed(shardmm_geadd('T', &one, A, &one, A), SHARDMM_OK, "geadd after agreed failures");
  shardmm_matrix_destroy(A), shardmm_matrix_destroy(C), shardmm_matrix_destroy(Cf);
  shardmm_matrix_destroy(Z);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_p = 1;
  for (int d = 1; d * d <= size; ++d)
    if (size % d == 0) g_p = d;
  g_q = size / g_p;
  char shape[64];
  snprintf(shape, sizeof shape, "x=%d,y=%d", g_p, g_q);
  CHECK(shardmm_mesh_create(MPI_COMM_WORLD, shape, &g_mesh) == SHARDMM_OK, "mesh %s", shape);
  const shardmm_dtype dtypes[4] = {SHARDMM_F64, SHARDMM_C128, SHARDMM_F32, SHARDMM_C64};
  for (int d = 0; d < 4; ++d) test_dtype(dtypes[d], d < 2);
  test_errors();
  shardmm_mesh_destroy(g_mesh);
  MPI_Allreduce(MPI_IN_PLACE, &g_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) printf("C API PBLAS-3 on %d ranks: %d failures\n", size, g_failures);
  MPI_Finalize();
  return g_failures ? 1 : 0;
}
