// Planner and cost model (pure): lower bounds, canonical choices, memory limit, words formulas.
#include <gtest/gtest.h>

#include <cmath>

#include "core/blocking.hpp"
#include "front/resolve.hpp"
#include "plan/request.hpp"
#include "plan_request.hpp"
#include "shardmm/error.hpp"
#include "shardmm/gemm.hpp"
#include "shardmm/plan.hpp"

using namespace shardmm;
using shardmm::testing::request;

namespace {

const Candidate& find(const GemmPlan& p, const std::string& name) {
  for (const Candidate& c : p.candidates)
    if (c.name() == name) return c;
  throw std::runtime_error("no candidate " + name);
}

TEST(LowerBound, ThreeRegimesByHand) {
  // 1D regime: P <= d1/d2. d = (8192, 512, 512), P = 4 <= 16: d2 d3 (1 - 1/P)
  EXPECT_DOUBLE_EQ(lower_bound_words(8192, 512, 512, 4), 512.0 * 512 * 0.75);
  // 2D regime: d = (4096, 4096, 256), P = 8: 1 <= 8 <= 256 -> 2 sqrt(d1 d2 d3^2 / P) - (d1 d3 + d2
  // d3)/P
  EXPECT_NEAR(lower_bound_words(4096, 4096, 256, 8),
              2 * std::sqrt(4096.0 * 4096 * 256 * 256 / 8) - (2 * 4096.0 * 256) / 8, 1e-6);
  // 3D regime: square n = 2048, P = 8: 3 (n^3/P)^(2/3) - 3 n^2 / P
  EXPECT_NEAR(lower_bound_words(2048, 2048, 2048, 8),
              3 * std::pow(2048.0 * 2048 * 2048 / 8, 2.0 / 3) - 3 * 2048.0 * 2048 / 8, 1e-3);
  EXPECT_EQ(lower_bound_words(100, 100, 100, 1), 0);
  EXPECT_EQ(lower_bound_words(0, 100, 100, 4), 0);
}

// Memory growth allowed (memory_growth < 0: no cap), the fastest plan is 3D.
TEST(Planner, SquareOnEightRanksGoes3D) {
  PlanRequest r = request(2048, 2048, 2048, 8);
  r.memory_growth = -1;
  const GemmPlan p = plan_gemm(r);
  EXPECT_EQ(p.chosen.name(), "25d 2x2x2");
  EXPECT_NEAR(p.chosen.words / p.lower_bound, 1.0, 1e-9);
  EXPECT_EQ(p.policy, "none");
  EXPECT_TRUE(p.roomier.empty());
}

TEST(Planner, TallSkinnySplitsRowsOnly) {
  const GemmPlan p = plan_gemm(request(32768, 1024, 1024, 4));
  EXPECT_LE(p.chosen.words / p.lower_bound, 1.0 + 1e-9) << p.explain();
  const bool rows_only =
      (p.chosen.algorithm == Algorithm::Ring && p.chosen.ring_form == RingForm::AllGatherB) ||
      (p.chosen.algorithm == Algorithm::Summa && p.chosen.pm == 4);
  EXPECT_TRUE(rows_only) << p.explain();
}

TEST(Planner, WideSplitsColumnsOnly) {
  const GemmPlan p = plan_gemm(request(1024, 32768, 1024, 4));
  EXPECT_LE(p.chosen.words / p.lower_bound, 1.0 + 1e-9) << p.explain();
  const bool cols_only =
      (p.chosen.algorithm == Algorithm::Ring && p.chosen.ring_form == RingForm::AllGatherA) ||
      (p.chosen.algorithm == Algorithm::Summa && p.chosen.pn == 4);
  EXPECT_TRUE(cols_only) << p.explain();
}

TEST(Planner, LargeKSplitsK) {
  const GemmPlan p = plan_gemm(request(1024, 1024, 32768, 4));
  EXPECT_LE(p.chosen.words / p.lower_bound, 1.0 + 1e-9) << p.explain();
  const bool splits_k =
      (p.chosen.algorithm == Algorithm::Ring && p.chosen.ring_form == RingForm::ReduceScatter) ||
      p.chosen.pk == 4 || p.chosen.stationary != Stationary::C;
  EXPECT_TRUE(splits_k) << p.explain();
}

TEST(Planner, TinyGoesLocal) {
  EXPECT_EQ(plan_gemm(request(20, 30, 10, 6)).chosen.algorithm, Algorithm::Local);
  EXPECT_EQ(plan_gemm(request(2048, 2048, 2048, 1)).chosen.algorithm, Algorithm::Local);
}

TEST(Planner, MemoryLimitChangesTheChoiceThenFails) {
  PlanRequest unlimited = request(2048, 2048, 2048, 8);
  unlimited.memory_growth = -1;
  const GemmPlan free = plan_gemm(unlimited);
  const std::int64_t need = free.chosen.memory_bytes;
  const GemmPlan at = plan_gemm(request(2048, 2048, 2048, 8, need));
  EXPECT_EQ(at.chosen.name(), free.chosen.name());  // exactly at need still fits
  const GemmPlan tight = plan_gemm(request(2048, 2048, 2048, 8, need - 1));
  EXPECT_NE(tight.chosen.name(), free.chosen.name());
  EXPECT_LE(tight.chosen.memory_bytes, need - 1);
  try {
    plan_gemm(request(2048, 2048, 2048, 8, 1024));
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("bytes missing"), std::string::npos) << e.what();
  }
}

