// The launcher's other commands end to end, as main() runs them on every rank: plan prints
// the planner's table, bench writes its JSON records; bad requests fail with the same error on
// every rank. (multiply: test_multiply.cpp; calibrate: test_calibrate.cpp.)
#include <nlohmann/json.hpp>

#include <sstream>

#include "cli.hpp"
#include "mpi/cli_test_util.hpp"
#include "mpi/npy_test_util.hpp"

namespace shardmm::testing {
namespace {

using namespace npy;

cli::PlanConfig plan_config(index_t m, index_t n, index_t k, int ranks) {
  cli::PlanConfig c;
  c.m = m, c.n = n, c.k = k, c.ranks = ranks;
  return c;
}

// run_plan prints exactly plan_gemm(request).explain(rows) on rank 0, then the preferred
// inputs (preferred_layouts), and nothing elsewhere.
TEST(Plan, PrintsThePlannersTable) {
  const std::string profile = file("profile.json");
  MachineProfile custom;
  custom.latency_s = 1e-3, custom.bytes_per_s = 1e8;
  put_file(profile, custom.to_json());
  std::vector<cli::PlanConfig> cfgs = {
      plan_config(1000, 1000, 1000, 8), plan_config(100, 50000, 30, 6),
      plan_config(4096, 4096, 64, 16), plan_config(300, 2000, 2000, 4)};
  cfgs[1].dtype = "c64", cfgs[1].rows = 3, cfgs[2].memory_limit = "64M", cfgs[3].profile = profile;
  for (const auto& cfg : cfgs) {
    PlanRequest r;
    r.m = cfg.m, r.n = cfg.n, r.k = cfg.k, r.ranks = cfg.ranks, r.dtype = parse_dtype(cfg.dtype);
    if (!cfg.memory_limit.empty()) r.memory_limit = cli::parse_bytes(cfg.memory_limit);
    if (!cfg.profile.empty()) r.profile = MachineProfile::from_json_file(cfg.profile);
    std::string want;
    if (world_rank() == 0) {
      const PreferredLayouts p = preferred_layouts(r);
      want = plan_gemm(r).explain(static_cast<std::size_t>(cfg.rows)) + "preferred inputs: mesh " +
             p.mesh.to_string() + ", A " + p.A.spec().to_string() + ", B " +
             p.B.spec().to_string() + ", C " + p.C.spec().to_string() + "\n  gemm runs " +
             p.plan.name() + " on them, moving nothing";
    }
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(returns([&cfg] { return cli::run_plan(cfg); }), 0);
    const std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(out.substr(0, want.size()), want)
        << cfg.m << "x" << cfg.n << "x" << cfg.k << " on " << cfg.ranks;
    EXPECT_EQ(out.empty(), world_rank() != 0) << out;
  }
}

// Inputs already in 2.5D's own layouts on a 3-D mesh (--grid PxQxR with every layout, as
// scripts/lib/scaling_model.py prices such runs): Auto's choice on them, moving nothing more.
TEST(Plan, PricesInputsOnAThreeDimensionalMesh) {
  PlanRequest r;
  r.m = r.n = r.k = 512, r.ranks = 8;
  r.memory_growth = -1;  // 2.5D's slices' partial products: above the lean cap
  const PreferredLayouts p = preferred_layouts(r);
  ASSERT_EQ(p.mesh.to_string(), "{x:2, y:2, z:2}");
  cli::PlanConfig cfg = plan_config(512, 512, 512, 8);
  cfg.grid = "2x2x2", cfg.json = true, cfg.memory_growth = "unlimited";
  cfg.layout_a = "A" + p.A.spec().to_string(), cfg.layout_b = "B" + p.B.spec().to_string();
  cfg.layout_c = "C" + p.C.spec().to_string();
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(returns([&cfg] { return cli::run_plan(cfg); }), 0);
  const std::string out = ::testing::internal::GetCapturedStdout();
  if (world_rank() == 0) {
    const auto chosen = nlohmann::json::parse(out).at("chosen");
    EXPECT_EQ(chosen.at("name").get<std::string>(), p.plan.name()) << out;
    EXPECT_EQ(chosen.at("redist_words").get<double>(), 0.0) << out;
  }
  cfg.layout_c.clear();  // a 3-D mesh has no block-cyclic default
  expect_same_error_everywhere<InvalidArgument>([&] { cli::run_plan(cfg); }, "PxQxR");
}

TEST(Plan, BadRequestsSameErrorEverywhere) {
  cli::PlanConfig cfg = plan_config(100000, 100000, 100000, 4);
  cfg.memory_limit = "12Q";
  expect_same_error_everywhere<InvalidArgument>([&] { cli::run_plan(cfg); }, "12Q");
  cfg.memory_limit = "1K";
  expect_same_error_everywhere<OutOfMemory>([&] { cli::run_plan(cfg); });
  cfg.memory_limit.clear();
  cfg.profile = file("no_profile.json");
  expect_same_error_everywhere<IoError>([&] { cli::run_plan(cfg); }, "no_profile.json");
}

// Rank 0's JSON lines; every record's algorithm, size and probe error checked.
void expect_bench_json(const std::string& path, const cli::BenchConfig& cfg) {
  if (world_rank() != 0) return;
  std::istringstream in(get_file(path));
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    ASSERT_LT(lines, cfg.algos.size()) << line;
    EXPECT_EQ(j.value("algorithm", ""), cfg.algos[lines]);
    EXPECT_EQ(j.value("m", -1), cfg.m);
    EXPECT_EQ(j.value("ranks", -1), world_size());
    EXPECT_EQ(j.value("times_s", nlohmann::json::array()).size(),
              static_cast<std::size_t>(cfg.reps));
    const double probe = j.value("probe_error_eps", -1.0);
    EXPECT_GT(j.value("median_s", 0.0), 0.0) << line;
    if (cfg.algos[lines] == "cores") {  // the P-core ceiling computes no product to check
      EXPECT_EQ(probe, -1.0) << line;
      continue;
    }
    EXPECT_GE(probe, 0.0) << line;
    EXPECT_LE(probe, 100.0) << line;
    if (lines == 0) {  // the first contender's own added memory is measured
      EXPECT_GE(j.value("own_extra_over_local_abc", -1.0), 0.0) << line;
    }
  }
  EXPECT_EQ(lines, cfg.algos.size());
}

void bench_smoke(cli::BenchConfig cfg, const std::string& json) {
  cfg.m = cfg.n = cfg.k = 64, cfg.nb = 16, cfg.reps = 1, cfg.warmup = 0;
  cfg.check = true, cfg.quiet = true, cfg.json = file(json);
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(returns([&cfg] { return cli::run_bench(cfg); }), 0);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "") << "--quiet printed";
  MPI_Barrier(MPI_COMM_WORLD);
  expect_bench_json(cfg.json, cfg);
}

