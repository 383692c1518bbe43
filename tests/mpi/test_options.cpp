// Options that shape how a call runs rather than what it computes: the BLAS thread count is
// set and reported.
#include <gtest/gtest.h>

#include "blas/blas.hpp"
#include "mpi/gemm_check.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

struct Operands {
  Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> A{mesh, 96, 80, "A[I_X,K_Y]"}, B{mesh, 80, 72, "B[K_X,J_Y]"},
      C{mesh, 96, 72, "C[I_X,J_Y]"};
  Operands() {
    A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
    B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  }
};

TEST(Options, BlasThreadsAreSetAndReported) {
  const int before = blas::num_threads();
  for (int threads : {2, 1}) {
    Operands x;
    Options o;
    o.blas_threads = threads;
    const GemmReport r = gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C, o);
    EXPECT_EQ(r.blas_threads, threads);
    EXPECT_EQ(blas::num_threads(), threads);
    const std::vector<double> zero(std::size_t{96} * 72, 0.0);
    EXPECT_LE(gemm_error(Op::N, Op::N, 1.0, x.A, x.B, 0.0, zero, x.C), 10.0);
  }
  blas::set_num_threads(before);
}

}  // namespace