TEST(CostModel, WordsOfTheClassicAlgorithms) {
  const GemmPlan p = plan_gemm(request(1200, 900, 600, 6));
  // SUMMA C-stationary on 2x3: m/p k (1 - 1/q) + n/q k (1 - 1/p)
  EXPECT_DOUBLE_EQ(find(p, "summa(C) 2x3").words, 600.0 * 600 * (2.0 / 3) + 300.0 * 600 * 0.5);
  EXPECT_DOUBLE_EQ(find(p, "ring(AG-A) 6").words, 1200.0 * 600 * 5 / 6);
  EXPECT_DOUBLE_EQ(find(p, "ring(AG-B) 6").words, 600.0 * 900 * 5 / 6);
  EXPECT_DOUBLE_EQ(find(p, "ring(RS) 6").words, 1200.0 * 900 * 5 / 6);
  // 3D 1x3x2: (m/pm)(k/pk)(1-1/pn) + (n/pn)(k/pk)(1-1/pm) + (m/pm)(n/pn)(1-1/pk)
  EXPECT_DOUBLE_EQ(find(p, "25d 1x3x2").words, 1200.0 * 300 * (2.0 / 3) + 0 + 1200.0 * 300 * 0.5);
}

// SUMMA's panel broadcasts go down comm::ibcast's chunked chain on 3 or more ranks: the last
// rank waits ranks - 2 hops (and chunks) longer than for one message; on 2 ranks it does not.
// Every panel pays that, unless the GEMMs relay the next panel meanwhile (relays_in_gemm):
// then only the first does. With nothing hidden (overlap_exposed 1), time = latency x
// (messages + hops) + the rest, so the time's slope in the latency counts them.
TEST(CostModel, ChainBroadcastHopsAndOverlapShare) {
  bool relays = false;
  auto seconds = [&](int pn, double latency, double exposed) {
    plan::Request r(request(16384, 16384, 1024, pn));
    r.relays_in_gemm = relays;
    r.profile.latency_s = latency, r.profile.bytes_per_s = 25e6;
    r.profile.overlap_exposed = exposed;
    r.profile.gflops[1] = 1000;           // the GEMM the smaller part
    r.current_pm = 1, r.current_pn = pn;  // inputs in place: no redistribution's messages
    Candidate c;
    c.algorithm = Algorithm::Summa, c.pm = 1, c.pn = pn;
    return plan::priced(r, c);
  };
  for (const auto& [pn, in_gemm] : {std::pair{2, false}, {8, false}, {8, true}}) {
    relays = in_gemm;
    const Candidate lo = seconds(pn, 1e-3, 1), hi = seconds(pn, 2e-3, 1);
    // op(A)'s panels (16384 x w doubles, far over two 256 KiB chunks) along the row of pn.
    const double panels = lo.messages / 2, hops = pn > 2 ? (in_gemm ? 1 : panels) * (pn - 2) : 0;
    ASSERT_GT(panels, 1);
    EXPECT_NEAR((hi.seconds - lo.seconds) / 1e-3, lo.messages + hops, 1e-6) << pn;
    // overlap_exposed e: max(comm, compute) + e x min(comm, compute), the GEMM the smaller.
    const double compute = lo.flops / 1e12;
    EXPECT_NEAR(seconds(pn, 1e-3, 1).seconds - seconds(pn, 1e-3, 0).seconds, compute, 1e-9) << pn;
    EXPECT_NEAR(seconds(pn, 1e-3, 0.5).seconds,
                (seconds(pn, 1e-3, 0).seconds + seconds(pn, 1e-3, 1).seconds) / 2, 1e-9);
  }
}

