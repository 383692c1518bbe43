// The out-of-core schedule's price of each read path (plan/ooc_cost.hpp): the read copy rate
// of the I/O method, the cost of each run a read takes (the files' orders), MPI-IO's blocking
// reads, and the profile keys that carry the rates.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "plan/ooc_cost.hpp"
#include "shardmm/error.hpp"
#include "shardmm/ooc.hpp"
#include "shardmm/plan.hpp"

using namespace shardmm;

namespace {

// 2 ranks, 128 MiB each, f64, the operands in the page cache, this machine's GEMM and disk.
plan::OocProblem problem(index_t m, index_t n, index_t k, double read_copy) {
  plan::OocProblem q;
  q.m = m, q.n = n, q.k = k, q.elem = 8, q.ranks = 2, q.budget = std::int64_t{128} << 20;
  q.flops_per_s = 51e9, q.disk_bytes_per_s = 0.227e9, q.cached = 1;
  q.read_copy_bytes_per_s = read_copy;
  return q;
}

void put(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  ASSERT_GE(std::fputs(text.c_str(), f), 0);
  ASSERT_EQ(std::fclose(f), 0);
}

// One shape priced at two read copy rates: the GEMM term differs by exactly the bytes read
// over each rate (the writes and the disk do not change), the edges by the first panels'.
TEST(OocCost, ReadCopyRateChargesEveryByteRead) {
  const plan::OocProblem fast = problem(16384, 16384, 2048, 3e9);
  OocPlan s = plan::ooc_schedule(fast);
  ASSERT_GT(s.bytes_read, 0);
  OocPlan slow = s;
  plan::ooc_predict(problem(16384, 16384, 2048, 0.5e9), slow);
  const auto read = static_cast<double>(s.bytes_read);
  EXPECT_NEAR(slow.predicted_compute - s.predicted_compute, read / 0.5e9 - read / 3e9, 1e-6);
  EXPECT_DOUBLE_EQ(slow.predicted_disk, s.predicted_disk);
  const double first = static_cast<double>((s.bm + s.bn) * s.kb * 8);
  EXPECT_NEAR(slow.predicted_edges - s.predicted_edges, first / 0.5e9 - first / 3e9, 1e-9);
}

// A slower copy raises the predicted time, and the schedule it picks reads fewer bytes than
// the one a nearly free copy (50 GB/s) picks, which spends bytes on smaller blocks (the last
// block's write, the panels' efficiency): on both products.
TEST(OocCost, SlowerCopyRaisesThePredictionAndReadsFewerBytes) {
  for (const index_t m : {index_t{4096}, index_t{16384}}) {
    const index_t k = m == 4096 ? 32768 : 2048;
    const OocPlan cheap = plan::ooc_schedule(problem(m, m, k, 50e9));
    const OocPlan mapped = plan::ooc_schedule(problem(m, m, k, 0.5e9));
    const std::string shapes = std::to_string(mapped.bm) + "x" + std::to_string(mapped.bn) +
                               " kb " + std::to_string(mapped.kb) + " vs " +
                               std::to_string(cheap.bm) + "x" + std::to_string(cheap.bn) + " kb " +
                               std::to_string(cheap.kb);
    EXPECT_GT(mapped.predicted_seconds, cheap.predicted_seconds + 1.0) << shapes;
    EXPECT_LT(mapped.bytes_read, cheap.bytes_read) << shapes;
    OocPlan same = cheap;  // the cheap copy's shape at the slow rate: worse than its own
    plan::ooc_predict(problem(m, m, k, 0.5e9), same);
    EXPECT_GT(same.predicted_seconds, 1.01 * mapped.predicted_seconds) << shapes;
  }
}

// Reads that block (MPI-IO) do not overlap the GEMMs: the bytes the page cache does not hold
// add their disk time to the GEMM term, and the disk term keeps only the writes.
TEST(OocCost, BlockingReadsAddTheirDiskTime) {
  plan::OocProblem q = problem(16384, 16384, 2048, 1.5e9);
  q.cached = 0;
  OocPlan overlapped = plan::ooc_schedule(q);
  OocPlan blocking = overlapped;
  q.reads_block = true;
  plan::ooc_predict(q, blocking);
  const double read_disk = static_cast<double>(overlapped.bytes_read) / 0.227e9;
  EXPECT_NEAR(blocking.predicted_compute - overlapped.predicted_compute, read_disk, 1e-6);
  EXPECT_NEAR(overlapped.predicted_disk - blocking.predicted_disk, read_disk, 1e-6);
  EXPECT_GT(blocking.predicted_seconds, overlapped.predicted_seconds);
}

// Cold operands that the page cache keeps between passes cost the disk once: on one shape
// (7 and 6 passes over A and B), the disk term drops from every byte read to the rank's share
// of A and B, half the cold part when half was cached; blocking reads (MPI-IO) move the same
// amount out of the GEMM term. A shape that reads each operand once costs the same either way.
TEST(OocCost, OperandsKeptInThePageCacheCostTheDiskOnce) {
  plan::OocProblem q = problem(16384, 16384, 2048, 1.5e9);
  q.cached = 0;
  const OocPlan every = plan::ooc_schedule(q);
  const double share = (16384.0 * 2048 * 2) * 8 / 2;  // A and B over 2 ranks
  ASSERT_GT(static_cast<double>(every.bytes_read), 2 * share) << "a shape with several passes";
  for (const bool blocking : {false, true})
    for (const double cached : {0.0, 0.5}) {
      q.reads_block = blocking, q.cached = cached, q.rereads_cached = false;
      OocPlan all = every, once = every;
      plan::ooc_predict(q, all);
      q.rereads_cached = true;
      plan::ooc_predict(q, once);
      const double saved =
          (static_cast<double>(every.bytes_read) - share) * (1 - cached) / q.disk_bytes_per_s;
      const double term_all = blocking ? all.predicted_compute : all.predicted_disk;
      const double term_once = blocking ? once.predicted_compute : once.predicted_disk;
      EXPECT_NEAR(term_all - term_once, saved, 1e-6) << blocking << " " << cached;
      EXPECT_LE(once.predicted_seconds, all.predicted_seconds);
    }
  OocPlan single = every;  // A and B read once each: nothing is read twice
  single.bytes_read = static_cast<std::int64_t>(share);
  q.reads_block = false, q.cached = 0;
  OocPlan single_kept = single;
  q.rereads_cached = false;
  plan::ooc_predict(q, single);
  q.rereads_cached = true;
  plan::ooc_predict(q, single_kept);
  EXPECT_DOUBLE_EQ(single.predicted_disk, single_kept.predicted_disk);
}

// The runs a schedule reads follow the files' orders. Without a run cost the shape does not
// depend on them, so on one shape: op(A)'s panels (bm x kb) take bm runs in C order, kb in
// Fortran order; op(B)'s (kb x bn) kb and bn. The differences give how many panels of each the
// busiest rank reads, and those must account for its bytes.
TEST(OocCost, RunsFollowTheFilesOrders) {
  plan::OocProblem q = problem(16384, 16384, 2048, 1.5e9);
  auto runs = [&q](bool a_rows, bool b_rows) {
    q.orders = {a_rows, b_rows, true};
    return plan::ooc_schedule(q);
  };
  const OocPlan cc = runs(true, true), fc = runs(false, true), cf = runs(true, false);
  ASSERT_TRUE(cc.bm == fc.bm && cc.bn == cf.bn && cc.kb == fc.kb && cc.kb == cf.kb);
  ASSERT_TRUE(cc.kb < q.k && cc.bm != cc.kb && cc.bn != cc.kb) << cc.to_string();
  const std::int64_t a_panels = (cc.runs_read - fc.runs_read) / (cc.bm - cc.kb);
  const std::int64_t b_panels = (cc.runs_read - cf.runs_read) / (cc.kb - cc.bn);
  EXPECT_EQ(cc.runs_read, a_panels * cc.bm + b_panels * cc.kb) << cc.to_string();
  const index_t panels_per_block = (q.k + cc.kb - 1) / cc.kb;
  EXPECT_EQ(cc.bytes_read, (a_panels * cc.bm + b_panels * cc.bn) * q.k * 8 / panels_per_block)
      << cc.to_string();
  EXPECT_GT(a_panels, 0);
  EXPECT_GT(b_panels, 0);
}

// Each run costs read_run_seconds in the GEMM term (the first panels' runs in the edges); a
// costly run steers the schedule to fewer runs, and to a shorter time than the run-blind one.
TEST(OocCost, RunCostChargesEveryRunAndSteersTheShape) {
  plan::OocProblem q = problem(16384, 16384, 2048, 2e9);
  q.reads_block = true;
  const OocPlan blind = plan::ooc_schedule(q);
  q.read_run_seconds = 6.5e-6;
  OocPlan priced = blind;
  plan::ooc_predict(q, priced);
  const double first_runs = static_cast<double>(blind.bm + blind.kb);  // C order: bm + kb
  EXPECT_NEAR(priced.predicted_compute - blind.predicted_compute,
              static_cast<double>(blind.runs_read) * 6.5e-6, 1e-9);
  EXPECT_NEAR(priced.predicted_edges - blind.predicted_edges, first_runs * 6.5e-6, 1e-9);
  const OocPlan chosen = plan::ooc_schedule(q);
  EXPECT_LT(chosen.runs_read, blind.runs_read) << chosen.to_string();
  EXPECT_LT(chosen.predicted_seconds, priced.predicted_seconds) << chosen.to_string();
}

// plan_out_of_core prices the I/O method it is given, with the profile's rate for it.
TEST(OocCost, PlanOutOfCoreTakesTheProfilesRateOfItsIoMethod) {
  const std::string path = ::testing::TempDir() + "/shardmm_ooc_cost_profile.json";
  MachineProfile slow_mmap;
  slow_mmap.read_copy_bytes_per_s = {3e9, 1.5e9, 0.1e9};
  put(path, slow_mmap.to_json());
  ASSERT_EQ(setenv("SHARDMM_PROFILE", path.c_str(), 1), 0);
  const std::int64_t budget = std::int64_t{128} << 20;
  const OocPlan posix =
      plan_out_of_core(16384, 16384, 2048, Dtype::F64, 2, budget, false, false, false, true, 1);
  const OocPlan mmap = plan_out_of_core(16384, 16384, 2048, Dtype::F64, 2, budget, false, false,
                                        false, true, 1, IoMethod::Mmap);
  ASSERT_EQ(unsetenv("SHARDMM_PROFILE"), 0);
  EXPECT_EQ(posix.io, IoMethod::Posix);
  EXPECT_EQ(mmap.io, IoMethod::Mmap);
  EXPECT_GT(mmap.predicted_seconds, posix.predicted_seconds);
  EXPECT_NE(mmap.to_string().find("read (mmap)"), std::string::npos) << mmap.to_string();
  // predict_out_of_core_seconds follows the plan's read path and the profile given.
  EXPECT_NEAR(predict_out_of_core_seconds(mmap, Dtype::F64, slow_mmap), mmap.predicted_seconds,
              1e-9 * mmap.predicted_seconds);
  EXPECT_LT(predict_out_of_core_seconds(mmap, Dtype::F64, MachineProfile{}),
            mmap.predicted_seconds);  // the default mmap rate is faster than this profile's
}

// The rates go through JSON; a profile without them (or with some) keeps the defaults.
TEST(Profile, ReadCopyRatesRoundTripAndAreOptional) {
  const std::string path = ::testing::TempDir() + "/shardmm_profile_copy.json";
  MachineProfile a;
  a.read_copy_bytes_per_s = {2.5e9, 1.25e9, 0.375e9};
  put(path, a.to_json());
  const MachineProfile b = MachineProfile::from_json_file(path);
  EXPECT_DOUBLE_EQ(b.read_copy_bytes_per_s.posix, 2.5e9);
  EXPECT_DOUBLE_EQ(b.read_copy_bytes_per_s.mpiio, 1.25e9);
  EXPECT_DOUBLE_EQ(b.read_copy_bytes_per_s.mmap, 0.375e9);
  const MachineProfile defaults;
  const std::string base = R"({"latency_s": 1e-6, "bytes_per_s": 1e9,
      "gemm_gflops": {"f32": 1, "f64": 1, "c64": 1, "c128": 1})";
  put(path, base + "}");  // a profile written before the key existed
  const MachineProfile old = MachineProfile::from_json_file(path);
  EXPECT_DOUBLE_EQ(old.read_copy_bytes_per_s.posix, defaults.read_copy_bytes_per_s.posix);
  EXPECT_DOUBLE_EQ(old.read_copy_bytes_per_s.mpiio, defaults.read_copy_bytes_per_s.mpiio);
  EXPECT_DOUBLE_EQ(old.read_copy_bytes_per_s.mmap, defaults.read_copy_bytes_per_s.mmap);
  put(path, base + R"(, "read_copy_bytes_per_s": {"mmap": 7e8}})");
  const MachineProfile some = MachineProfile::from_json_file(path);
  EXPECT_DOUBLE_EQ(some.read_copy_bytes_per_s.mmap, 7e8);
  EXPECT_DOUBLE_EQ(some.read_copy_bytes_per_s.posix, defaults.read_copy_bytes_per_s.posix);
  for (const char* bad : {R"({"mmap": 0})", R"({"posix": -1})", R"({"mpiio": "fast"})"}) {
    put(path, base + ", \"read_copy_bytes_per_s\": " + bad + "}");
    EXPECT_THROW(MachineProfile::from_json_file(path), IoError) << bad;
  }
}

