// 16-bit products (bf16, f16) against a serial f64 reference with the bound of
// docs/ALGORITHMS.md ("16-bit formats"): every algorithm, every op pair, several shapes and
// layouts; and the words they move: half those of the same product in f32.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "mpi/half_check.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

struct Shape {
  index_t m, n, k;
};
const Shape kShapes[] = {{23, 19, 31}, {7, 5, 3}, {1, 11, 6}};
using L3 = std::array<std::string, 3>;

Layout layout(const Mesh& mesh, index_t r, index_t c, const std::string& spec) {
  if (spec == "bc")
    return Layout::block_cyclic(mesh.shape(), r, c, 3, 2, 0, 1 % mesh.shape().sizes[1]);
  return Layout(mesh.shape(), r, c, spec);
}

struct Run {
  GemmReport rep;
  double err = 0;
};

// alpha op(A) op(B) + beta C in T (a 16-bit type, or f32 for the comparison of words moved).
template <Scalar T>
Run run_case(Algorithm algo, Op opA, Op opB, Shape s, float alpha, float beta, const L3& lay,
             Options o) {
  const Mesh mesh = mesh_for(algo);
  const index_t ar = opA == Op::N ? s.m : s.k, ac = opA == Op::N ? s.k : s.m;
  const index_t br = opB == Op::N ? s.k : s.n, bc = opB == Op::N ? s.n : s.k;
  DistMatrix<T> A(mesh, layout(mesh, ar, ac, lay[0])), B(mesh, layout(mesh, br, bc, lay[1])),
      C(mesh, layout(mesh, s.m, s.n, lay[2]));
  A.fill([](index_t i, index_t j) { return T(entry<double>(i, j, 1)); });
  B.fill([](index_t i, index_t j) { return T(entry<double>(i, j, 2)); });
  C.fill([](index_t i, index_t j) { return T(entry<double>(i, j, 3)); });
  const auto C0 = C.gather();
  o.algorithm = algo;
  Run r;
  r.rep = gemm(opA, opB, alpha, A, B, beta, C, o);
  Bound u;
  if constexpr (is_half_v<T>) u.storage = unit_roundoff_v<T>;
  r.err = half_error(opA, opB, alpha, A, B, beta, C0, C, u);
  return r;
}

// Whether the algorithm moves operands whenever it moves anything (the sharding rules and 2.5D
// may only reduce partial sums of C, Auto may pick either).
bool operands_move(Algorithm a, const Options& o) {
  return a == Algorithm::Cannon || (a == Algorithm::Summa && o.stationary == Stationary::C) ||
         (a == Algorithm::Ring && o.ring_form != RingForm::ReduceScatter);
}

// One and two ranks run every case; 3, 4 and 6 ranks (oversubscribed on the suite's 2-core
// machines) each run a different third, so every case runs at 1, 2 and one of 3, 4, 6 ranks.
bool case_selected(std::size_t i) {
  static const int P = world_size();
  if (P <= 2) return true;
  return i % 3 == static_cast<std::size_t>(P == 3 ? 0 : P == 4 ? 1 : 2);
}

template <class H>
void sweep(Algorithm algo, const std::vector<L3>& layouts, Options o = {}) {
  // Op::C is Op::T on real data: one pair of it per sweep
  const std::pair<Op, Op> ops[] = {
      {Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}, {Op::T, Op::T}, {Op::C, Op::N}};
  const float alphas[] = {1.0f, 2.5f}, betas[] = {0.0f, -1.5f};
  // several panels (chunks, for the ring) even at small k; each option is its algorithm's own
  if (algo == Algorithm::Ring) o.ring_chunk = 4;
  else o.panel = 4;
  std::size_t i = 0;
  for (auto [a, b] : ops)
    for (const Shape& s : kShapes)
      for (const auto& lay : layouts) {
        const std::size_t v = i % 2;
        if (!case_selected(i++)) continue;
        const Run h = run_case<H>(algo, a, b, s, alphas[v], betas[1 - v], lay, o);
        EXPECT_LE(h.err, 1.0) << to_string(algo) << " " << to_string(a) << to_string(b) << " "
                              << s.m << "x" << s.n << "x" << s.k << " " << lay[0];
        if (&s != &kShapes[0]) continue;  // words: once per op pair and layout
        const Run f = run_case<float>(algo, a, b, s, alphas[v], betas[1 - v], lay, o);
        // operands move in 16 bits, C (when it moves) in f32: between half and all
        EXPECT_GE(2 * h.rep.bytes_sent, f.rep.bytes_sent);
        if (f.rep.bytes_sent > 0 && operands_move(algo, o)) {
          EXPECT_LT(h.rep.bytes_sent, f.rep.bytes_sent);
        } else {
          EXPECT_LE(h.rep.bytes_sent, f.rep.bytes_sent);
        }
      }
}

