// plan_blas3 without MPI: each routine's candidates, the lower bound beneath every candidate's
// words, the words of the known cases (bench --op's measured figures in docs/PERFORMANCE.md),
// the choice following k against n (rank-k) and op(A) against B (trmm / trsm), the memory cap,
// the table `shardmm plan --op` prints, and bad requests.
#include <gtest/gtest.h>

#include <algorithm>

#include "algo/triangular.hpp"
#include "front/blas3_layouts.hpp"
#include "shardmm/error.hpp"
#include "shardmm/plan_blas3.hpp"

namespace shardmm {
namespace {

Blas3Request req(Blas3Routine r, std::int64_t m, std::int64_t n, std::int64_t k, int P) {
  Blas3Request q;
  q.routine = r, q.m = m, q.n = n, q.k = k, q.ranks = P;
  return q;
}

TEST(PlannerBlas3, EveryRoutineHasCandidatesAboveItsBound) {
  for (int i = 0; i <= static_cast<int>(Blas3Routine::Geadd); ++i)
    for (const int P : {1, 2, 4, 6}) {
      const auto r = static_cast<Blas3Routine>(i);
      const Blas3Plan p = plan_blas3(req(r, 300, 200, 100, P));
      ASSERT_FALSE(p.candidates.empty()) << to_string(r);
      EXPECT_EQ(p.chosen.algorithm, p.candidates.front().algorithm);
      for (const Blas3Candidate& c : p.candidates)
        EXPECT_GE(c.words, p.lower_bound) << to_string(r) << " " << c.name() << " P " << P;
      if (P == 1) {
        EXPECT_EQ(p.chosen.words, 0) << to_string(r);
      }
      EXPECT_EQ(parse_blas3_routine(to_string(r)), r);
    }
}

TEST(PlannerBlas3, KnownWordsOnTwoByTwo) {
  // trsm m = n = 4096 on 2x2 bc(64): op(A)'s rows beside B's (2048 x 4096, half held) plus
  // the step broadcasts (2048 rows not held x 2048 columns): 2^23 words, as bench measured.
  Blas3Plan p = plan_blas3(req(Blas3Routine::Trsm, 4096, 4096, 0, 4));
  EXPECT_EQ(p.chosen.algorithm, "steps");
  EXPECT_DOUBLE_EQ(p.chosen.words, 8388608.0);
  // syrk n = 4096, k = 1024: op(A)'s rows beside C's rows and columns, 0.75 n k.
  p = plan_blas3(req(Blas3Routine::Syrk, 0, 4096, 1024, 4));
  EXPECT_EQ(p.chosen.algorithm, "triangle");
  EXPECT_DOUBLE_EQ(p.chosen.words, 0.75 * 4096 * 1024);
}

TEST(PlannerBlas3, ChoiceFollowsTheShape) {
  Blas3Request deep = req(Blas3Routine::Herk, 0, 256, 100000, 4);
  deep.dtype = Dtype::C128;
  EXPECT_EQ(plan_blas3(deep).chosen.algorithm, "reduce");
  EXPECT_EQ(plan_blas3(req(Blas3Routine::Syr2k, 0, 256, 100000, 4)).chosen.algorithm, "reduce");
  EXPECT_EQ(plan_blas3(req(Blas3Routine::Syrk, 0, 4096, 256, 4)).chosen.algorithm, "triangle");
  const MeshShape mesh({"x", "y"}, {2, 2});
  Blas3Request wide = req(Blas3Routine::Trsm, 12, 500, 0, 4);
  wide.a = Layout(mesh, 12, 12, "A[I_xy,J]");
  wide.out = Layout(mesh, 12, 500, "B[I_xy,J]");
  const Blas3Plan p = plan_blas3(wide);
  EXPECT_EQ(p.chosen.algorithm, "local") << p.explain();
  EXPECT_LT(p.chosen.words, p.candidates[1].words) << p.explain();
}

TEST(PlannerBlas3, MemoryCapRulesOutTheFullPartialSum) {
  // n = 4096, k = 1.5 n on 2x2: reduce moves fewer words (k / 8 + 3 n / 4 per row of C against
  // 3 k / 4) but holds the n x n partial sum: 218 MB per rank against triangle's 201 MB.
  Blas3Request q = req(Blas3Routine::Syrk, 0, 4096, 6144, 4);
  q.memory_growth = -1;  // no cap
  const Blas3Plan free = plan_blas3(q);
  EXPECT_EQ(free.chosen.algorithm, "reduce") << free.explain();
  EXPECT_EQ(free.cap_bytes, 0);
  q.memory_limit = 210000000;
  const Blas3Plan p = plan_blas3(q);
  EXPECT_EQ(p.cap_bytes, 210000000);
  EXPECT_EQ(p.chosen.algorithm, "triangle") << p.explain();
  EXPECT_FALSE(p.candidates.back().fits);
  EXPECT_NE(p.why.find("over the cap"), std::string::npos) << p.why;
  // The table's footnote marks candidates over the cap, so it appears only when there is one.
  const std::string footnote = "(! over the memory cap of";
  EXPECT_NE(p.explain().find(footnote), std::string::npos) << p.explain();
  EXPECT_EQ(free.explain().find(footnote), std::string::npos) << free.explain();
  q.memory_limit = std::int64_t(1) << 40;
  const Blas3Plan roomy = plan_blas3(q);
  ASSERT_GT(roomy.cap_bytes, 0);
  EXPECT_EQ(roomy.explain().find(footnote), std::string::npos) << roomy.explain();
}

TEST(PlannerBlas3, PricedStepIsTheStepLoopsWidest) {
  // The planner prices trsm's "steps" at the width the step loop cuts: B's block along the
  // dimension, a single block when one rank holds it whole, at most 256, at most op(A)'s order.
  for (const index_t na : {1, 40, 255, 256, 300, 4096})
    for (const int nprocs : {1, 2, 3})
      for (const index_t nb : {1, 64, 100, 256, 1000}) {
        DimMap map;
        map.extent = na, map.nprocs = nprocs, map.nb = nb;
        index_t widest = 0;
        for (const auto& k : algo::triangular_steps(map, front::kWidestTriangularStep))
          widest = std::max(widest, k.end - k.begin);
        EXPECT_EQ(front::triangular_step_width(na, map), widest)
            << "na " << na << " nprocs " << nprocs << " nb " << nb;
      }
}

TEST(PlannerBlas3, ExplainAndBadRequests) {
  const std::string t = plan_blas3(req(Blas3Routine::Trmm, 512, 256, 0, 4)).explain();
  for (const char* s : {"trmm side=L uplo=L trans=N", "lower bound", "* steps 2x2", "local 2x2",
                        "chosen: steps 2x2", "why: steps"})
    EXPECT_NE(t.find(s), std::string::npos) << s << " in\n" << t;
  EXPECT_THROW(parse_blas3_routine("gemm"), InvalidArgument);
  Blas3Request q = req(Blas3Routine::Syrk, 0, 64, 8, 4);
  q.a = Layout(MeshShape({"x", "y"}, {2, 2}), 64, 9, "A[I_x,J_y]");
  q.out = Layout(MeshShape({"x", "y"}, {2, 2}), 64, 64, "C[I_x,J_y]");
  EXPECT_THROW(plan_blas3(q), DimensionMismatch);
  q.a.reset();
  EXPECT_THROW(plan_blas3(q), InvalidArgument);
}

}  // namespace
}  // namespace shardmm