// The reference column: ScaLAPACK's p?gemm, or the P-core ceiling in a build without it.
const char* const kReference = SHARDMM_HAVE_SCALAPACK ? "scalapack" : "cores";

TEST(Bench, SmokeF64) {
  cli::BenchConfig cfg;
  cfg.algos = {"auto", "summa", kReference};
  bench_smoke(cfg, "bench_f64.json");
}

TEST(Bench, SmokeC64TransposedWithBeta) {
  cli::BenchConfig cfg;
  cfg.dtype = "c64", cfg.transa = Op::C, cfg.transb = Op::T, cfg.alpha = 2, cfg.beta = 0.5;
  cfg.algos = {"local", SHARDMM_HAVE_SCALAPACK ? "scalapack" : "summa"};
  bench_smoke(cfg, "bench_c64.json");
}

// --progress (run-demo's run): rank 0 says it is setting up before the first call is timed
// (the operands, the contenders and the warm-up take seconds), then a line per call; the other
// ranks print nothing on stderr.
TEST(Bench, ProgressSaysTheSetUpBeforeTheCalls) {
  cli::BenchConfig cfg;
  cfg.m = cfg.n = cfg.k = 64, cfg.reps = 2, cfg.warmup = 1, cfg.progress = true;
  cfg.algos = {"auto", "summa"};
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int rc = returns([&cfg] { return cli::run_bench(cfg); });
  const std::string err = ::testing::internal::GetCapturedStderr();
  (void)::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0) << err;
  if (world_rank() != 0) {
    EXPECT_EQ(err, "");
    return;
  }
  const std::string first = "setting up the operands, the contenders and a warm-up\n";
  EXPECT_EQ(err.substr(0, first.size()), first) << err;
  EXPECT_NE(err.find(first + "auto: call 1/3 ("), std::string::npos) << err;
  EXPECT_NE(err.find("summa: call 3/3 ("), std::string::npos) << err;
}

