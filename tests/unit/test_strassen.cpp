// Strassen-Winograd without MPI: the local recursion (and the one that overwrites its operands)
// against a serial OpenBLAS reference within the Winograd normwise bound (docs/ALGORITHMS.md)
// on awkward shapes, every dtype, every op pair, alpha/beta; the recursion rules; the
// planner's opt-in (Auto never picks it unless allowed) and its pricing.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <limits>
#include <vector>

#include "algo/strassen_winograd.hpp"
#include "blas/blas.hpp"
#include "core/winograd.hpp"
#include "plan_request.hpp"
#include "shardmm/plan.hpp"
#include "winograd_bound.hpp"  // max_abs, winograd_bound

using namespace shardmm;
using shardmm::testing::max_abs;
using shardmm::testing::request;
using shardmm::testing::winograd_bound;

namespace {

// Deterministic entries in [-1, 1] (complex: both parts).
template <class T>
std::vector<T> filled(index_t count, unsigned seed) {
  std::vector<T> v(static_cast<std::size_t>(std::max<index_t>(count, 1)));
  std::uint64_t s = seed * 2654435761u + 1;
  auto next = [&s] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return double(s >> 11) / double(1ull << 53) * 2 - 1;
  };
  for (T& x : v) {
    if constexpr (is_complex_v<T>) x = T(real_t<T>(next()), real_t<T>(next()));
    else x = T(next());
  }
  return v;
}

struct Case {
  index_t m, n, k;
  int levels;
};

template <Scalar T>
void check(Op opA, Op opB, Case c, T alpha, T beta) {
  const index_t ar = opA == Op::N ? c.m : c.k, ac = opA == Op::N ? c.k : c.m;
  const index_t br = opB == Op::N ? c.k : c.n, bc = opB == Op::N ? c.n : c.k;
  const index_t lda = ar + 3, ldb = br + 1, ldc = c.m + 2;  // padded leading dimensions
  const auto A = filled<T>(lda * ac, 1), B = filled<T>(ldb * bc, 2), C0 = filled<T>(ldc * c.n, 3);
  std::vector<T> C = C0, ref = C0;
  // Exactly the scratch the rules promise (a sanitizer build catches any overrun).
  std::vector<T> work(
      static_cast<std::size_t>(std::max<index_t>(winograd::scratch(c.m, c.n, c.k, c.levels), 1)));
  algo::winograd_gemm(opA, opB, c.m, c.n, c.k, alpha, A.data(), lda, B.data(), ldb, beta, C.data(),
                      ldc, c.levels, work.data());
  blas::gemm(opA, opB, c.m, c.n, c.k, alpha, A.data(), lda, B.data(), ldb, beta, ref.data(), ldc);
  double err = 0;
  for (index_t j = 0; j < c.n; ++j)
    for (index_t i = 0; i < c.m; ++i) {
      const auto at = static_cast<std::size_t>(i + j * ldc);
      err = std::max(err, double(std::abs(C[at] - ref[at])));
    }
  for (index_t j = 0; j < c.n; ++j)  // the padding rows below C stay untouched
    for (index_t i = c.m; i < ldc; ++i) {
      const auto at = static_cast<std::size_t>(i + j * ldc);
      ASSERT_EQ(C[at], C0[at]);
    }
  const double u = std::numeric_limits<real_t<T>>::epsilon() / 2, cx = is_complex_v<T> ? 4 : 1;
  // Ours plus the reference's own classical error (k u per entry), plus beta's rounding.
  const double allowed = cx * (winograd_bound(c.k, c.levels) + double(c.k) * double(c.k)) * u *
                             std::abs(alpha) * max_abs(A) * max_abs(B) +
                         4 * u * std::abs(beta) * max_abs(C0);
  EXPECT_LE(err, allowed) << to_string(opA) << to_string(opB) << " " << c.m << "x" << c.n << "x"
                          << c.k << " L=" << c.levels << " " << to_string(dtype_of<T>());
}

