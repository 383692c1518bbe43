// The out-of-core schedule's price of each read path (plan/ooc_cost.hpp): the read copy rate
// of the I/O method, MPI-IO's blocking reads, and the profile keys that carry the rates.
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

// A slower mmap copy raises mmap's predicted time, and the schedule it picks reads no more bytes
// than posix's (its bytes cost more): fewer on the long-k product (wider blocks, narrower
// panels), as many on the first product (whose blocks are already the widest the budget holds).
TEST(OocCost, SlowerCopyRaisesThePredictionAndReadsFewerBytes) {
  for (const index_t m : {index_t{4096}, index_t{16384}}) {
    const index_t k = m == 4096 ? 32768 : 2048;
    const OocPlan pread = plan::ooc_schedule(problem(m, m, k, 3e9));
    const OocPlan mapped = plan::ooc_schedule(problem(m, m, k, 0.5e9));
    const std::string shapes = std::to_string(mapped.bm) + "x" + std::to_string(mapped.bn) +
                               " kb " + std::to_string(mapped.kb) + " vs " +
                               std::to_string(pread.bm) + "x" + std::to_string(pread.bn) + " kb " +
                               std::to_string(pread.kb);
    EXPECT_GT(mapped.predicted_seconds, pread.predicted_seconds + 1.0) << shapes;
    if (m == 4096) {
      EXPECT_LT(mapped.bytes_read, pread.bytes_read) << shapes;
    } else {
      EXPECT_EQ(mapped.bytes_read, pread.bytes_read) << shapes;
    }
    OocPlan same = pread;  // posix's shape at mmap's rate: no better than mmap's own
    plan::ooc_predict(problem(m, m, k, 0.5e9), same);
    EXPECT_GE(same.predicted_seconds, mapped.predicted_seconds) << shapes;
    if (m == 4096) {
      EXPECT_GT(same.predicted_seconds, 1.01 * mapped.predicted_seconds) << shapes;
    }
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

}  // namespace