// The suite's tall drop-in (32768 x 2048 x 2048 on ScaLAPACK's 8x1 grid, nb 256) on the
// calibrated 200 Mbit/s cluster of 4 hosts, whose GEMMs relay the broadcasts: SUMMA on the
// caller's grid moves only the lower bound's words and wins over the ring, which must first
// move B into columns. Priced with every panel paying its chain's fill, SUMMA came 0.7 s above
// the ring, and the ring ran 1.3 s slower.
TEST(CostModel, TallOnCallersColumnKeepsItsLayout) {
  PlanRequest r = request(32768, 2048, 2048, 8);
  r.profile.latency_s = 2.19e-3, r.profile.bytes_per_s = 10.87e6;
  r.profile.gflops[0] = 23.8, r.profile.gflops[1] = 11.5;  // f32, f64 (calibrate)
  r = block_cyclic_request(r, Op::N, Op::N, 8, 1, 256);
  EXPECT_EQ(plan_gemm(r).chosen.name(), "ring(AG-B) 8") << "relays waiting for MPI calls";
  r.relays_in_gemm = true;
  const GemmPlan p = plan_gemm(r);
  EXPECT_EQ(p.chosen.name(), "summa(C) 8x1");
  EXPECT_EQ(p.chosen.redist_words, 0);
  EXPECT_DOUBLE_EQ(p.chosen.words, 2048.0 * 2048 * 7 / 8);
  EXPECT_GT(find(p, "ring(AG-B) 8").redist_words, 0);
}

TEST(CostModel, CallerGridPaysNoRedistribution) {
  plan::Request r(request(2048, 2048, 2048, 4));
  r.current_pm = 2, r.current_pn = 2;
  const GemmPlan p = plan::plan_gemm(r);
  EXPECT_EQ(find(p, "summa(C) 2x2").redist_words, 0);
  EXPECT_GT(find(p, "summa(C) 4x1").redist_words, 0);
}

// A ring on the caller's line pays only for the operands its form cannot use as they are:
// TN on ScaLAPACK's 1 x 2 layout keeps A, B and C for AG-A, so AG-A is chosen, moving only A.
TEST(CostModel, RingOnCallersLinePaysForWhatDoesNotFit) {
  plan::Request r(request(4096, 4096, 4096, 2));
  const GemmPlan before = plan::plan_gemm(r);
  r.ring_in_place[0] = {true, true, true};   // AG-A: nothing moves
  r.ring_in_place[2] = {true, true, false};  // RS: C moves
  const GemmPlan p = plan::plan_gemm(r);
  EXPECT_EQ(find(p, "ring(AG-A) 2").redist_words, 0);
  EXPECT_DOUBLE_EQ(find(p, "ring(RS) 2").redist_words, 4096.0 * 4096 / 2 * 0.5);
  EXPECT_DOUBLE_EQ(find(p, "ring(AG-B) 2").redist_words, find(before, "ring(AG-B) 2").redist_words);
  EXPECT_GT(find(before, "ring(AG-A) 2").redist_words, 0);
  EXPECT_EQ(p.chosen.name(), "ring(AG-A) 2");
  EXPECT_DOUBLE_EQ(p.chosen.words, 4096.0 * 4096 * 0.5);
}

