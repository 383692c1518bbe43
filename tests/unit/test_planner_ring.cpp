// The ring's passes at p > 2 (core/blocking.hpp, plan/cost_model.cpp): how wide each is, and
// the memory and messages the planner prices for them.
#include <gtest/gtest.h>

#include "core/blocking.hpp"
#include "plan/request.hpp"
#include "plan_request.hpp"
#include "shardmm/plan.hpp"

using namespace shardmm;
using shardmm::testing::request;

namespace {

// The reduce-scatter ring at p > 2 circulates its sums in passes over C's columns when two
// outgoing sums and one incoming, whole, would not fit in half the rank's A + B + C: the widest
// multiple of 384 that fits, at least 384; whole when they fit. The model charges those buffers
// (and a block's packed slice of op(A)), p - 1 messages per pass and the words of whole tiles.
TEST(PanelWidth, RingReduceScatterPasses) {
  using blocking::rs_pass_width;
  EXPECT_EQ(rs_pass_width(100, 1000, 1e6), 1000);  // 3 x 100 x 1000 fits in 5e5: whole
  EXPECT_EQ(rs_pass_width(1024, 4096, 3.0 * 4096 * 4096 / 4), 1920);  // 2048 fit: 5 x 384
  EXPECT_EQ(rs_pass_width(1000, 100000, 1e6), 384);                   // not even 384 fits: 384
  plan::Request r(request(4096, 4096, 512, 4));
  r.ring_in_place[2] = {true, true, true};  // nothing to redistribute first
  const double share = (2.0 * 4096 * 512 + 4096.0 * 4096) / 4;
  EXPECT_EQ(rs_pass_width(1024, 4096, share), 768);  // 0.5 x share / (3 x 1024) = 853
  const Candidate c{Algorithm::Ring, Stationary::Auto, RingForm::ReduceScatter, 4, 1, 1};
  const Candidate e = plan::priced(r, c);
  EXPECT_DOUBLE_EQ(double(e.memory_bytes), (share + 1024.0 * (3 * 768 + 128)) * 8);
  EXPECT_DOUBLE_EQ(e.messages, 3 * 6);  // p - 1 per pass, ceil(4096 / 768) passes
  EXPECT_DOUBLE_EQ(e.words, 4096.0 * 4096 * 3 / 4);
  r.ring_chunk = 4096;  // Options::ring_chunk: one pass, whole sums
  const Candidate whole = plan::priced(r, c);
  EXPECT_DOUBLE_EQ(double(whole.memory_bytes), (share + 1024.0 * (3 * 4096 + 128)) * 8);
  EXPECT_DOUBLE_EQ(whole.messages, 3);
  EXPECT_DOUBLE_EQ(whole.words, e.words);
}

TEST(PanelWidth, RingAllGatherPasses) {
  using blocking::ag_pass_width;
  EXPECT_EQ(ag_pass_width(100, 1000, 1e6), 1000);    // 2 x 100 x 1000 fits in 5e5: whole k
  EXPECT_EQ(ag_pass_width(1000, 100000, 1e6), 384);  // not even 384 fits: 384
  plan::Request r(request(4096, 512, 16384, 4));
  r.ring_in_place[0] = {true, true, true};  // AG-A's layouts: nothing to redistribute first
  const double share = (4096.0 * 16384 + 16384.0 * 512 + 4096.0 * 512) / 4;
  EXPECT_EQ(ag_pass_width(1024, 16384, share), 4608);  // 0.5 x share / (2 x 1024) = 4736
  const Candidate c{Algorithm::Ring, Stationary::Auto, RingForm::AllGatherA, 4, 1, 1};
  const double operands = 1024.0 * 16384 + 16384.0 * 128 + 4096.0 * 128, scratch = 1024.0 * 128;
  const Candidate e = plan::priced(r, c);
  EXPECT_DOUBLE_EQ(double(e.memory_bytes), (operands + 2 * 1024.0 * 4608 + scratch) * 8);
  EXPECT_DOUBLE_EQ(e.messages, 3 * 4);  // p - 1 per pass, ceil(16384 / 4608) passes
  EXPECT_DOUBLE_EQ(e.words, 4096.0 * 16384 * 3 / 4);
  r.ring_chunk = 16384;  // Options::ring_chunk: one pass, whole tiles
  const Candidate whole = plan::priced(r, c);
  EXPECT_DOUBLE_EQ(double(whole.memory_bytes), (operands + 2 * 1024.0 * 16384 + scratch) * 8);
  EXPECT_DOUBLE_EQ(whole.messages, 3);
  EXPECT_DOUBLE_EQ(whole.words, e.words);
}

}  // namespace
