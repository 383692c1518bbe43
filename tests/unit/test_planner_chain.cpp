// The cost model's chain-broadcast pricing against the chunk comm::ibcast really uses.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/blocking.hpp"
#include "shardmm/error.hpp"
#include "shardmm/plan.hpp"

using namespace shardmm;

namespace {

PlanRequest square_on(std::int64_t n, int P) {
  PlanRequest r;
  r.m = r.n = r.k = n, r.ranks = P;
  r.profile = MachineProfile{};
  return r;
}

// The cost model prices the chain broadcasts' pipeline fill with the chunk comm::ibcast uses
// (blocking::bcast_chunk_bytes, SHARDMM_BCAST_CHUNK): no chains at 0, a longer fill with a
// larger chunk.
TEST(Planner, ChainFillFollowsTheBroadcastChunk) {
  const std::int64_t before = blocking::bcast_chunk_bytes();
  auto summa_seconds = [](std::int64_t chunk) {
    blocking::set_bcast_chunk_bytes(chunk);
    double best = 0;
    for (const Candidate& c : plan_gemm(square_on(8192, 9)).candidates)
      if (c.algorithm == Algorithm::Summa && (best == 0 || c.seconds < best)) best = c.seconds;
    return best;
  };
  const double none = summa_seconds(0), small = summa_seconds(64 << 10),
               large = summa_seconds(std::int64_t{4} << 20);
  blocking::set_bcast_chunk_bytes(before);
  EXPECT_GT(none, 0);
  EXPECT_LT(none, small);
  EXPECT_LT(small, large);
  EXPECT_THROW(blocking::set_bcast_chunk_bytes(-1), InvalidArgument);
}

}  // namespace
