/* shardmm C API: distributed C <- alpha op(A) op(B) + beta C from C (or any language with a C
 * FFI). Part of libshardmm.
 *
 * Handles are opaque: a mesh (MPI ranks arranged on named axes) and a distributed matrix (a
 * layout on a mesh plus this rank's local tile, column-major, usually the caller's own buffer).
 * Every function returns a shardmm_status; on failure shardmm_last_error() returns the message
 * (thread-local, valid until the thread's next shardmm call). No C++ exception crosses this API.
 * Functions marked "collective" must be called by every rank of the mesh's communicator; their
 * argument checks use only global values, so a bad call fails with the same status on every
 * rank before any communication.
 *
 *   shardmm_mesh mesh;
 *   shardmm_mesh_create(MPI_COMM_WORLD, "x=2,y=2", &mesh);
 *   int64_t mr, kc;                                    // local tile of A
 *   shardmm_local_shape(mesh, m, k, "A[I_X,J_Y]", &mr, &kc);
 *   double *a = malloc(...);                           // fill, same for B and C
 *   shardmm_matrix A, B, C;
 *   shardmm_matrix_create(mesh, SHARDMM_F64, m, k, "A[I_X,J_Y]", a, mr, &A);  // ...
 *   double alpha = 1, beta = 0;
 *   if (shardmm_gemm('N', 'N', &alpha, A, B, &beta, C, NULL, NULL) != SHARDMM_OK)
 *     fprintf(stderr, "%s\n", shardmm_last_error());
 */
#ifndef SHARDMM_C_SHARDMM_H
#define SHARDMM_C_SHARDMM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum shardmm_status {
  SHARDMM_OK = 0,
  SHARDMM_ERROR_INVALID_ARGUMENT = 1,   /* out-of-range value, null handle, ld too small, ... */
  SHARDMM_ERROR_PARSE = 2,              /* malformed mesh or layout text */
  SHARDMM_ERROR_DIMENSION_MISMATCH = 3, /* operand shapes do not fit together */
  SHARDMM_ERROR_NOT_SUPPORTED = 4,      /* valid, but the chosen algorithm cannot run it */
  SHARDMM_ERROR_MPI = 5,                /* an MPI call failed */
  SHARDMM_ERROR_OUT_OF_MEMORY = 6,
  SHARDMM_ERROR_IO = 7,
  SHARDMM_ERROR_BUFFER_TOO_SMALL = 8, /* an output string did not fit (it is truncated) */
  SHARDMM_ERROR_INTERNAL = 9
} shardmm_status;

typedef enum shardmm_dtype {
  SHARDMM_F32 = 0,                      /* float */
  SHARDMM_F64 = 1,                      /* double */
  SHARDMM_C64 = 2,                      /* float complex: (re, im) pairs */
  SHARDMM_C128 = 3,                     /* double complex */
  SHARDMM_BF16 = 4,                     /* bfloat16 as uint16_t bits (batched matrices only) */
  SHARDMM_F16 = 5,                      /* IEEE half as uint16_t bits (batched matrices only) */
  SHARDMM_DTYPE_INT_RANGE_ = 0x7fffffff /* keeps any int a valid value: checked, never UB */
} shardmm_dtype;

typedef enum shardmm_algorithm {
  SHARDMM_ALGORITHM_AUTO = 0, /* the planner chooses */
  SHARDMM_ALGORITHM_LOCAL,
  SHARDMM_ALGORITHM_SUMMA,
  SHARDMM_ALGORITHM_CANNON,
  SHARDMM_ALGORITHM_RING,
  SHARDMM_ALGORITHM_SHARDED,
  SHARDMM_ALGORITHM_25D,
  SHARDMM_ALGORITHM_STRASSEN, /* Strassen-Winograd: opt-in, weaker error bound (ALGORITHMS.md) */
  SHARDMM_ALGORITHM_INT_RANGE_ = 0x7fffffff /* keeps any int a valid value: checked, never UB */
} shardmm_algorithm;

typedef enum shardmm_stationary {
  SHARDMM_STATIONARY_AUTO = 0,
  SHARDMM_STATIONARY_A,
  SHARDMM_STATIONARY_B,
  SHARDMM_STATIONARY_C,
  SHARDMM_STATIONARY_INT_RANGE_ = 0x7fffffff /* keeps any int a valid value: checked, never UB */
} shardmm_stationary;

