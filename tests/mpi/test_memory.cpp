// Memory budget: a limit below the predicted need fails on every rank before anything is
// allocated; exactly at need runs; repeated calls reuse the workspace instead of growing it.
#include <gtest/gtest.h>

#include <cstdint>

#include "memory/workspace.hpp"
#include "mpi/gemm_check.hpp"
#include "mpi/mpi_test_util.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

constexpr index_t M = 120, N = 90, K = 150;

struct Operands {
  Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> A{mesh, M, K, "A[I_X,K_Y]"}, B{mesh, K, N, "B[K_X,J_Y]"},
      C{mesh, M, N, "C[I_X,J_Y]"};
};

std::int64_t summa_need(const Mesh& mesh) {
  PlanRequest r;
  r.m = M, r.n = N, r.k = K, r.ranks = mesh.size();
  Candidate c{Algorithm::Summa,      Stationary::C,         RingForm::Auto,
              mesh.shape().sizes[0], mesh.shape().sizes[1], 1};
  return evaluate(r, c).memory_bytes;
}

Options summa_with_limit(std::int64_t limit) {
  Options o;
  o.algorithm = Algorithm::Summa;
  o.stationary = Stationary::C;
  o.memory_limit = limit;
  return o;
}

TEST(MemoryBudget, BelowNeedFailsEverywhereBeforeAllocating) {
  Operands x;
  const std::int64_t need = summa_need(x.mesh);
  memory::release();
  expect_same_error_everywhere<OutOfMemory>(
      [&] { gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C, summa_with_limit(need - 1)); },
      std::to_string(need) + " bytes per rank");
  EXPECT_EQ(memory::held_bytes(), 0u) << "nothing may be allocated before the budget check";
}

TEST(MemoryBudget, ExactlyAtNeedRuns) {
  Operands x;
  x.A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  x.B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  EXPECT_NO_THROW(
      gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C, summa_with_limit(summa_need(x.mesh))));
}

TEST(MemoryBudget, AutoWithNothingThatFitsSaysHowManyBytesAreMissing) {
  Operands x;
  Options o;
  o.memory_limit = 64;
  if (world_size() == 1) GTEST_SKIP() << "one rank: the local path";
  expect_same_error_everywhere<OutOfMemory>([&] { gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C, o); },
                                            "bytes missing");
}

TEST(MemoryBudget, RepeatedCallsDoNotGrowTheWorkspace) {
  Operands x;
  x.A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  x.B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  for (Algorithm a : {Algorithm::Summa, Algorithm::Ring, Algorithm::Gemm25D}) {
    Options o;
    o.algorithm = a;
    if (a == Algorithm::Ring) {
      o.ring_axis = "x";
      if (x.mesh.shape().sizes[0] == 1) continue;
    }
    if (a == Algorithm::Gemm25D && world_size() == 1) continue;
    gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C, o);
    const std::size_t held = memory::held_bytes();
    for (int r = 0; r < 3; ++r) gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C, o);
    EXPECT_EQ(memory::held_bytes(), held) << to_string(a);
  }
}

// The sharding-rule algorithm's gathered operand streams through the pool: the first call
// takes two of A's pieces (A is gathered around the ring past the product, never whole),
// later calls take nothing more, and the result stays right.
TEST(MemoryBudget, ShardedStreamsThroughThePool) {
  Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  if (mesh.size() == 1) GTEST_SKIP() << "no axis to gather over";
  const std::string ax = mesh.shape().sizes[0] > 1 ? "X" : "Y";
  const int u = mesh.shape().sizes[0] > 1 ? mesh.shape().sizes[0] : mesh.shape().sizes[1];
  const index_t m = 60, n = 240, k = 150;  // A is the smaller operand to gather
  DistMatrix<double> A{mesh, m, k, "A[I_" + ax + ",K]"}, B{mesh, k, n, "B[K,J_" + ax + "]"},
      C{mesh, m, n, "C[I,J_" + ax + "]"};
  A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<double>(i, j, 3); });
  const auto C0 = C.gather();
  Options o;
  o.algorithm = Algorithm::Sharded;
  memory::release();
  gemm(Op::N, Op::N, 1.0, A, B, 0.5, C, o);
  EXPECT_LE(gemm_error(Op::N, Op::N, 1.0, A, B, 0.5, C0, C), 10.0);
  const std::size_t held = memory::held_bytes(), piece = std::size_t(m / u) * k * sizeof(double);
  EXPECT_EQ(held, 2 * piece) << "the pool holds other than two of A's pieces";
  for (int r = 0; r < 3; ++r) gemm(Op::N, Op::N, 1.0, A, B, 0.5, C, o);
  EXPECT_EQ(memory::held_bytes(), held);
}

// Owned local tiles from 2 MiB up start on a 2 MiB boundary (transparent huge pages, see
// detail::TileAllocator); smaller ones on a 64-byte boundary. Copies are deep and keep both.
TEST(TileStorage, LargeTilesStartOnHugePageBoundaries) {
  Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const index_t rows = index_t{1024} * mesh.shape().sizes[0],
                cols = index_t{512} * mesh.shape().sizes[1];  // 4 MiB per rank
  DistMatrix<double> big{mesh, rows, cols, "A[I_X,J_Y]"}, small{mesh, 40, 30, "A[I_X,J_Y]"};
  ASSERT_GE(big.local_rows() * big.local_cols() * index_t(sizeof(double)), index_t{2} << 20);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.data()) % (std::uintptr_t{2} << 20), 0U);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(small.data()) % 64U, 0U);
  big.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  const DistMatrix<double> copy = big;
  EXPECT_NE(copy.data(), big.data());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(copy.data()) % (std::uintptr_t{2} << 20), 0U);
  EXPECT_EQ(copy.gather(), big.gather());
  EXPECT_EQ(
      copy.local(big.local_rows() - 1, big.local_cols() - 1),
      entry<double>(big.global_row(big.local_rows() - 1), big.global_col(big.local_cols() - 1), 1));
}

}  // namespace
