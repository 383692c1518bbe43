/* Downstream C program: the installed C API over caller buffers. C = A * (2 I) = 2 A. */
#include <shardmm/c/shardmm.h>

#include <stdio.h>
#include <stdlib.h>

static shardmm_matrix matrix(shardmm_mesh mesh, int64_t n, const char *layout, int which) {
  int64_t lr = 0, lc = 0;
  shardmm_local_shape(mesh, n, n, layout, &lr, &lc);
  double *data = calloc((size_t)((lr > 0 ? lr : 1) * (lc > 0 ? lc : 1)), sizeof *data);
  shardmm_matrix X = NULL;
  if (shardmm_matrix_create(mesh, SHARDMM_F64, n, n, layout, data, lr, &X) != SHARDMM_OK)
    return NULL;
  for (int64_t jl = 0; jl < lc; ++jl)
    for (int64_t il = 0; il < lr; ++il) {
      int64_t i, j;
      shardmm_matrix_global_index(X, il, jl, &i, &j);
      data[il + jl * lr] = which == 0 ? (double)(i + 3 * j) : (which == 1 && i == j ? 2.0 : 0.0);
    }
  return X;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, failed = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char shape[32];
  snprintf(shape, sizeof shape, "x=1,y=%d", size);
  shardmm_mesh mesh = NULL;
  if (shardmm_mesh_create(MPI_COMM_WORLD, shape, &mesh) != SHARDMM_OK) failed = 1;
  const int64_t n = 24;
  shardmm_matrix A = matrix(mesh, n, "A[I_X,J_Y]", 0), B = matrix(mesh, n, "B[I_X,J_Y]", 1),
                 C = matrix(mesh, n, "C[I_X,J_Y]", 2);
  const double one = 1, zero = 0;
  char plan[200] = "";
  shardmm_plan('N', 'N', A, B, C, NULL, plan, sizeof plan, NULL);
  if (shardmm_gemm('N', 'N', &one, A, B, &zero, C, NULL, NULL) != SHARDMM_OK) {
    printf("gemm failed: %s\n", shardmm_last_error());
    failed = 1;
  }
  double *c = NULL;
  int64_t lr = 0, lc = 0, ld = 0;
  shardmm_matrix_local(C, (void **)&c, &lr, &lc, &ld);
  for (int64_t jl = 0; jl < lc; ++jl)
    for (int64_t il = 0; il < lr; ++il) {
      int64_t i, j;
      shardmm_matrix_global_index(C, il, jl, &i, &j);
      failed |= c[il + jl * ld] != 2.0 * (double)(i + 3 * j);
    }
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("C API: shardmm %s, plan '%s': %s\n", shardmm_version(), plan, failed ? "WRONG" : "ok");
  shardmm_matrix *all[3] = {&A, &B, &C};
  for (int x = 0; x < 3; ++x) {
    void *data = NULL;
    shardmm_matrix_local(*all[x], &data, NULL, NULL, NULL);
    shardmm_matrix_destroy(*all[x]);
    free(data);
  }
  shardmm_mesh_destroy(mesh);
  MPI_Finalize();
  return failed;
}