// The run costs go through JSON too, optional, each at least 0 (and under a second).
TEST(Profile, ReadRunSecondsRoundTripAndAreOptional) {
  const std::string path = ::testing::TempDir() + "/shardmm_profile_runs.json";
  MachineProfile a;
  a.read_run_seconds = {1e-6, 8e-6, 0};
  put(path, a.to_json());
  const MachineProfile b = MachineProfile::from_json_file(path);
  EXPECT_DOUBLE_EQ(b.read_run_seconds.posix, 1e-6);
  EXPECT_DOUBLE_EQ(b.read_run_seconds.mpiio, 8e-6);
  EXPECT_DOUBLE_EQ(b.read_run_seconds.mmap, 0);
  const std::string base = R"({"latency_s": 1e-6, "bytes_per_s": 1e9,
      "gemm_gflops": {"f32": 1, "f64": 1, "c64": 1, "c128": 1})";
  put(path, base + R"(, "read_run_seconds": {"mmap": 2e-6}})");
  const MachineProfile some = MachineProfile::from_json_file(path);
  EXPECT_DOUBLE_EQ(some.read_run_seconds.mmap, 2e-6);
  EXPECT_DOUBLE_EQ(some.read_run_seconds.mpiio, MachineProfile{}.read_run_seconds.mpiio);
  for (const char* bad : {R"({"mmap": -1e-6})", R"({"posix": 2})", R"({"mpiio": "slow"})"}) {
    put(path, base + ", \"read_run_seconds\": " + bad + "}");
    EXPECT_THROW(MachineProfile::from_json_file(path), IoError) << bad;
  }
}

}  // namespace