typedef enum shardmm_ring_form {
  SHARDMM_RING_AUTO = 0,
  SHARDMM_RING_ALLGATHER_A,
  SHARDMM_RING_ALLGATHER_B,
  SHARDMM_RING_REDUCE_SCATTER,
  SHARDMM_RING_FORM_INT_RANGE_ = 0x7fffffff /* keeps any int a valid value: checked, never UB */
} shardmm_ring_form;

/* The format f32 operands travel in between ranks (shardmm::Wire): as stored, or rounded to
 * bfloat16 / IEEE half (half the bytes; error bound in docs/ALGORITHMS.md). */
typedef enum shardmm_wire {
  SHARDMM_WIRE_F32 = 0,
  SHARDMM_WIRE_BF16 = 1,
  SHARDMM_WIRE_F16 = 2,
  SHARDMM_WIRE_INT_RANGE_ = 0x7fffffff /* keeps any int a valid value: checked, never UB */
} shardmm_wire;

/* Strassen's first step (shardmm::StrassenStep): AUTO takes the breadth-first step on 7 Q ranks
 * when the smallest side reaches the crossover; BREADTH_FIRST always (NOT_SUPPORTED unless the
 * ranks are a multiple of 7, m and n at least twice the ranks, k at least 2); DEPTH_FIRST
 * never (the classical distributions, each rank recursing locally). */
typedef enum shardmm_strassen_step {
  SHARDMM_STRASSEN_STEP_AUTO = 0,
  SHARDMM_STRASSEN_STEP_BREADTH_FIRST = 1,
  SHARDMM_STRASSEN_STEP_DEPTH_FIRST = 2,
  SHARDMM_STRASSEN_STEP_INT_RANGE_ = 0x7fffffff /* keeps any int a valid value: checked */
} shardmm_strassen_step;
/* How a call's ranks wait for their messages (shardmm::Wait): AUTO follows SHARDMM_WAIT, else
 * sleeps when the node runs more ranks than it has CPUs; SPIN polls (MPI_Waitall); SLEEP tests
 * with naps between, leaving the core to other ranks. */
typedef enum shardmm_wait {
  SHARDMM_WAIT_AUTO = 0,
  SHARDMM_WAIT_SPIN = 1,
  SHARDMM_WAIT_SLEEP = 2,
  SHARDMM_WAIT_INT_RANGE_ = 0x7fffffff /* keeps any int a valid value: checked, never UB */
} shardmm_wait;

/* Options of shardmm_gemm / shardmm_plan; shardmm_options_init sets the defaults (those of the
 * C++ shardmm::Options). */
typedef struct shardmm_options {
  shardmm_algorithm algorithm;
  int64_t panel;                 /* SUMMA C-stationary's panel width along k (0: default) */
  int64_t block;                 /* block size of redistributed layouts (0: block layouts) */
  shardmm_stationary stationary; /* SUMMA variant */
  int overlap;                   /* overlap communication with local GEMMs (default 1) */
  const char *ring_axis;         /* ring: mesh axis (NULL: the longest axis) */
  shardmm_ring_form ring_form;
  int bidirectional;          /* ring, all-gather forms */
  int grid_m, grid_n, grid_k; /* 2.5D grid (all 0: the planner chooses) */
  int64_t memory_limit;       /* bytes per rank for the planner (0: SHARDMM_MEMORY_LIMIT) */
  int allow_fast;             /* AUTO may pick Strassen (default 0: classical only) */
  const char *trace; /* trace this call into this file (Chrome trace-event JSON, for Perfetto;
                        docs/PROFILING.md); NULL: the file SHARDMM_TRACE names, if any */
  shardmm_wire wire; /* f32 products: the operands' format between ranks (default F32) */
  int64_t stationary_chunk; /* SUMMA A/B-stationary: C's columns (rows) per owner and chunk
                               (0: default) */
  int64_t ring_chunk;       /* ring: p = 2's swap chunk, p > 2's pass (0: default) */
  shardmm_strassen_step strassen_step; /* STRASSEN: its first step (default AUTO) */
  shardmm_wait wait;                   /* how the call's ranks wait for messages (default AUTO) */
} shardmm_options;

