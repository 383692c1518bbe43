// The memory policy: lean by default (Auto adds at most 1.3 x the caller's local operands),
// a memory limit or a growth cap instead, and what a larger budget would buy.
#include <gtest/gtest.h>

#include <cstdlib>

#include "plan/request.hpp"
#include "plan_request.hpp"
#include "shardmm/error.hpp"
#include "shardmm/plan.hpp"

using namespace shardmm;
using shardmm::testing::request;

namespace {

// Lean by default: the same product, operands to be moved (no caller layouts): no plan adds
// 1.3 x the operands or less (their copies alone are 1 x), so the leanest runs, and the plan
// names what a larger budget buys: 2.5D, faster and with fewer words.
TEST(Planner, LeanByDefaultRunsTheLeanestAndPricesTheRest) {
  const GemmPlan p = plan_gemm(request(2048, 2048, 2048, 8));
  EXPECT_EQ(p.policy, "lean");
  EXPECT_TRUE(p.over_policy);
  for (const Candidate& c : p.candidates) EXPECT_GE(c.added_bytes, p.chosen.added_bytes);
  ASSERT_EQ(p.roomier.size(), 1u) << p.explain();
  EXPECT_EQ(p.roomier.front().name(), "25d 2x2x2");
  EXPECT_LT(p.roomier.front().seconds, p.chosen.seconds);
  EXPECT_GT(p.roomier.front().added_bytes, p.chosen.added_bytes);
  EXPECT_NE(p.explain().find("larger budget: 25d 2x2x2"), std::string::npos) << p.explain();
}

// Lean by default on the caller's grid: SUMMA C-stationary reads the operands in place and
// adds only its panels, so it fits the cap; a cap of 4 x buys A-stationary's gathered B.
TEST(Planner, LeanOnTheCallersGridKeepsSummaInPlace) {
  plan::Request r(request(2048, 2048, 16384, 8));
  r.current_pm = 2, r.current_pn = 4;
  const GemmPlan lean = plan::plan_gemm(r);
  EXPECT_FALSE(lean.over_policy);
  EXPECT_EQ(lean.chosen.name(), "summa(C) 2x4") << lean.explain();
  EXPECT_LE(double(lean.chosen.added_bytes), kLeanMemoryGrowth * double(plan::resident_bytes(r)));
  for (const Candidate& c : lean.candidates)
    EXPECT_EQ(c.fits, double(c.added_bytes) <= 1.3 * double(plan::resident_bytes(r))) << c.name();
  r.memory_growth = 4;
  const GemmPlan roomy = plan::plan_gemm(r);
  EXPECT_LE(roomy.chosen.seconds, lean.chosen.seconds);
  for (const Candidate& c : roomy.candidates)
    EXPECT_EQ(c.fits, double(c.added_bytes) <= 4.0 * double(plan::resident_bytes(r))) << c.name();
}

// A memory limit replaces the growth cap; the cap comes from SHARDMM_MEMORY_GROWTH when the
// request has none, and a bad one is an error naming the variable.
TEST(Planner, GrowthCapSources) {
  PlanRequest r = request(512, 512, 512, 4);
  EXPECT_EQ(memory_growth(r), kLeanMemoryGrowth);
  ASSERT_EQ(setenv("SHARDMM_MEMORY_GROWTH", "2.5", 1), 0);
  EXPECT_EQ(memory_growth(r), 2.5);
  ASSERT_EQ(setenv("SHARDMM_MEMORY_GROWTH", "unlimited", 1), 0);
  EXPECT_LT(memory_growth(r), 0);
  r.memory_growth = 3;
  EXPECT_EQ(memory_growth(r), 3);
  ASSERT_EQ(setenv("SHARDMM_MEMORY_GROWTH", "lots", 1), 0);
  r.memory_growth = 0;
  EXPECT_THROW(memory_growth(r), InvalidArgument);
  ASSERT_EQ(unsetenv("SHARDMM_MEMORY_GROWTH"), 0);
  r.memory_limit = 1 << 30;
  EXPECT_EQ(memory_growth(r), 0);
  EXPECT_EQ(plan_gemm(r).policy, "limit");
  EXPECT_EQ(parse_growth("1.3"), 1.3);
  for (const char* bad : {"", "0", "-1", "x", "1.2.3", "inf"})
    EXPECT_THROW(parse_growth(bad), InvalidArgument) << bad;
}

}  // namespace