// What `shardmm plan --grid` and gemm's Auto see for ScaLAPACK-style inputs.
TEST(Planner, BlockCyclicInputsAsGemmSeesThem) {
  const PlanRequest r = request(4096, 4096, 4096, 2);
  const plan::Request nn = front::caller_request(block_cyclic_request(r, Op::N, Op::N, 1, 2));
  EXPECT_EQ(nn.current_pm, 1);
  EXPECT_EQ(nn.current_pn, 2);
  EXPECT_EQ(nn.ring_in_place[0], (std::array<bool, 3>{false, true, true}));  // AG-A: A's k is split
  const PlanRequest tn_public = block_cyclic_request(r, Op::T, Op::N, 1, 2);
  const plan::Request tn = front::caller_request(tn_public);
  EXPECT_EQ(tn.current_pm, 0);  // SUMMA cannot use A^T where it is
  EXPECT_EQ(tn.ring_in_place[0], (std::array<bool, 3>{true, true, true}));
  const GemmPlan p = plan_gemm(tn_public);  // the public entry describes the layouts
  EXPECT_EQ(p.chosen.name(), "ring(AG-A) 2");
  EXPECT_EQ(p.chosen.redist_words, 0);
  const plan::Request nt = front::caller_request(block_cyclic_request(r, Op::N, Op::T, 1, 2));
  EXPECT_EQ(nt.ring_in_place[2], (std::array<bool, 3>{true, true, true}));  // RS over C's columns
  const plan::Request square =
      front::caller_request(block_cyclic_request(request(64, 64, 64, 4), Op::T, Op::N, 2, 2));
  for (const auto& form : square.ring_in_place)  // not a line: every ring moves its operands
    EXPECT_EQ(form, (std::array<bool, 3>{false, false, false}));
  EXPECT_THROW(block_cyclic_request(r, Op::N, Op::N, 2, 2), InvalidArgument);
}

// The outer product of the suite on ScaLAPACK's 2x1 grid: with nb = k = 256 process row 0
// holds all of B and rank 1 receives all of it; with nb = 128 each row holds half.
TEST(Planner, SummaWordsFromTheCallersUnevenTiles) {
  const PlanRequest r = request(8192, 8192, 256, 2);
  auto described = [](const PlanRequest& q) { return front::caller_request(q); };
  EXPECT_DOUBLE_EQ(described(block_cyclic_request(r, Op::N, Op::N, 2, 1, 256)).current_summa_words,
                   8192.0 * 256);
  EXPECT_DOUBLE_EQ(described(block_cyclic_request(r, Op::N, Op::N, 2, 1, 128)).current_summa_words,
                   8192.0 * 128);
  const GemmPlan uneven = plan_gemm(block_cyclic_request(r, Op::N, Op::N, 2, 1, 256));
  EXPECT_DOUBLE_EQ(find(uneven, "summa(C) 2x1").words, 8192.0 * 256);
  EXPECT_DOUBLE_EQ(find(uneven, "summa(C) 1x2").words,
                   find(plan_gemm(r), "summa(C) 1x2").words);  // not in place
  // Even tiles: the actual count is the balanced formula's.
  const PlanRequest even = request(4096, 4096, 4096, 4);
  EXPECT_DOUBLE_EQ(
      find(plan_gemm(block_cyclic_request(even, Op::N, Op::N, 2, 2, 64)), "summa(C) 2x2").words,
      find(plan_gemm(even), "summa(C) 2x2").words);
  EXPECT_EQ(described(block_cyclic_request(r, Op::T, Op::N, 2, 1, 256)).current_summa_words,
            0);  // A^T: not in place
  EXPECT_THROW(block_cyclic_request(r, Op::N, Op::N, 2, 1, 0), InvalidArgument);
}

