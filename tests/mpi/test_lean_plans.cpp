// Lean by default: with no memory limit, what Auto runs for the bench sweep's shapes
// (scripts/bench/bench-sweep: bc(64,64) operands on the near-square grid) adds at most
// kLeanMemoryGrowth x the caller's local A + B + C, and no shape needs a plan over the
// policy. Planner only: layouts, no data, no timing. The figures compared are not trivially
// small: a cap of half the largest one changes that shape's plan or puts it over the policy.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "front/resolve.hpp"
#include "mpi/mpi_test_util.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

struct Shape {
  index_t m, n, k;
};

constexpr Shape kSweepShapes[] = {
    {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 512, 4096}, {512, 4096, 4096}};

algo::Problem sweep_problem(const Mesh& mesh, Shape s) {
  auto bc = [&](index_t r, index_t c) { return Layout::block_cyclic(mesh.shape(), r, c, 64, 64); };
  return {Op::N, Op::N, s.m, s.n, s.k, bc(s.m, s.k), bc(s.k, s.n), bc(s.m, s.n), mesh.shape()};
}

TEST(LeanPlans, AutoOnTheBenchSweepShapesStaysWithinTheCap) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  double worst = 0;  // the largest added / local A+B+C, and its request
  plan::Request worst_request;
  for (Dtype dtype : {Dtype::F64, Dtype::F32})
    for (Shape s : kSweepShapes) {
      const algo::Problem p = sweep_problem(mesh, s);
      const std::string what = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                               std::to_string(s.k) + " " + to_string(dtype) + " on " +
                               std::to_string(world_size()) + " ranks";
      const plan::Request q = front::request_for(p, mesh, dtype, Options{});
      const double cap = kLeanMemoryGrowth * double(plan::resident_bytes(q));
      const GemmPlan plan = plan::plan_gemm(q);
      EXPECT_EQ(plan.policy, "lean") << what;
      EXPECT_FALSE(plan.over_policy) << what << "\n" << plan.explain();
      EXPECT_LE(double(plan.chosen.added_bytes), cap) << what << "\n" << plan.explain();
      // What gemm runs: the resolved options' setup, priced as the front end checks it.
      const front::Resolved how = front::resolve(p, q, Options{});
      EXPECT_EQ(how.options.algorithm, plan.chosen.algorithm) << what << ": " << how.why;
      const algo::Problem run = how.remesh ? front::remeshed(p, *how.remesh) : p;
      const Candidate priced = front::predicted(run, front::make_setup(run, how.options), q);
      EXPECT_LE(double(priced.added_bytes), cap) << what << ": " << priced.name();
      const double ratio = double(plan.chosen.added_bytes) / double(plan::resident_bytes(q));
      if (ratio > worst) worst = ratio, worst_request = q;
    }
  ASSERT_GT(worst, 0);
  const Candidate before = plan::plan_gemm(worst_request).chosen;
  worst_request.memory_growth = worst / 2;
  const GemmPlan halved = plan::plan_gemm(worst_request);
  EXPECT_TRUE(halved.over_policy || halved.chosen.name() != before.name()) << halved.explain();
  if (world_rank() == 0)
    std::printf("largest added / local A+B+C on %d ranks: %.3f (%s)\n", world_size(), worst,
                before.name().c_str());
}

}  // namespace
