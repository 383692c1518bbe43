// Each redistribution pattern runs as its collective and receives exactly the words of the JAX
// guide's formula, written out here from the sizes: for a group of g ranks, AllGather,
// AllToAll and ReduceScatter deliver (g - 1) / g of the tile they concern (the gathered tile,
// the tile, the partial tile), AllReduce 2 (g - 1) / g of the tile, a slice nothing. Measured
// with the library's counters (RedistStats), on the mesh {x: p, y: q} of P = p q ranks
// (near-square, p >= q), with sizes every tile divides; the result is checked against the
// source's logical value, and the planner's pure price (received_words) against the formula.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "matrix/redistribute_plan.hpp"
#include "mpi/mpi_test_util.hpp"

using namespace shardmm;
using namespace shardmm::testing;
using shardmm::matrix::Pattern;

namespace {

constexpr index_t M = 48, N = 24;  // divisible by every group size at 2..8 ranks

struct World {
  std::vector<int> f = factor_near_square(world_size(), 2);
  int p = f[0], q = f[1];
  Mesh mesh{MPI_COMM_WORLD, MeshShape({"x", "y"}, {f[0], f[1]})};
  [[nodiscard]] int x() const { return mesh.coords()[0]; }
  [[nodiscard]] int y() const { return mesh.coords()[1]; }
};

// A matrix whose logical value is entry(i, j): along unreduced axes the u partials differ
// (entry / u plus offsets that cancel).
DistMatrix<double> source(const Mesh& mesh, const std::string& spec) {
  DistMatrix<double> A(mesh, M, N, spec);
  const Layout& L = A.layout();
  int u = 1, k = 0;
  for (int a : L.unreduced_axes()) {
    u *= mesh.shape().sizes[a];
    k = k * mesh.shape().sizes[a] + mesh.coords()[a];
  }
  for (index_t j = 0; j < A.local_cols(); ++j)
    for (index_t i = 0; i < A.local_rows(); ++i)
      A.local(i, j) =
          entry<double>(A.global_row(i), A.global_col(j)) / u + 0.25 * (2 * k - (u - 1));
  return A;
}

// Runs src -> dst and checks the pattern, the words against `want` (this rank's formula) and
// the result.
void check(const World& w, const std::string& from, const std::string& to, Pattern pattern,
           double want) {
  const DistMatrix<double> A = source(w.mesh, from);
  DistMatrix<double> B(w.mesh, M, N, to);
  const std::string what = from + " -> " + to + " on " + w.mesh.shape().to_string();
  const auto plan = matrix::plan_redistribution(A.layout(), B.layout());
  EXPECT_EQ(plan.pattern, pattern) << what << ": " << plan.to_string(w.mesh.shape());
  const RedistStats st = redistribute(A, B);
  EXPECT_EQ(st.bytes_received, static_cast<std::int64_t>(want) * 8)
      << what << " rank " << world_rank();
  EXPECT_DOUBLE_EQ(matrix::received_words(A.layout(), B.layout())[world_rank()], want) << what;
  const auto got = B.gather();
  if (world_rank() != 0) return;
  double err = 0;
  for (index_t j = 0; j < N; ++j)
    for (index_t i = 0; i < M; ++i)
      err = std::max(err, std::abs(got[static_cast<std::size_t>(i + j * M)] - entry<double>(i, j)));
  EXPECT_LT(err, 1e-12) << what;
}

TEST(RedistributePatterns, AllGather) {
  const World w;
  if (w.p == 1) GTEST_SKIP() << "one rank: every redistribution is a local copy";
  const double p = w.p, q = w.q;
  check(w, "A[I_X,J]", "A[I,J]", Pattern::AllGather, M * N * (p - 1) / p);
  if (w.q == 1) GTEST_SKIP() << "one axis longer than 1";
  check(w, "A[I_XY,J]", "A[I_X,J]", Pattern::AllGather, M / p * N * (q - 1) / q);  // sub-axis
  check(w, "A[I,J_XY]", "A[I,J_Y:bc" + std::to_string(N / w.p / w.q) + "]", Pattern::AllGather,
        M * N / q * (p - 1) / p);  // the major axis: the minor's blocks stay where they are
  check(w, "A[I_X,J_Y]", "A[I,J]", Pattern::AllGather, M * N * (p * q - 1) / (p * q));
}

TEST(RedistributePatterns, SlicesMoveNothing) {
  const World w;
  check(w, "A[I,J]", "A[I_X,J_Y]", Pattern::Local, 0);
  check(w, "A[I_X,J]", "A[I_XY,J]", Pattern::Local, 0);
  check(w, "A[I,J]{U_X}", "A[I,J_Y]{U_X}", Pattern::Local, 0);
}

TEST(RedistributePatterns, AllToAll) {
  const World w;
  if (w.p == 1) GTEST_SKIP() << "one rank: every redistribution is a local copy";
  const double p = w.p, q = w.q;
  check(w, "A[I,J_X]", "A[I_X,J]", Pattern::AllToAll, M / p * N * (p - 1) / p);
  if (w.q == 1) GTEST_SKIP() << "one axis longer than 1";
  check(w, "A[I_XY,J]", "A[I_X,J_Y]", Pattern::AllToAll, M / p * N / q * (q - 1) / q);
}

TEST(RedistributePatterns, PermutationOfTiles) {
  const World w;
  if (w.q == 1) GTEST_SKIP() << "one axis longer than 1";
  // I_XY -> I_YX: (x, y) holds block x q + y and needs block y p + x, whole, from one rank.
  const double tile = double(M) / (w.p * w.q) * N;
  check(w, "A[I_XY,J]", "A[I_YX,J]", Pattern::Permute,
        w.y() * w.p + w.x() == w.x() * w.q + w.y() ? 0 : tile);
}

TEST(RedistributePatterns, ReduceScatterAndAllReduce) {
  const World w;
  if (w.p == 1) GTEST_SKIP() << "one rank: every redistribution is a local copy";
  const double p = w.p, q = w.q;
  check(w, "C[I,J]{U_X}", "C[I_X,J]", Pattern::ReduceScatter, M * N * (p - 1) / p);
  check(w, "C[I,J]{U_X}", "C[I,J]", Pattern::AllReduce, 2 * M * N * (p - 1) / p);
  if (w.q == 1) GTEST_SKIP() << "one axis longer than 1";
  check(w, "C[I_X,J]{U_Y}", "C[I_XY,J]", Pattern::ReduceScatter, M / p * N * (q - 1) / q);
  check(w, "C[I,J]{U_XY}", "C[I,J_XY]", Pattern::ReduceScatter, M * N * (p * q - 1) / (p * q));
  check(w, "C[I,J]{U_Y}", "C[I_X,J]", Pattern::AllReduce, 2 * M / p * N * (q - 1) / q);
}

}  // namespace
