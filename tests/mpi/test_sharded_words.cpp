// The sharding-rule matmul moves exactly what the JAX guide's formulas say, case by case, on
// the mesh {x: p, y: q} of P = p q ranks (near-square, p >= q), with sizes every tile divides
// (words = elements a rank receives, from the library's counters; V the tile a collective
// concerns, g its group):
//   case 1 (no contracting axis sharded):   nothing
//   case 2 (one operand sharded on k):      AllGather it, (g-1)/g V; or, when k is long, slice
//                                           the other and ReduceScatter C, (g-1)/g V
//   case 3 (both sharded on k, one axis):   ReduceScatter (g-1)/g V, AllReduce 2 (g-1)/g V, or
//                                           nothing when C keeps the partial sums
//   case 4 (both non-contracting on X):     AllGather one operand
//   partial axis groups:                    A[I_XY,J] gathered over y only into [I_X,J]
// Every run is checked against the serial oracle; the plan's price (what Auto sees) equals
// the measured words; and Auto, from layouts holding 1/P of every matrix where the lower bound
// is reachable, stays within 1.10 x that bound.
#include <gtest/gtest.h>

#include <string>

#include "algo/sharded_plan.hpp"
#include "mpi/gemm_check.hpp"
#include "mpi/mpi_test_util.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

struct World {
  std::vector<int> f = factor_near_square(world_size(), 2);
  int p = f[0], q = f[1];
  Mesh mesh{MPI_COMM_WORLD, MeshShape({"x", "y"}, {f[0], f[1]})};
};

struct Shape {
  index_t m, n, k;
};

// The stored layout of X when op(X) has the logical layout `spec` (rows x cols).
Layout stored(Op op, const Mesh& mesh, index_t rows, index_t cols, const std::string& spec) {
  const Layout logical(mesh.shape(), rows, cols, spec);
  return op == Op::N ? logical : logical.transposed();
}

double busiest(double words) {
  double most = 0;
  MPI_Allreduce(&words, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return most;
}

// Runs C <- 1.5 op(A) op(B) - 0.5 C with `algo`; checks the result and returns the words this
// rank received (and the plan's price of the busiest rank's words, for the sharding rules).
double run(const World& w, Op opA, Op opB, Shape s, const std::string& a, const std::string& b,
           const std::string& c, Algorithm algo, double* priced = nullptr) {
  DistMatrix<double> A(w.mesh, stored(opA, w.mesh, s.m, s.k, a)),
      B(w.mesh, stored(opB, w.mesh, s.k, s.n, b)), C(w.mesh, Layout(w.mesh.shape(), s.m, s.n, c));
  A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<double>(i, j, 3); });
  const auto c0 = C.gather();
  Options o;
  o.algorithm = algo;
  const GemmReport r = gemm(opA, opB, 1.5, A, B, -0.5, C, o);
  const std::string what = a + " . " + b + " -> " + c + " " + to_string(opA) + to_string(opB) +
                           " on " + w.mesh.shape().to_string() + ": " + r.detail;
  EXPECT_LE(gemm_error(opA, opB, 1.5, A, B, -0.5, c0, C), 10.0) << what;
  if (priced) {
    algo::Problem p;
    p.opA = opA, p.opB = opB, p.m = s.m, p.n = s.n, p.k = s.k;
    p.A = A.layout(), p.B = B.layout(), p.C = C.layout(), p.mesh = w.mesh.shape();
    *priced = algo::sharded::plan_product(p).words;
  }
  return double(r.bytes_received) / sizeof(double);
}

// The words of the sharding rules on every rank equal `want` (this rank's formula), in both
// operand orientations, and the busiest rank's words equal the plan's price.
void expect_words(const World& w, Shape s, const std::string& a, const std::string& b,
                  const std::string& c, double want) {
  for (const auto& [opA, opB] : {std::pair{Op::N, Op::N}, std::pair{Op::T, Op::C}}) {
    double priced = -1;
    const double got = run(w, opA, opB, s, a, b, c, Algorithm::Sharded, &priced);
    std::string what = a;
    what.append(" . ").append(b).append(" -> ").append(c).append(" ");
    what.append(to_string(opA)).append(to_string(opB));
    EXPECT_DOUBLE_EQ(got, want) << what << " on rank " << world_rank();
    EXPECT_DOUBLE_EQ(busiest(got), priced) << what << ": the plan's price";
  }
}