/* What one shardmm_gemm did on this rank. */
typedef struct shardmm_report {
  char algorithm[16]; /* "summa", "ring", ... */
  char grid[64];      /* e.g. "2x3" */
  int64_t bytes_sent, bytes_received, messages;
  double seconds_total, seconds_gemm, seconds_comm, seconds_redist;
} shardmm_report;

typedef struct shardmm_mesh_s *shardmm_mesh;
typedef struct shardmm_matrix_s *shardmm_matrix;

/* "0.1.0". */
const char *shardmm_version(void);
/* Message of this thread's last failed call ("" after a successful call). */
const char *shardmm_last_error(void);
void shardmm_options_init(shardmm_options *options);

/* Collective over comm (duplicated). shape: "x=2,y=3" or "2x3" (axes X, Y). */
int shardmm_mesh_create(MPI_Comm comm, const char *shape, shardmm_mesh *mesh);
/* Collective. Axis names and sizes; rank order row-major (last axis fastest) unless
 * column_major. */
int shardmm_mesh_create_axes(MPI_Comm comm, int ndims, const char *const *names, const int *sizes,
                             int column_major, shardmm_mesh *mesh);
/* Collective (frees communicators). Null is ignored. Matrices keep their mesh alive. */
int shardmm_mesh_destroy(shardmm_mesh mesh);
/* This rank's place: rank in the mesh, number of ranks, axes; coords gets ndims entries
 * (any output may be NULL). */
int shardmm_mesh_info(shardmm_mesh mesh, int *rank, int *size, int *ndims, int *coords);

/* Local tile extent of an m x n matrix with `layout` (notation "A[I_X,J_Y]", "bc(64,64)", ...)
 * on this rank. Not collective. */
int shardmm_local_shape(shardmm_mesh mesh, int64_t m, int64_t n, const char *layout,
                        int64_t *local_rows, int64_t *local_cols);
/* A distributed matrix over caller memory `data` (this rank's tile, column-major, leading
 * dimension ld >= local rows; no copy) or, when data is NULL, over a zero-filled tile the
 * library owns (ld 0: local rows). Not collective. */
int shardmm_matrix_create(shardmm_mesh mesh, shardmm_dtype dtype, int64_t m, int64_t n,
                          const char *layout, void *data, int64_t ld, shardmm_matrix *matrix);
/* ScaLAPACK's layout: mb x nb blocks, cyclic over the first two mesh axes from (rsrc, csrc). */
int shardmm_matrix_create_block_cyclic(shardmm_mesh mesh, shardmm_dtype dtype, int64_t m, int64_t n,
                                       int64_t mb, int64_t nb, int rsrc, int csrc, void *data,
                                       int64_t ld, shardmm_matrix *matrix);
/* Null is ignored; caller memory is not freed. */
int shardmm_matrix_destroy(shardmm_matrix matrix);
/* This rank's tile (any output may be NULL). */
int shardmm_matrix_local(shardmm_matrix matrix, void **data, int64_t *local_rows,
                         int64_t *local_cols, int64_t *ld);
/* Global row and column of local element (i_loc, j_loc) of this rank's tile. */
int shardmm_matrix_global_index(shardmm_matrix matrix, int64_t i_loc, int64_t j_loc, int64_t *i,
                                int64_t *j);

/* Collective. C <- alpha op(A) op(B) + beta C; trans: 'N', 'T' or 'C'. alpha and beta point to
 * one value of the matrices' dtype (all three must share it and the mesh). options NULL:
 * defaults; report may be NULL. */
int shardmm_gemm(char transa, char transb, const void *alpha, shardmm_matrix A, shardmm_matrix B,
                 const void *beta, shardmm_matrix C, const shardmm_options *options,
                 shardmm_report *report);
/* Not collective, no communication: the algorithm, grid and details shardmm_gemm would use
 * for these operands, e.g. "summa on 2x2 [C-stationary, ...]", written to buffer (size
 * bytes, always terminated); *length (may be NULL) gets the full length. A buffer too small
 * gives SHARDMM_ERROR_BUFFER_TOO_SMALL with the text truncated. */
int shardmm_plan(char transa, char transb, shardmm_matrix A, shardmm_matrix B, shardmm_matrix C,
                 const shardmm_options *options, char *buffer, size_t size, size_t *length);