// The recursion that overwrites op(A) and op(B) (beta 0): within the same bound, with exactly
// the scratch overwriting_scratch() promises, C's padding rows untouched.
template <Scalar T>
void check_overwriting(Op opA, Op opB, Case c, T alpha) {
  const index_t ar = opA == Op::N ? c.m : c.k, ac = opA == Op::N ? c.k : c.m;
  const index_t br = opB == Op::N ? c.k : c.n, bc = opB == Op::N ? c.n : c.k;
  const index_t lda = ar + 2, ldb = br + 3, ldc = c.m + 1;
  const auto A0 = filled<T>(lda * ac, 4), B0 = filled<T>(ldb * bc, 5);
  const auto C0 = filled<T>(ldc * c.n, 6);
  std::vector<T> A = A0, B = B0, C = C0, ref = C0;
  std::vector<T> work(static_cast<std::size_t>(
      std::max<index_t>(winograd::overwriting_scratch(c.m, c.n, c.k, c.levels), 1)));
  algo::winograd_gemm_overwriting(opA, opB, c.m, c.n, c.k, alpha, A.data(), lda, B.data(), ldb,
                                  C.data(), ldc, c.levels, work.data());
  blas::gemm(opA, opB, c.m, c.n, c.k, alpha, A0.data(), lda, B0.data(), ldb, T(0), ref.data(), ldc);
  double err = 0;
  for (index_t j = 0; j < c.n; ++j) {
    for (index_t i = 0; i < c.m; ++i) {
      const auto at = static_cast<std::size_t>(i + j * ldc);
      err = std::max(err, double(std::abs(C[at] - ref[at])));
    }
    for (index_t i = c.m; i < ldc; ++i)
      ASSERT_EQ(C[std::size_t(i + j * ldc)], C0[std::size_t(i + j * ldc)]);
  }
  const double u = std::numeric_limits<real_t<T>>::epsilon() / 2, cx = is_complex_v<T> ? 4 : 1;
  // Its first level's sums take one term more than winograd_gemm's (a factor 3 / 2 at most).
  const double allowed = 1.5 * cx * (winograd_bound(c.k, c.levels) + double(c.k) * double(c.k)) *
                         u * std::abs(alpha) * max_abs(A0) * max_abs(B0);
  EXPECT_LE(err, allowed) << "overwriting " << to_string(opA) << to_string(opB) << " " << c.m << "x"
                          << c.n << "x" << c.k << " L=" << c.levels << " "
                          << to_string(dtype_of<T>());
}

template <Scalar T>
void sweep() {
  const Case cases[] = {{37, 29, 45, 2}, {64, 64, 64, 3}, {2, 2, 2, 1},    {1, 9, 8, 2},
                        {33, 17, 1, 2},  {50, 3, 31, 1},  {23, 40, 19, 3}, {16, 16, 16, 0}};
  T alpha = T(-1.25);
  if constexpr (is_complex_v<T>) alpha = T(0.75, -0.5);
  const T betas[] = {T(0), T(1), T(0.5)};
  int i = 0;
  for (Case c : cases)
    for (Op opA : {Op::N, Op::T, Op::C})
      for (Op opB : {Op::N, Op::T, Op::C}) {
        check<T>(opA, opB, c, alpha, betas[i++ % 3]);
        check_overwriting<T>(opA, opB, c, alpha);
      }
}

TEST(Winograd, MatchesClassicalWithinTheBoundF32) { sweep<float>(); }
TEST(Winograd, MatchesClassicalWithinTheBoundF64) { sweep<double>(); }
TEST(Winograd, MatchesClassicalWithinTheBoundC64) { sweep<std::complex<float>>(); }
TEST(Winograd, MatchesClassicalWithinTheBoundC128) { sweep<std::complex<double>>(); }

// beta = 0 never reads C: NaN in C does not leak into the result.
TEST(Winograd, BetaZeroIgnoresC) {
  const index_t s = 24;
  const auto A = filled<double>(s * s, 4), B = filled<double>(s * s, 5);
  std::vector<double> C(s * s, std::numeric_limits<double>::quiet_NaN());
  std::vector<double> work(static_cast<std::size_t>(winograd::scratch(s, s, s, 2)));
  algo::winograd_gemm(Op::N, Op::N, s, s, s, 1.0, A.data(), s, B.data(), s, 0.0, C.data(), s, 2,
                      work.data());
  for (double x : C) ASSERT_TRUE(std::isfinite(x));
}

TEST(Winograd, LevelsHalveWhileTheSmallestDimensionReachesTheCrossover) {
  EXPECT_EQ(winograd::levels(4096, 8192, 8192, 1536), 2);  // 4096, 2048 | 1024
  EXPECT_EQ(winograd::levels(8192, 16384, 16384, 1536), 3);
  EXPECT_EQ(winograd::levels(1535, 9000, 9000, 1536), 0);
  EXPECT_EQ(winograd::levels(1 << 20, 1 << 20, 1 << 20, 2), winograd::kMaxLevels);
  EXPECT_EQ(winograd::levels(37, 29, 45, 4), 3);  // 29 -> 14 -> 7 -> 3
  EXPECT_EQ(winograd::scratch(8, 8, 8, 2), 3 * 16 + 3 * 4);
  EXPECT_EQ(winograd::overwriting_scratch(8, 8, 8, 2), 3 * 4);  // the second level's only
  EXPECT_EQ(winograd::overwriting_scratch(8, 8, 8, 1), 0);
  // At most a third of A + B + C, whatever the levels.
  EXPECT_LE(winograd::scratch(4096, 8192, 8192, 6) * 3, 4096 * 8192 + 8192 * 8192 + 4096 * 8192);
}

TEST(PlannerStrassen, AutoNeverPicksItUnlessAllowed) {
  for (int P : {1, 2, 3, 4, 6})
    for (std::int64_t s : {64, 1000, 8192, 16384}) {
      for (const Candidate& c : plan_gemm(request(s, s, s, P)).candidates)
        EXPECT_NE(c.algorithm, Algorithm::Strassen) << c.name();
      PlanRequest r = request(s, s, s, P);
      r.allow_fast = true;
      int strassen = 0;
      for (const Candidate& c : plan_gemm(r).candidates)
        strassen += c.algorithm == Algorithm::Strassen;
      EXPECT_GT(strassen, 0) << "P=" << P << " s=" << s;
    }
}

