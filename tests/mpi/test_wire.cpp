// The 16-bit wire format for f32 products (Options::wire): within the bound of
// docs/ALGORITHMS.md ("Wire formats") against a serial f64 reference of the unrounded f32
// inputs; the operands' words halved (exactly where the algorithm moves only operands);
// Strassen refused on every rank.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "mpi/half_check.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

using L3 = std::array<std::string, 3>;

struct Case {
  Algorithm algo;
  L3 lay;
  Stationary stationary = Stationary::Auto;
  RingForm form = RingForm::Auto;
  bool operands_only = false;  // every byte the algorithm moves is an operand's
};

struct Result {
  double err = 0;
  std::int64_t bytes = 0;
};

Result run(const Case& c, Op opA, Op opB, index_t m, index_t n, index_t k, Wire w) {
  const Mesh mesh = mesh_for(c.algo);
  const index_t ar = opA == Op::N ? m : k, ac = opA == Op::N ? k : m;
  const index_t br = opB == Op::N ? k : n, bc = opB == Op::N ? n : k;
  DistMatrix<float> A(mesh, Layout(mesh.shape(), ar, ac, c.lay[0])),
      B(mesh, Layout(mesh.shape(), br, bc, c.lay[1])),
      C(mesh, Layout(mesh.shape(), m, n, c.lay[2]));
  // entries of varied magnitude, so rounding to 16 bits changes most of them
  A.fill(
      [](index_t i, index_t j) { return float(entry<double>(i, j, 1) * (1 + 1e-3 * double(i))); });
  B.fill(
      [](index_t i, index_t j) { return float(entry<double>(i, j, 2) * (1 - 1e-3 * double(j))); });
  C.fill([](index_t i, index_t j) { return entry<float>(i, j, 3); });
  const auto C0 = C.gather();
  Options o;
  o.algorithm = c.algo;
  o.stationary = c.stationary;
  o.ring_form = c.form;
  if (c.algo != Algorithm::Ring) o.panel = 8;  // the ring's chunk is its own
  o.stationary_chunk = 8, o.ring_chunk = 8;
  o.wire = w;
  const GemmReport rep = gemm(opA, opB, 1.25f, A, B, -0.5f, C, o);
  Bound u;
  u.wire = w == Wire::BF16 ? 0x1p-8 : w == Wire::F16 ? 0x1p-11 : 0;
  return {half_error(opA, opB, 1.25f, A, B, -0.5f, C0, C, u), rep.bytes_sent};
}

const Case kCases[] = {
    {Algorithm::Summa, {"A[I_X,J_Y]", "B[I_X,J_Y]", "C[I_X,J_Y]"}, Stationary::C, {}, true},
    {Algorithm::Summa, {"A[I_X,J_Y]", "B[I_X,J_Y]", "C[I_X,J_Y]"}, Stationary::A},
    {Algorithm::Cannon, {"A[I_X,J_Y]", "B[I_X,J_Y]", "C[I_X,J_Y]"}, {}, {}, true},
    {Algorithm::Ring, {"A[I_X,J]", "B[I,J_X]", "C[I,J_X]"}, {}, RingForm::AllGatherA, true},
    {Algorithm::Ring, {"A[I_X,J]", "B[I,J_X]", "C[I_X,J]"}, {}, RingForm::AllGatherB, true},
    {Algorithm::Ring, {"A[I,J_X]", "B[I_X,J]", "C[I_X,J]"}, {}, RingForm::ReduceScatter},
    {Algorithm::Sharded, {"A[I,J_X]", "B[J,K]", "C[I,K]"}, {}, {}, true},
    {Algorithm::Sharded, {"A[I,J_X]", "B[J_Y,K]", "C[I_X,K]"}},
    {Algorithm::Gemm25D, {"A[I_X,J_Y]", "B[I_X,J_Y]", "C[I_X,J_Y]"}},
    {Algorithm::Auto, {"A[I_X,J]", "B[I,J_Y]", "C[I,J]"}},
};