TEST(Profile, JsonRoundTripAndErrors) {
  MachineProfile a;
  a.latency_s = 3e-6, a.bytes_per_s = 7e9, a.gflops[1] = 42, a.overlap_exposed = 0.75;
  const std::string path = ::testing::TempDir() + "/shardmm_profile.json";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    ASSERT_GE(std::fputs(a.to_json().c_str(), f), 0);
    ASSERT_EQ(std::fclose(f), 0);
  }
  const MachineProfile b = MachineProfile::from_json_file(path);
  EXPECT_DOUBLE_EQ(b.latency_s, 3e-6);
  EXPECT_DOUBLE_EQ(b.bytes_per_s, 7e9);
  EXPECT_DOUBLE_EQ(b.gflops[1], 42);
  EXPECT_DOUBLE_EQ(b.overlap_exposed, 0.75);
  EXPECT_THROW(MachineProfile::from_json_file(path + ".missing"), IoError);
  for (const char* bad : {"1.5", "-0.1"}) {  // a share of the overlapped time: 0 .. 1
    FILE* g = std::fopen(path.c_str(), "w");
    ASSERT_NE(g, nullptr);
    ASSERT_GE(std::fprintf(g,
                           "{\"latency_s\": 1e-6, \"bytes_per_s\": 1e9, \"overlap_exposed\": %s, "
                           "\"gemm_gflops\": {\"f32\": 1, \"f64\": 1, \"c64\": 1, \"c128\": 1}}",
                           bad),
              0);
    ASSERT_EQ(std::fclose(g), 0);
    EXPECT_THROW(MachineProfile::from_json_file(path), IoError) << bad;
  }
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  ASSERT_GE(std::fputs("{\"latency_s\": 1}", f), 0);
  ASSERT_EQ(std::fclose(f), 0);
  EXPECT_THROW(MachineProfile::from_json_file(path), IoError);
}

// SUMMA's default panel width: the widest multiple of 384 whose buffers fit in a fifth of the
// rank's A + B + C, else 256 if its buffers fit in a quarter, else 128; and what the cost
// model charges for it.
TEST(PanelWidth, WidestMultipleOfTheKBlockThatFitsAFifth) {
  using blocking::summa_panel_width;
  // 4096^3 on 2x1: tiles 2048 x 4096 (A), 2048 x 4096 (B), 2048 x 4096 (C); B broadcast.
  EXPECT_EQ(summa_panel_width(2048, 4096, 4096, 2048, 0, 2), 384);
  // The same with nothing broadcast or packed: no buffers, the widest.
  EXPECT_EQ(summa_panel_width(2048, 4096, 4096, 2048, 0, 0), 1536);
  // 8192^3 on 2x1: 0.2 x 3 x 4096 x 8192 = 2 x 8192 x w allows 1228 -> 768.
  EXPECT_EQ(summa_panel_width(4096, 8192, 8192, 4096, 0, 2), 768);
  // 2048^3 on 1x4 (A broadcast, 2048 x 512 tiles): not even 384 fits, nor 256 a quarter.
  EXPECT_EQ(summa_panel_width(2048, 512, 512, 2048, 2, 0), 128);
  // 2048^3 on 2x3 (both broadcast, 1024 x 683 tiles): the same.
  EXPECT_EQ(summa_panel_width(1024, 683, 683, 1024, 2, 2), 128);
  // 32768 x 1024 x 1024 on 1x2 (A broadcast between two owners from their storage, k blocks
  // of 256): at 256 the owners take turns, one buffer fills, 8.4e6 of a quarter's 8.5e6.
  EXPECT_EQ(summa_panel_width(32768, 512, 512, 1024, blocking::SideBuffers(2, 256), 0), 256);
  EXPECT_EQ(summa_panel_width(32768, 512, 512, 1024, 2, 0), 128);  // two would not fit
  EXPECT_EQ(summa_panel_width(32768, 512, 512, 1024, blocking::SideBuffers(2, 512), 0),
            128);  // 256 is half a turn
  // One local packing buffer counts half as much as a broadcast pair.
  EXPECT_EQ(summa_panel_width(4096, 512, 4096, 2048, 1, 2), 768);
  EXPECT_EQ(summa_panel_width(4096, 512, 4096, 2048, 2, 2), 384);
}