TEST(ShardedWords, FourCasesOnOneAxis) {
  const World w;
  const double p = w.p;
  // Case 1: no communication.
  expect_words(w, {48, 24, 24}, "A[I_X,J]", "B[J,K_Y]", "C[I_X,K_Y]", 0);
  // Case 2: A sharded on k. Short k: AllGather A (V = m k); long k: slice B, ReduceScatter C.
  expect_words(w, {48, 96, 24}, "A[I,J_X]", "B[J,K]", "C[I,K]", 48.0 * 24 * (p - 1) / p);
  expect_words(w, {24, 24, 480}, "A[I,J_X]", "B[J,K]", "C[I_X,K]", 24.0 * 24 * (p - 1) / p);
  // Case 3: both on k over X: AllReduce, ReduceScatter, or partial sums kept.
  expect_words(w, {24, 48, 96}, "A[I,J_X]", "B[J_X,K]", "C[I,K]", 2 * 24.0 * 48 * (p - 1) / p);
  expect_words(w, {24, 48, 96}, "A[I,J_X]", "B[J_X,K]", "C[I_X,K]", 24.0 * 48 * (p - 1) / p);
  expect_words(w, {24, 48, 96}, "A[I,J_X]", "B[J_X,K]", "C[I,K]{U_X}", 0);
  // Case 4: I and K both over X, C keeps I over X: AllGather B (V = k n).
  expect_words(w, {96, 24, 48}, "A[I_X,J]", "B[J,K_X]", "C[I_X,K]", 48.0 * 24 * (p - 1) / p);
}

TEST(ShardedWords, PartialAxisGroups) {
  const World w;
  if (w.q == 1) GTEST_SKIP() << "one axis longer than 1";
  const double p = w.p, q = w.q;
  // A's rows over x and y, C's over x only: gather A over y alone, (q-1)/q of m/p x k.
  expect_words(w, {96, 48, 24}, "A[I_XY,J]", "B[J,K_Y]", "C[I_X,K_Y]", 96 / p * 24 * (q - 1) / q);
  // Both operands gathered over part of their groups: A over y into [I_X,J], B over x into
  // [J,K_Y] (x is B's minor axis): the lower bound when m / p = n / q.
  const index_t m = index_t{24} * w.p, n = index_t{24} * w.q, k = 24;
  expect_words(w, {m, n, k}, "A[I_XY,J]", "B[J,K_YX]", "C[I_X,K_Y]",
               double(m) / p * k * (q - 1) / q + double(n) / q * k * (p - 1) / p);
  // Contraction over x and y on both sides, C over x: ReduceScatter over y of [I_X,K]{U_Y}
  // after A's and B's k is split over x and y alike.
  expect_words(w, {48, 48, 96}, "A[I,J_XY]", "B[J_XY,K]", "C[I_XY,K]",
               48.0 * 48 * (p * q - 1) / (p * q));
}

// Auto from layouts that hold 1/P of every matrix, where the lower bound is reachable: the
// partial-axis gathers above (m / p = n / q, k short; on a line, m long: AllGather B).
TEST(ShardedWords, AutoReachesTheLowerBound) {
  const World w;
  Shape s{index_t{96} * w.p, index_t{96} * w.q, 48};
  std::string a = "A[I_XY,J]", b = "B[J,K_YX]", c = "C[I_X,K_Y]";
  if (w.q == 1) s = {1536, 48, 48}, a = "A[I_X,J]", b = "B[J,K_X]", c = "C[I_X,K]";
  const double words = busiest(run(w, Op::N, Op::N, s, a, b, c, Algorithm::Auto));
  const double bound = lower_bound_words(s.m, s.n, s.k, world_size());
  EXPECT_LE(words, 1.10 * bound) << a << " . " << b << " -> " << c << " on "
                                 << w.mesh.shape().to_string() << ": " << words << " words";
}

}  // namespace