TEST(PlannerStrassen, AllowedItWinsTheBigSquareOnTwoRanks) {
  PlanRequest r = request(8192, 8192, 8192, 2);
  r.allow_fast = true;
  r.memory_growth = -1;  // its scratch is more than the lean cap allows
  const GemmPlan plan = plan_gemm(r);
  EXPECT_EQ(plan.chosen.algorithm, Algorithm::Strassen) << plan.explain();
  // Two levels on each rank's 8192^3 / 2 product: (7/8)^2 of the classical products.
  EXPECT_LT(plan.chosen.flops, 0.8 * 2.0 * 4096 * 8192 * 8192.0);
  // 1 x 2 (the line form, one product over both pieces): op(A) whole in two pieces, op(B)'s
  // and C's columns, the pair's scratch.
  const Candidate line = cheapest_of(r, Algorithm::Strassen, 1, 2);
  EXPECT_EQ(line.memory_bytes, 8 * (8192 * 8192 + 8192 * 4096 + 8192 * 4096 +
                                    winograd::pair_scratch(8192, 4096, 4096, 2)));
  // 2 x 1 (the column form, op(B)'s pieces travel): op(B)'s own piece, op(A)'s rows, C's tile,
  // one receive buffer, op(A)'s packed k, the scratch of one 4096 x 8192 x 4096 product.
  EXPECT_EQ(cheapest_of(r, Algorithm::Strassen, 2, 1).memory_bytes,
            8 * (4 * 4096 * 8192 + 4096 * 4096 + winograd::scratch(4096, 8192, 4096, 2)));
  // A small crossover prices more levels (and so fewer product flops).
  r.fast_crossover = 512;
  EXPECT_LT(cheapest_of(r, Algorithm::Strassen).flops, plan.chosen.flops);
}

// 2 x 2 (the grid form): the operands' own tiles, one panel of each for a piece of k / 2, the
// scratch of one 4096^3 product; two products of (7/8)^2 each.
TEST(PlannerStrassen, GridFormPricedByPieces) {
  PlanRequest r = request(8192, 8192, 8192, 4);
  r.allow_fast = true;
  const Candidate c = cheapest_of(r, Algorithm::Strassen, 2, 2);
  const std::int64_t q = std::int64_t{4096} * 4096;
  EXPECT_EQ(c.memory_bytes, 8 * (3 * q + 2 * q + winograd::scratch(4096, 4096, 4096, 2)));
  EXPECT_DOUBLE_EQ(c.words, 2 * 4096.0 * 8192 * 0.5);
  EXPECT_LT(c.flops, 0.8 * 2.0 * 4096 * 4096 * 8192.0);
}

// The breadth-first step at 7 ranks, 2048^3 (one step, the groups' products below the
// crossover): it adds the group's pair and product, its floor of 7/4 x the local A + B + C,
// and B's alignment beyond a quadrant, under 2 x; at 4096^3 (one local level) too. The lean cap
// (1.3 x) keeps Auto off it; a growth cap of 2 lets it run.
TEST(PlannerStrassen, BreadthFirstStepAddsAtMostTwiceTheOperands) {
  PlanRequest r = request(2048, 2048, 2048, 7);
  r.allow_fast = true;
  const Candidate caps = evaluate(r, {Algorithm::Strassen, Stationary::C, RingForm::Auto, 1, 1, 7});
  const double res = double(resident_bytes(r));
  EXPECT_GE(double(caps.added_bytes), 1.75 * res);
  EXPECT_LE(double(caps.added_bytes), 2.0 * res);
  EXPECT_FALSE(caps.fits);
  for (const Candidate& c : plan_gemm(r).candidates) {
    if (c.name() == caps.name()) {
      EXPECT_FALSE(c.fits);
    }
  }
  r.memory_growth = 2.0;
  EXPECT_TRUE(evaluate(r, {Algorithm::Strassen, Stationary::C, RingForm::Auto, 1, 1, 7}).fits);
  // 4096^3: the groups' 2051 x 2051 x 2048 products take one local level, which overwrites
  // their pair and so adds nothing: still under 2 x.
  PlanRequest big = request(4096, 4096, 4096, 7);
  big.allow_fast = true;
  const Candidate step =
      evaluate(big, {Algorithm::Strassen, Stationary::C, RingForm::Auto, 1, 1, 7});
  EXPECT_GE(double(step.added_bytes), 1.75 * double(resident_bytes(big)));
  EXPECT_LE(double(step.added_bytes), 2.0 * double(resident_bytes(big)));
}

TEST(PlannerStrassen, ProfileCarriesTheCrossover) {
  MachineProfile p;
  p.strassen_crossover = 777;
  const std::string path = ::testing::TempDir() + "strassen_profile.json";
  {
    std::ofstream out(path);
    out << p.to_json();
    ASSERT_TRUE(out.good());
  }
  EXPECT_EQ(MachineProfile::from_json_file(path).strassen_crossover, 777);
  EXPECT_EQ(std::remove(path.c_str()), 0);
}

}  // namespace