TEST(PanelWidth, CostModelChargesTheRunsBuffers) {
  // 4096^3 on 2 ranks, SUMMA C-stationary on 2x1: A + B + C tiles plus one 384-wide buffer
  // for A (not broadcast: summa.cpp still takes one) and two for B (broadcast down columns).
  PlanRequest r = request(4096, 4096, 4096, 2);
  const Candidate c{Algorithm::Summa, Stationary::C, RingForm::Auto, 2, 1, 1};
  const double tiles = 3.0 * 2048 * 4096, panels = 384.0 * (2048 + 2 * 4096);
  EXPECT_DOUBLE_EQ(double(evaluate(r, c).memory_bytes), (tiles + panels) * 8);
}

// The ring's swap at p = 2 holds k-chunks, not the other rank's tile: six 384-wide chunk
// tiles fit in a fifth of the rank's A + B + C at 4096^3 (not 768); small shares fall back
// to 256; the model charges the operands plus those buffers and one message per chunk.
TEST(PanelWidth, RingSwapChunks) {
  using blocking::ring_chunk_width;
  const double share = 3.0 * 4096 * 4096 / 2;
  EXPECT_EQ(ring_chunk_width(2048, share), 384);
  EXPECT_EQ(ring_chunk_width(512, share), 1536);
  EXPECT_EQ(ring_chunk_width(2048, 3.0 * 1024 * 1024 / 2), 256);
  plan::Request r(request(4096, 4096, 4096, 2));
  r.ring_in_place[0] = {true, true, true};  // nothing to redistribute first
  const Candidate c{Algorithm::Ring, Stationary::Auto, RingForm::AllGatherA, 2, 1, 1};
  const Candidate e = plan::priced(r, c);
  // Two incoming 384-wide chunks of A's 2048 rows; A's k runs along its stored columns, so
  // the outgoing chunks leave from A itself.
  EXPECT_DOUBLE_EQ(double(e.memory_bytes), (share + 2.0 * 2048 * 384) * 8);
  EXPECT_DOUBLE_EQ(e.messages, 11);  // ceil(4096 / 384)
  // The reduce-scatter swap: chunks of C's 2048 rows, 384 wide (768 would not fit a quarter).
  EXPECT_EQ(blocking::rs_chunk_width(4096, 2048, share), 384);
  EXPECT_EQ(blocking::rs_chunk_width(1024, 2048, share), 768);
  r.ring_in_place[2] = {true, true, true};
  const Candidate rs = plan::priced(
      r, Candidate{Algorithm::Ring, Stationary::Auto, RingForm::ReduceScatter, 2, 1, 1});
  EXPECT_DOUBLE_EQ(double(rs.memory_bytes), (share + 384.0 * 3 * 4096) * 8);  // 2 out, 1 in
  EXPECT_DOUBLE_EQ(rs.messages, 6);                                           // ceil(2048 / 384)
  // AG-A streaming op(B) split along k (TT on 1 x 2): its 2.5 chunk pieces per unit of width
  // push the chunk down to 256; one more message per chunk, and the peer's k half of this
  // rank's C columns on top of A's tile.
  EXPECT_EQ(ring_chunk_width(2048, share, 2.5 * 2048), 256);
  r.ring_streamed[0] = true;
  const Candidate s = plan::priced(r, c);
  EXPECT_DOUBLE_EQ(double(s.memory_bytes), (share + (2.0 + 2.5) * 2048 * 256) * 8);
  EXPECT_DOUBLE_EQ(s.messages, 32);  // 2 x ceil(4096 / 256)
  EXPECT_DOUBLE_EQ(s.words, 4096.0 * 4096 / 2 + 2048.0 * 2048);
  EXPECT_DOUBLE_EQ(s.redist_words, 0);
}