/* The PBLAS level-3 family (include/shardmm/blas3.hpp; ScaLAPACK's p?symm ... p?tradd). All
 * collective over the matrices' mesh, which they must share with one dtype. Flags are
 * characters in either case: side 'L' (op(A) B) or 'R' (B op(A)); uplo 'U' or 'L' (the
 * triangle read or written); trans 'N', 'T' or 'C'; diag 'N' or 'U' (unit diagonal, not read).
 * alpha and beta point to one value of the matrices' dtype, except where marked real: then
 * to a float (F32, C64) or a double (F64, C128). A bad argument fails with the same status on
 * every rank before anything moves. */

/* C <- alpha A B + beta C (side 'L'; A m x m) or alpha B A + beta C ('R'; A n x n), A symmetric
 * with only its uplo triangle read; B and C m x n (p?symm). */
int shardmm_symm(char side, char uplo, const void *alpha, shardmm_matrix A, shardmm_matrix B,
                 const void *beta, shardmm_matrix C);
/* As shardmm_symm with A Hermitian (p?hemm): the other triangle is conj(A)^T, the imaginary
 * parts of A's diagonal are taken as zero. */
int shardmm_hemm(char side, char uplo, const void *alpha, shardmm_matrix A, shardmm_matrix B,
                 const void *beta, shardmm_matrix C);
/* The uplo triangle of the n x n C <- alpha op(A) op(A)^T + beta C; trans 'N' (A n x k) or
 * 'T' (A k x n; 'C' too for real dtypes). The other triangle is not touched (p?syrk). */
int shardmm_syrk(char uplo, char trans, const void *alpha, shardmm_matrix A, const void *beta,
                 shardmm_matrix C);
/* The uplo triangle of C <- alpha op(A) op(A)^H + beta C, alpha and beta real; trans 'N' or 'C'
 * ('T' too for real dtypes); the diagonal's imaginary parts are set to zero (p?herk). */
int shardmm_herk(char uplo, char trans, const void *alpha, shardmm_matrix A, const void *beta,
                 shardmm_matrix C);
/* The uplo triangle of C <- alpha op(A) op(B)^T + alpha op(B) op(A)^T + beta C; A and B n x k
 * (trans 'N') or k x n ('T') (p?syr2k). */
int shardmm_syr2k(char uplo, char trans, const void *alpha, shardmm_matrix A, shardmm_matrix B,
                  const void *beta, shardmm_matrix C);
/* The uplo triangle of C <- alpha op(A) op(B)^H + conj(alpha) op(B) op(A)^H + beta C, beta
 * real; trans 'N' or 'C' (p?her2k). */
int shardmm_her2k(char uplo, char trans, const void *alpha, shardmm_matrix A, shardmm_matrix B,
                  const void *beta, shardmm_matrix C);
/* B (m x n) <- alpha op(A) B (side 'L'; A m x m) or alpha B op(A) ('R'; A n x n), A triangular
 * (its uplo triangle; diag 'U': ones on the diagonal) (p?trmm). */
int shardmm_trmm(char side, char uplo, char transa, char diag, const void *alpha, shardmm_matrix A,
                 shardmm_matrix B);
/* B <- alpha op(A)^-1 B (side 'L') or alpha B op(A)^-1 ('R'), A as for shardmm_trmm; a singular
 * A gives infinities or NaN as BLAS trsm does, no error (p?trsm). */
int shardmm_trsm(char side, char uplo, char transa, char diag, const void *alpha, shardmm_matrix A,
                 shardmm_matrix B);
/* C (m x n) <- alpha op(A) + beta C, A n x m; trans 'T' (p?tran, p?tranu) or 'C' (p?tranc). */
int shardmm_transpose(char trans, const void *alpha, shardmm_matrix A, const void *beta,
                      shardmm_matrix C);
/* C <- alpha op(A) + beta C; trans 'N', 'T' or 'C' (p?geadd). */
int shardmm_geadd(char trans, const void *alpha, shardmm_matrix A, const void *beta,
                  shardmm_matrix C);
/* The uplo trapezoid of C (i <= j or i >= j) <- alpha op(A) + beta C, the rest of C not
 * touched (p?tradd). */
int shardmm_tradd(char uplo, char trans, const void *alpha, shardmm_matrix A, const void *beta,
                  shardmm_matrix C);