#if !SHARDMM_HAVE_SCALAPACK
// A build without ScaLAPACK: --algo scalapack reports so in its row, the others still run.
TEST(Bench, ScalapackColumnSaysTheBuildHasNone) {
  cli::BenchConfig cfg;
  cfg.m = cfg.n = cfg.k = 32, cfg.reps = 1, cfg.warmup = 0;
  cfg.algos = {"auto", "scalapack"};
  ::testing::internal::CaptureStdout();
  const int rc = returns([&cfg] { return cli::run_bench(cfg); });
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(rc, 0);
  if (world_rank() == 0) {
    EXPECT_NE(out.find("built without ScaLAPACK"), std::string::npos) << out;
  }
}
#endif

// The P-core ceiling (each rank's share in local GEMMs over chunks of k: two at 1 x 2 and 2 x 2,
// reading A's and B's storage; its own arrays on the 1 x 3 ranks whose A holds less) alternates
// with the others.
TEST(Bench, CoresCeilingRunsInTheSameAlternation) {
  cli::BenchConfig cfg;
  cfg.algos = {"summa", "cores", kReference};
  bench_smoke(cfg, "bench_cores.json");
}

// --layouts preferred: the inputs on the mesh and in the layouts preferred_layouts chooses
// (tall: a line), which the records name; ScaLAPACK gets copies on its own grid.
TEST(Bench, PreferredLayoutsTakenAndRecorded) {
  cli::BenchConfig cfg;
  cfg.m = 2048, cfg.n = cfg.k = 32, cfg.reps = 1, cfg.warmup = 0, cfg.quiet = true;
  cfg.layouts = "preferred", cfg.algos = {"auto", kReference}, cfg.json = file("preferred.json");
  cfg.scalapack_grid = std::to_string(world_size()) + "x1";
  EXPECT_EQ(returns([&cfg] { return cli::run_bench(cfg); }), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  expect_bench_json(cfg.json, cfg);
  if (world_rank() != 0) return;
  PlanRequest r;
  r.m = cfg.m, r.n = cfg.n, r.k = cfg.k, r.ranks = world_size();
  const PreferredLayouts p = preferred_layouts(r);
  std::istringstream in(get_file(cfg.json));
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j.value("layouts", ""), "preferred") << line;
    EXPECT_EQ(j.value("mesh", ""), p.mesh.to_string()) << line;
    EXPECT_EQ(j.value("layout_a", ""), p.A.spec().to_string()) << line;
    EXPECT_EQ(j.value("layout_b", ""), p.B.spec().to_string()) << line;
    EXPECT_EQ(j.value("layout_c", ""), p.C.spec().to_string()) << line;
  }
}

TEST(Bench, BadOptionsSameErrorEverywhere) {
  cli::BenchConfig cfg;
  cfg.m = cfg.n = cfg.k = 16, cfg.reps = 1, cfg.warmup = 0, cfg.quiet = true,
  cfg.algos = {"fastest"};
  expect_same_error_everywhere<InvalidArgument>([&cfg] { cli::run_bench(cfg); }, "fastest");
  cfg.algos = {"summa"}, cfg.memory_limit = "lots";
  expect_same_error_everywhere<InvalidArgument>([&cfg] { cli::run_bench(cfg); }, "lots");
  cfg.memory_limit.clear(), cfg.grid = "5x7";
  expect_same_error_everywhere<InvalidArgument>([&cfg] { cli::run_bench(cfg); });
  cfg.grid.clear(), cfg.layouts = "preferred", cfg.layout_a = "A[I_x,J]";
  expect_same_error_everywhere<InvalidArgument>([&cfg] { cli::run_bench(cfg); }, "--layout-a");
}

}  // namespace
}  // namespace shardmm::testing