// The sharding rules' candidate exists when gemm priced their plan for the caller's layouts,
// with that plan's words, flops and memory; the redistribution hook prices every candidate's
// moves instead of the balanced estimate.
TEST(Planner, ShardedCandidateAndExactRedistribution) {
  plan::Request r(request(4096, 4096, 256, 4));
  EXPECT_THROW(find(plan::plan_gemm(r), "sharded"), std::runtime_error);  // no layouts: none
  r.sharded = {524288, 262144, 2, 2.0 * 2048 * 2048 * 256, 5e6};
  r.redistribution_words = [](const Candidate& c) {
    return c.algorithm == Algorithm::Sharded ? 0.0 : c.algorithm == Algorithm::Ring ? -1.0 : 1e6;
  };
  const GemmPlan p = plan::plan_gemm(r);
  const Candidate& s = find(p, "sharded");
  EXPECT_DOUBLE_EQ(s.words, 524288);
  EXPECT_DOUBLE_EQ(s.redist_words, 0);
  EXPECT_DOUBLE_EQ(s.flops, 2.0 * 2048 * 2048 * 256);
  EXPECT_EQ(s.memory_bytes, std::int64_t{40000000});
  EXPECT_DOUBLE_EQ(find(p, "summa(C) 2x2").redist_words, 1e6);  // from the hook
  const double balanced = (4096.0 * 256 * 2 + 4096.0 * 4096) / 4 * 0.75;
  EXPECT_DOUBLE_EQ(find(p, "ring(AG-A) 4").redist_words, balanced);  // the hook declined
  EXPECT_EQ(p.chosen.name(), "sharded");
}

// preferred_layouts on the tall, large-k, outer-product and square shapes at P = 8: layouts
// gemm's Auto runs on as they are (its plan moves nothing into other layouts), on a mesh of
// the 8 ranks; tall and large k within 1.10 x the lower bound, where [I_x,J_y] on 4 x 2
// moved 4.54 and 3.11 x it.
TEST(PreferredLayouts, SuiteShapesOnEightRanks) {
  struct Case {
    std::int64_t m, n, k;
    double over_lb;  // words at most this x the lower bound (0: not checked)
  };
  const Case cases[] = {{32768, 2048, 2048, 1.10},
                        {2048, 2048, 16384, 1.10},
                        {16384, 16384, 1024, 0},
                        {4096, 4096, 4096, 0}};
  for (const Case& c : cases) {
    const PreferredLayouts p = preferred_layouts(request(c.m, c.n, c.k, 8));
    const std::string what = std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                             std::to_string(c.k) + ": " + p.plan.name() + " on " +
                             p.mesh.to_string() + ", A " + p.A.to_string();
    EXPECT_TRUE(p.in_place) << what;
    EXPECT_EQ(p.mesh.size(), 8) << what;
    EXPECT_DOUBLE_EQ(p.plan.redist_words, 0) << what;
    if (c.over_lb > 0) {
      EXPECT_LE(p.plan.words, c.over_lb * lower_bound_words(c.m, c.n, c.k, 8)) << what;
    }
    EXPECT_EQ(p.A.rows(), c.m) << what;
    EXPECT_EQ(p.C.cols(), c.n) << what;
  }
  // op(A) = A^T: A is stored k x m.
  const PreferredLayouts t = preferred_layouts(request(32768, 2048, 2048, 8), Op::T, Op::N);
  EXPECT_EQ(t.A.rows(), 2048);
  EXPECT_EQ(t.A.cols(), 32768);
  EXPECT_THROW(preferred_layouts(request(-1, 2, 2, 8)), InvalidArgument);
}

}  // namespace