class WireFormat : public ::testing::TestWithParam<Wire> {};

// Every case at one and two ranks; 3, 4 and 6 ranks (oversubscribed) each take a third.
bool case_selected(std::size_t i) {
  static const int P = world_size();
  if (P <= 2) return true;
  return i % 3 == static_cast<std::size_t>(P == 3 ? 0 : P == 4 ? 1 : 2);
}

TEST_P(WireFormat, WithinItsBoundAndHalfTheWords) {
  const Wire w = GetParam();
  const Op ops[] = {Op::N, Op::T};
  std::size_t i = 0;
  for (const Case& c : kCases)
    for (Op a : ops)
      for (Op b : ops) {
        if (!case_selected(i++)) continue;
        const Result narrow = run(c, a, b, 37, 29, 45, w),
                     full = run(c, a, b, 37, 29, 45, Wire::F32);
        const std::string what = to_string(c.algo) + " " + to_string(a) + to_string(b);
        EXPECT_LE(narrow.err, 1.0) << what;
        EXPECT_LE(full.err, 1.0) << what;  // the same oracle holds f32 (u_w = 0)
        // the stored layouts are the algorithm's own for N N: only its own transfers count
        if (c.operands_only && a == Op::N && b == Op::N) {
          EXPECT_EQ(2 * narrow.bytes, full.bytes) << what;
        } else {
          EXPECT_LE(narrow.bytes, full.bytes) << what;
        }
      }
}

// The oracle is tight enough to see the rounding: an f32 bound (u_w = 0) fails the bf16 wire
// on a product that moves its operands.
TEST(Wire, Bf16RoundingIsVisibleToTheOracle) {
  if (world_size() < 2) GTEST_SKIP() << "nothing moves on one rank";
  const Case c = kCases[0];
  const Mesh mesh = mesh_for(c.algo);
  DistMatrix<float> A(mesh, 40, 40, c.lay[0]), B(mesh, 40, 40, c.lay[1]), C(mesh, 40, 40, c.lay[2]);
  A.fill(
      [](index_t i, index_t j) { return float(entry<double>(i, j, 1) * (1 + 1e-3 * double(i))); });
  B.fill([](index_t i, index_t j) { return float(entry<double>(i, j, 2)); });
  Options o;
  o.algorithm = c.algo;
  o.stationary = c.stationary;
  o.wire = Wire::BF16;
  gemm(Op::N, Op::N, 1.0f, A, B, 0.0f, C, o);
  EXPECT_GT(half_error(Op::N, Op::N, 1.0f, A, B, 0.0f, std::vector<float>(1600), C, Bound{}), 1.0);
}

INSTANTIATE_TEST_SUITE_P(Formats, WireFormat, ::testing::Values(Wire::BF16, Wire::F16),
                         [](const auto& p) { return to_string(p.param); });

TEST(Wire, StrassenIsRefusedEverywhere) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<float> A(mesh, 8, 8, "A[I_X,J_Y]"), B(mesh, 8, 8, "B[I_X,J_Y]"),
      C(mesh, 8, 8, "C[I,J]");
  Options o;
  o.algorithm = Algorithm::Strassen;
  o.wire = Wire::F16;
  expect_same_error_everywhere<NotSupported>([&] { gemm(Op::N, Op::N, 1.0f, A, B, 0.0f, C, o); },
                                             "wire");
}

TEST(Wire, IgnoredForDoubles) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> A(mesh, 16, 12, "A[I_X,J_Y]"), B(mesh, 12, 10, "B[I_X,J_Y]"),
      C(mesh, 16, 10, "C[I_X,J_Y]");
  A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  Options o;
  o.algorithm = Algorithm::Summa;
  o.stationary = Stationary::C;
  const std::int64_t plain = gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o).bytes_sent;
  o.wire = Wire::BF16;
  EXPECT_EQ(gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o).bytes_sent, plain);
}

}  // namespace
