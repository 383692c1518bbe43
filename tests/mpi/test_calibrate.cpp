// `shardmm calibrate` end to end, as main() runs it on every rank: it writes a profile the
// planner reads back, only rank 0 prints, and a bad request fails with the same error on every
// rank. Its own program at 1 and 3 ranks (tests/CMakeLists.txt): each run measures GEMM rates,
// the disk and MPI-IO's reads for seconds, and what differs by rank count is only whether there
// is a network to time (ping-pong and ring shift: 3 ranks, a ring of odd length).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "cli.hpp"
#include "mpi/cli_test_util.hpp"
#include "mpi/npy_test_util.hpp"

namespace shardmm::testing {
namespace {

using namespace npy;

// calibrate writes a profile the planner reads, with Strassen's crossover measured (here only
// at n = 256: there, or "none up to 256") and printed.
TEST(Calibrate, WritesAReadableProfile) {
  cli::CalibrateConfig cfg;
  cfg.output = file("calibrated.json"), cfg.reps = 2, cfg.crossover_max = 256;
  cfg.read_probe = "1M";  // rounded up to one block of rows: measured
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(returns([&cfg] { return cli::run_calibrate(cfg); }), 0);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(printed.empty(), world_rank() != 0) << printed;
  if (world_rank() != 0) return;
  const MachineProfile p = MachineProfile::from_json_file(cfg.output);
  for (double g : p.gflops) EXPECT_GT(g, 0.0);
  EXPECT_GT(p.bytes_per_s, 0.0);
  EXPECT_TRUE(world_size() == 1 || p.latency_s > 0) << p.latency_s;
  EXPECT_TRUE(p.strassen_crossover == 256 || p.strassen_crossover == 512) << p.strassen_crossover;
  EXPECT_NE(printed.find("Strassen crossover " + std::to_string(p.strassen_crossover)),
            std::string::npos)
      << printed;
  // Each read path's rate in the file and printed: MPI-IO's measured (a default would come out
  // only by chance), posix's and mmap's the defaults; the probe file is gone.
  const auto j = nlohmann::json::parse(std::ifstream(cfg.output));
  for (const char* io : {"posix", "mpiio", "mmap"}) {
    ASSERT_TRUE(j.at("read_copy_bytes_per_s").contains(io)) << io;
    EXPECT_GT(j["read_copy_bytes_per_s"][io].get<double>(), 0.0) << io;
  }
  ASSERT_TRUE(j.contains("read_run_seconds") && j["read_run_seconds"].contains("mpiio"));
  EXPECT_GE(p.read_run_seconds.mpiio, 0.0);  // MPI-IO's cost per run, measured (0 when none)
  const MachineProfile defaults;
  EXPECT_NE(p.read_copy_bytes_per_s.mpiio, defaults.read_copy_bytes_per_s.mpiio);
  EXPECT_EQ(p.read_copy_bytes_per_s.posix, defaults.read_copy_bytes_per_s.posix);
  EXPECT_EQ(p.read_copy_bytes_per_s.mmap, defaults.read_copy_bytes_per_s.mmap);
  EXPECT_NE(printed.find("page-cache reads per rank posix "), std::string::npos) << printed;
  const std::string dir = std::filesystem::path(cfg.output).parent_path().string();
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().rfind(".shardmm-", 0), std::string::npos) << e.path();
}

// --read-probe 0: MPI-IO's read rate is not measured, and the profile keeps the default's.
TEST(Calibrate, ReadProbeZeroKeepsTheDefaultRate) {
  cli::CalibrateConfig cfg;
  cfg.output = file("unprobed.json"), cfg.reps = 1, cfg.crossover_max = 0, cfg.read_probe = "0";
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(returns([&cfg] { return cli::run_calibrate(cfg); }), 0);
  (void)::testing::internal::GetCapturedStdout();
  if (world_rank() != 0) return;
  EXPECT_EQ(MachineProfile::from_json_file(cfg.output).read_copy_bytes_per_s.mpiio,
            MachineProfile{}.read_copy_bytes_per_s.mpiio);
}

// An unwritable profile fails on every rank, not on rank 0 alone, and before measuring: no
// line of results is printed.
TEST(Calibrate, UnwritableOutputSameErrorEverywhere) {
  cli::CalibrateConfig cfg;
  cfg.output = file("no_such_dir/calibrated.json"), cfg.reps = 2, cfg.crossover_max = 0;
  ::testing::internal::CaptureStdout();
  expect_same_error_everywhere<IoError>([&cfg] { cli::run_calibrate(cfg); }, "no_such_dir");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
}

}  // namespace
}  // namespace shardmm::testing