const L3 kBc = {"bc", "bc", "bc"};
const L3 kGrid = {"A[I_X,J_Y]", "B[I_X,J_Y]", "C[I_X,J_Y]"};

template <class H>
class HalfGemm : public ::testing::Test {};
using HalfTypes = ::testing::Types<bf16, f16>;
TYPED_TEST_SUITE(HalfGemm, HalfTypes);

TYPED_TEST(HalfGemm, Summa) {
  Options o;
  o.stationary = Stationary::C;
  sweep<TypeParam>(Algorithm::Summa, {kBc, kGrid}, o);
  o.stationary = Stationary::A;
  sweep<TypeParam>(Algorithm::Summa, {kGrid}, o);
}
TYPED_TEST(HalfGemm, Cannon) { sweep<TypeParam>(Algorithm::Cannon, {kGrid}); }
TYPED_TEST(HalfGemm, Ring) {
  Options o;
  const L3 line = {"A[I_X,J]", "B[I,J_X]", "C[I_X,J]"};
  for (RingForm f : {RingForm::AllGatherA, RingForm::AllGatherB, RingForm::ReduceScatter}) {
    o.ring_form = f;
    sweep<TypeParam>(Algorithm::Ring, {line}, o);
  }
}
TYPED_TEST(HalfGemm, Sharded) {
  sweep<TypeParam>(Algorithm::Sharded, {{"A[I,J_X]", "B[J_X,K]", "C[I_X,K]"},
                                        {"A[I_X,J]", "B[J,K_X]", "C[I,K_X]"},
                                        {"A[I,J_X]", "B[J_Y,K]", "C[I,K]"}});
}
TYPED_TEST(HalfGemm, Gemm25DAndAuto) {
  sweep<TypeParam>(Algorithm::Gemm25D, {kGrid});
  sweep<TypeParam>(Algorithm::Auto, {kBc});
}

// The 16-bit result is rounded once: a product whose f32 result is exact in the format
// (small integers) comes back exactly, whatever the algorithm moved.
TYPED_TEST(HalfGemm, ExactWhenRepresentable) {
  using H = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<H> A(mesh, 9, 12, "A[I_X,J_Y]"), B(mesh, 12, 7, "B[I_Y,J_X]"),
      C(mesh, 9, 7, "C[I,J_X]");
  A.fill([](index_t i, index_t j) { return H(static_cast<int>((i + 2 * j) % 5) - 2); });
  B.fill([](index_t i, index_t j) { return H(static_cast<int>((3 * i + j) % 4) - 1); });
  gemm(Op::N, Op::N, 1.0f, A, B, 0.0f, C);
  const auto a = A.gather(), b = B.gather(), c = C.gather();
  if (world_rank() != 0) return;
  for (index_t j = 0; j < 7; ++j)
    for (index_t i = 0; i < 9; ++i) {
      float want = 0;
      for (index_t l = 0; l < 12; ++l) want += float(a[i + l * 9]) * float(b[l + j * 12]);
      ASSERT_EQ(float(c[i + j * 9]), want) << i << "," << j;
    }
}

TEST(HalfGemmErrors, MismatchedShapesFailEverywhere) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<bf16> A(mesh, 4, 5, "A[I_X,J]"), B(mesh, 6, 3, "B[I,J_Y]"), C(mesh, 4, 3, "C[I,J]");
  expect_same_error_everywhere<DimensionMismatch>([&] { gemm(Op::N, Op::N, 1.0f, A, B, 0.0f, C); });
}

}  // namespace
