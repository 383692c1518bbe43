// Downstream C++ program: the installed C++ API. C = A * (2 I) must equal 2 A.
#include <shardmm/shardmm.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int failed = 0;
  {
    const shardmm::Mesh mesh = shardmm::Mesh::grid2d(MPI_COMM_WORLD);
    const shardmm::index_t n = 24;
    shardmm::DistMatrix<double> A(mesh, n, n, "A[I_X,J_Y]"), B(mesh, n, n, "B[I_X,J_Y]"),
        C(mesh, n, n, "C[I_X,J_Y]");
    A.fill([](shardmm::index_t i, shardmm::index_t j) { return double(i + 3 * j); });
    B.fill([](shardmm::index_t i, shardmm::index_t j) { return i == j ? 2.0 : 0.0; });
    const auto report = shardmm::gemm(shardmm::Op::N, shardmm::Op::N, 1.0, A, B, 0.0, C);
    for (shardmm::index_t i = 0; i < n; i += 5)
      for (shardmm::index_t j = 0; j < n; j += 7) failed |= C.at(i, j) != 2.0 * double(i + 3 * j);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      std::printf("C++ API: shardmm %s, %s on %s: %s\n", shardmm::version_string,
                  shardmm::to_string(report.algorithm).c_str(), report.grid.c_str(),
                  failed ? "WRONG" : "ok");
  }
  MPI_Finalize();
  return failed;
}
