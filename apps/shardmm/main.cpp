// shardmm launcher (placeholder until the launcher issue): distribution round trip.
#include <mpi.h>

#include <cstdio>

#include "shardmm/shardmm.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    using namespace shardmm;
    Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
    const index_t m = 1000, n = 700;
    DistMatrix<double> A(mesh, Layout::block_cyclic(mesh.shape(), m, n, 32, 32));
    A.fill([](index_t i, index_t j) { return static_cast<double>(i * 1000 + j); });
    RedistStats st;
    auto B = redistribute(A, Layout(mesh.shape(), m, n, "A[I_XY,J]"), &st);
    auto C = redistribute(B, A.layout());
    double err = 0;
    for (index_t j = 0; j < C.local_cols(); ++j)
      for (index_t i = 0; i < C.local_rows(); ++i)
        err = std::max(err, std::abs(C.local(i, j) - A.local(i, j)));
    double gerr = 0;
    MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (mesh.rank() == 0)
      std::printf("shardmm %s: round trip bc(32,32) -> A[I_XY,J] -> bc(32,32) on %s: max error %g\n",
                  version_string, mesh.shape().to_string().c_str(), gerr);
    rc = gerr == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shardmm: error: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