/* Collective over comm: out <- alpha op(A) op(B) + beta C0 for .npy files (alpha, beta given
 * as real and imaginary parts; C0 read only when beta != 0). Under memory_limit bytes per rank
 * (0: SHARDMM_MEMORY_LIMIT, else no limit) the in-core path runs when the operands fit, else
 * the product streams from the files (docs/OUT_OF_CORE.md). io: "posix" (NULL), "mpiio" or "mmap".
 * out is written in Fortran (out_fortran_order != 0) or C order, whole or not at all. */
int shardmm_gemm_files(MPI_Comm comm, char transa, const char *a_path, char transb,
                       const char *b_path, double alpha_re, double alpha_im, double beta_re,
                       double beta_im, const char *c0_path, const char *out_path,
                       int out_fortran_order, int64_t memory_limit, const char *io);

/* Batched products: C[b] <- alpha op(A[b]) op(B[b]) + beta C[b] for b < batch. A batched
 * matrix has a batched layout "A[B_X,I,J_Y]" (docs/USAGE.md): the batch cut over mesh axes,
 * each element's rows and columns over the others. This rank's local_batch elements are
 * column-major tiles of local_rows x local_cols, tile b at data + b * stride (elements). */
typedef struct shardmm_batched_s *shardmm_batched;

typedef enum shardmm_batch_merge {
  SHARDMM_MERGE_AUTO = 0,   /* one larger product where one operand is shared and it can */
  SHARDMM_MERGE_NEVER = 1,  /* one product per batch element */
  SHARDMM_MERGE_ALWAYS = 2, /* merged, or SHARDMM_ERROR_NOT_SUPPORTED */
  SHARDMM_MERGE_INT_RANGE_ = 0x7fffffff /* keeps any int a valid value: checked, never UB */
} shardmm_batch_merge;

/* What one shardmm_gemm_batched did on this rank. */
typedef struct shardmm_batched_report {
  int64_t products;    /* products this rank took part in */
  int merged;          /* the batch ran as one product */
  shardmm_report gemm; /* the first product's algorithm and grid; counters summed */
} shardmm_batched_report;

/* Local extents of a batch x m x n batched matrix with `layout` on this rank. Not collective. */
int shardmm_batched_local_shape(shardmm_mesh mesh, int64_t batch, int64_t m, int64_t n,
                                const char *layout, int64_t *local_batch, int64_t *local_rows,
                                int64_t *local_cols);
/* Collective over the mesh (it makes the communicator of the axes the batch is not cut over,
 * once per mesh and axes). data: this rank's tiles (leading dimension ld >= local rows, tile
 * stride >= ld * local columns; no copy), or NULL for zero-filled tiles the library owns (ld
 * and stride 0). dtype: any, SHARDMM_BF16 and SHARDMM_F16 included. */
int shardmm_batched_create(shardmm_mesh mesh, shardmm_dtype dtype, int64_t batch, int64_t m,
                           int64_t n, const char *layout, void *data, int64_t ld, int64_t stride,
                           shardmm_batched *matrix);
/* Null is ignored; caller memory is not freed. */
int shardmm_batched_destroy(shardmm_batched matrix);
/* This rank's tiles (any output may be NULL). */
int shardmm_batched_local(shardmm_batched matrix, void **data, int64_t *local_batch,
                          int64_t *local_rows, int64_t *local_cols, int64_t *ld, int64_t *stride);
/* Global batch index, row and column of local element (i_loc, j_loc) of local tile b_loc. */
int shardmm_batched_global_index(shardmm_batched matrix, int64_t b_loc, int64_t i_loc,
                                 int64_t j_loc, int64_t *b, int64_t *i, int64_t *j);
/* Collective. A is batched (A) or one matrix shared by every batch element (shared_a): give
 * exactly one of them, and the same for B; C is batched. All share the mesh and the dtype;
 * a batched operand that cuts the batch unlike C is moved into C's cut first. alpha and beta
 * point to one value of the dtype (a float for SHARDMM_BF16 and SHARDMM_F16). options NULL:
 * defaults; report may be NULL. */
int shardmm_gemm_batched(char transa, char transb, const void *alpha, shardmm_batched A,
                         shardmm_matrix shared_a, shardmm_batched B, shardmm_matrix shared_b,
                         const void *beta, shardmm_batched C, const shardmm_options *options,
                         shardmm_batch_merge merge, shardmm_batched_report *report);

#ifdef __cplusplus
}
#endif

#endif /* SHARDMM_C_SHARDMM_H */
