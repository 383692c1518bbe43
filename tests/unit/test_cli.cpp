// The launcher's command line without MPI: argv vectors parsed by the launcher's parse(),
// for every subcommand (defaults, every option, invalid input, --help/--version),
// and parse_bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "cli_parse_util.hpp"
#include "shardmm/error.hpp"
#include "shardmm/plan.hpp"
#include "shardmm/version.hpp"

namespace shardmm::cli {
namespace {

using testing::Args;
using testing::Cli;
using testing::expect_rejected;
using testing::expect_success_exit;
using testing::joined;

TEST(CliApp, ExactlyOneSubcommand) {
  expect_rejected({});
  expect_rejected({"frobnicate"});
  expect_rejected({"bench", "calibrate"});
  for (const char* sub : {"bench", "calibrate"}) {
    Cli cli;
    cli.parse({sub});
    EXPECT_EQ(cli.parsed.command, sub);
  }
}

TEST(CliApp, VersionAndHelp) {
  const std::string version = expect_success_exit(Ending::Version, {"--version"});
  EXPECT_NE(version.find(std::string("shardmm ") + version_string), std::string::npos) << version;
  const std::string help = expect_success_exit(Ending::Help, {"--help"});
  for (const char* sub : {"bench", "multiply", "plan", "calibrate"})
    EXPECT_NE(help.find(sub), std::string::npos) << "help lacks " << sub << ":\n" << help;
  const std::string bench_help = expect_success_exit(Ending::Help, {"bench", "--help"});
  EXPECT_NE(bench_help.find("--ring-axis"), std::string::npos) << bench_help;
  const std::string mult_help = expect_success_exit(Ending::Help, {"multiply", "-h"});
  EXPECT_NE(mult_help.find("--c-in"), std::string::npos) << mult_help;
}

TEST(CliBench, Defaults) {
  Cli cli;
  const BenchConfig& b = cli.parse({"bench"}).c.bench;
  EXPECT_EQ(b.m, 2048);
  EXPECT_EQ(b.n, 2048);
  EXPECT_EQ(b.k, 2048);
  EXPECT_EQ(b.dtype, "f64");
  EXPECT_EQ(b.algos, (Args{"auto", SHARDMM_HAVE_SCALAPACK ? "scalapack" : "cores"}));
  EXPECT_EQ(b.grid, "");
  EXPECT_EQ(b.nb, 64);
  EXPECT_EQ(b.layout_a + b.layout_b + b.layout_c, "");
  EXPECT_EQ(b.transa, Op::N);
  EXPECT_EQ(b.transb, Op::N);
  EXPECT_EQ(b.alpha, 1.0);
  EXPECT_EQ(b.beta, 0.0);
  EXPECT_EQ(b.reps, 5);
  EXPECT_EQ(b.warmup, 1);
  EXPECT_TRUE(b.check);
  EXPECT_EQ(b.json, "");
  EXPECT_EQ(b.panel, 0);
  EXPECT_EQ(b.ring_chunk + b.stationary_chunk, 0);
  EXPECT_EQ(b.strassen_step, "auto");
  EXPECT_EQ(b.ring_axis, "");
  EXPECT_FALSE(b.bidirectional);
  EXPECT_EQ(b.memory_limit, "");
  EXPECT_FALSE(b.progress);
  EXPECT_FALSE(b.quiet);
}

TEST(CliBench, EveryOption) {
  Cli cli;
  const BenchConfig& b = cli.parse({"bench",
                                    "--m",
                                    "10",
                                    "--n",
                                    "20",
                                    "--k",
                                    "30",
                                    "--dtype",
                                    "c64",
                                    "--algo",
                                    "summa,cannon,25d",
                                    "--grid",
                                    "2x2x2",
                                    "--nb",
                                    "16",
                                    "--layout-a",
                                    "A[I_X,J]",
                                    "--layout-b",
                                    "bc(8,8)",
                                    "--layout-c",
                                    "C[I,J_XY]",
                                    "--transa",
                                    "T",
                                    "--transb",
                                    "c",
                                    "--alpha",
                                    "0.5",
                                    "--beta",
                                    "-2",
                                    "--reps",
                                    "3",
                                    "--warmup",
                                    "0",
                                    "--no-check",
                                    "--json",
                                    "out.json",
                                    "--panel",
                                    "128",
                                    "--ring-axis",
                                    "y",
                                    "--bidirectional",
                                    "--wire",
                                    "bf16",
                                    "--wait",
                                    "sleep",
                                    "--memory-limit",
                                    "512M",
                                    "--progress",
                                    "--quiet"})
                             .c.bench;
  EXPECT_EQ(b.m, 10);
  EXPECT_EQ(b.n, 20);
  EXPECT_EQ(b.k, 30);
  EXPECT_EQ(b.dtype, "c64");
  EXPECT_EQ(b.algos, (Args{"summa", "cannon", "25d"}));
  EXPECT_EQ(b.grid, "2x2x2");
  EXPECT_EQ(b.nb, 16);
  EXPECT_EQ(b.layout_a, "A[I_X,J]");
  EXPECT_EQ(b.layout_b, "bc(8,8)");
  EXPECT_EQ(b.layout_c, "C[I,J_XY]");
  EXPECT_EQ(b.transa, Op::T);
  EXPECT_EQ(b.transb, Op::C);
  EXPECT_EQ(b.alpha, 0.5);
  EXPECT_EQ(b.beta, -2.0);
  EXPECT_EQ(b.reps, 3);
  EXPECT_EQ(b.warmup, 0);
  EXPECT_FALSE(b.check);
  EXPECT_EQ(b.json, "out.json");
  EXPECT_EQ(b.panel, 128);
  EXPECT_EQ(b.ring_axis, "y");
  EXPECT_TRUE(b.bidirectional);
  EXPECT_EQ(b.wire, "bf16");
  EXPECT_EQ(b.wait, "sleep");
  EXPECT_EQ(b.memory_limit, "512M");
  EXPECT_TRUE(b.progress);
  EXPECT_TRUE(b.quiet);
}

TEST(CliBench, SizeAlgoListAndCheckFlag) {
  const BenchConfig s = Cli().parse({"bench", "--size", "100"}).c.bench;
  EXPECT_EQ(s.m, 100);
  EXPECT_EQ(s.n, 100);
  EXPECT_EQ(s.k, 100);
  EXPECT_EQ(Cli().parse({"bench", "--algo", "ring"}).c.bench.algos, Args{"ring"});
  EXPECT_EQ(Cli().parse({"bench", "--algo", "local", "--algo", "summa,ring"}).c.bench.algos,
            (Args{"local", "summa", "ring"}));
  EXPECT_TRUE(Cli().parse({"bench", "--check"}).c.bench.check);
  EXPECT_FALSE(Cli().parse({"bench", "--no-check"}).c.bench.check);
}

// A dimension given explicitly wins over --size, wherever it appears on the line.
TEST(CliBench, ExplicitDimensionOverridesSize) {
  for (const Args& args :
       {Args{"bench", "--size", "100", "--k", "7"}, Args{"bench", "--k", "7", "--size", "100"}}) {
    const BenchConfig b = Cli().parse(args).c.bench;
    EXPECT_EQ(b.m, 100) << joined(args);
    EXPECT_EQ(b.n, 100) << joined(args);
    EXPECT_EQ(b.k, 7) << joined(args);
  }
}

TEST(CliBench, InvalidInput) {
  for (const Args& bad :
       {Args{"bench", "--frobnicate"}, Args{"bench", "--dtype", "f16"},
        Args{"bench", "--size", "-1"}, Args{"bench", "--m", "-5"}, Args{"bench", "--n", "x"},
        Args{"bench", "--k", "1.5"}, Args{"bench", "--nb", "0"}, Args{"bench", "--reps", "0"},
        Args{"bench", "--warmup", "-1"}, Args{"bench", "--transa", "X"},
        Args{"bench", "--transb", "NN"}, Args{"bench", "--alpha", "one"},
        Args{"bench", "--panel", "-64"}, Args{"bench", "--json"},
        Args{"bench", "stray_positional"}})
    expect_rejected(bad);
}

TEST(CliPlan, RequiredOptionsAndDefaults) {
  const PlanConfig p =
      Cli().parse({"plan", "--m", "100", "--n", "200", "--k", "300", "--ranks", "8"}).c.plan;
  EXPECT_EQ(p.m, 100);
  EXPECT_EQ(p.n, 200);
  EXPECT_EQ(p.k, 300);
  EXPECT_EQ(p.ranks, 8);
  EXPECT_EQ(p.dtype, "f64");
  EXPECT_EQ(p.memory_limit, "");
  EXPECT_EQ(p.profile, "");
  EXPECT_EQ(p.rows, 12);
  EXPECT_EQ(p.transa, Op::N);
  EXPECT_EQ(p.transb, Op::N);
  EXPECT_EQ(p.nb, 64);
  const Args full = {"plan", "--m", "1", "--n", "2", "--k", "3", "--ranks", "4"};
  for (std::size_t drop = 1; drop < full.size(); drop += 2) {  // each required option missing
    Args args = full;
    args.erase(args.begin() + static_cast<std::ptrdiff_t>(drop),
               args.begin() + static_cast<std::ptrdiff_t>(drop) + 2);
    expect_rejected(args);
  }
}

TEST(CliPlan, EveryOptionAndInvalidInput) {
  const Args base = {"plan", "--m", "1", "--n", "2", "--k", "3", "--ranks", "4"};
  Args all = base;
  all.insert(all.end(), {"--dtype", "c128", "--memory-limit", "2G", "--profile", "p.json", "--rows",
                         "3", "--grid", "1x4", "--nb", "256", "--transa", "T", "--transb", "c"});
  const PlanConfig p = Cli().parse(all).c.plan;
  EXPECT_EQ(p.grid, "1x4");
  EXPECT_EQ(p.nb, 256);
  EXPECT_EQ(p.transa, Op::T);
  EXPECT_EQ(p.transb, Op::C);
  EXPECT_EQ(p.dtype, "c128");
  EXPECT_EQ(p.memory_limit, "2G");
  EXPECT_EQ(p.profile, "p.json");
  EXPECT_EQ(p.rows, 3);
  for (const Args& extra :
       {Args{"--ranks", "0"}, Args{"--rows", "0"}, Args{"--dtype", "i32"}, Args{"--m", "-1"},
        Args{"--unknown"}, Args{"--transa", "X"}, Args{"--nb", "0"}}) {
    Args args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    expect_rejected(args);
  }
}

TEST(CliCalibrate, DefaultsAndOptions) {
  const CalibrateConfig d = Cli().parse({"calibrate"}).c.calibrate;
  EXPECT_EQ(d.output, "");
  EXPECT_EQ(d.reps, 20);
  EXPECT_EQ(d.read_probe, "64M");
  const CalibrateConfig s =
      Cli().parse({"calibrate", "-o", "prof.json", "--reps", "5", "--read-probe", "0"}).c.calibrate;
  EXPECT_EQ(s.output, "prof.json");
  EXPECT_EQ(s.reps, 5);
  EXPECT_EQ(s.read_probe, "0");
  expect_rejected({"calibrate", "--read-probe", "lots"});
  EXPECT_EQ(Cli().parse({"calibrate", "--output", "x.json"}).c.calibrate.output, "x.json");
  expect_rejected({"calibrate", "--reps", "0"});
  expect_rejected({"calibrate", "--size", "3"});
}

// --help shows the defaults (and what --c-in does to beta's).
TEST(CliApp, HelpShowsDefaults) {
  const std::string bench = expect_success_exit(Ending::Help, {"bench", "--help"});
  for (const char* shown :
       {"--m INT:NONNEGATIVE=2048", "--reps INT:POSITIVE=5", "=f64", "--nb INT:POSITIVE=64"})
    EXPECT_NE(bench.find(shown), std::string::npos) << shown << ":\n" << bench;
  const std::string mult = expect_success_exit(Ending::Help, {"multiply", "--help"});
  for (const char* shown : {"--algo TEXT=auto", "--alpha FLOAT=1", "0, or 1 with --c-in",
                            "--format TEXT:{npy,raw}=npy"})
    EXPECT_NE(mult.find(shown), std::string::npos) << shown << ":\n" << mult;
  const std::string plan = expect_success_exit(Ending::Help, {"plan", "--help"});
  EXPECT_NE(plan.find("--rows INT:POSITIVE=12"), std::string::npos) << plan;
}

TEST(ParseBytes, Valid) {
  EXPECT_EQ(parse_bytes("100"), 100);
  EXPECT_EQ(parse_bytes("100B"), 100);
  EXPECT_EQ(parse_bytes("4K"), 4096);
  EXPECT_EQ(parse_bytes("512M"), std::int64_t{512} << 20);
  EXPECT_EQ(parse_bytes("2G"), std::int64_t{2} << 30);
  EXPECT_EQ(parse_bytes("1.5K"), 1536);
  EXPECT_EQ(parse_bytes("64G"), std::int64_t{64} << 30);
}

// IEC spellings and the short ones are powers of 1024, SI spellings powers of 1000
// (docs/USAGE.md, "Byte sizes").
TEST(ParseBytes, SiAndIecSpellings) {
  const std::int64_t Ki = 1024, K = 1000;
  const std::pair<const char*, std::int64_t> cases[] = {{"4k", 4 * Ki},
                                                        {"4K", 4 * Ki},
                                                        {"4KiB", 4 * Ki},
                                                        {"4KB", 4 * K},
                                                        {"4kB", 4 * K},
                                                        {"4M", 4 * Ki * Ki},
                                                        {"4MiB", 4 * Ki * Ki},
                                                        {"4MB", 4 * K * K},
                                                        {"4G", 4 * Ki * Ki * Ki},
                                                        {"4GiB", 4 * Ki * Ki * Ki},
                                                        {"4GB", 4 * K * K * K},
                                                        {"2T", 2 * Ki * Ki * Ki * Ki},
                                                        {"2TiB", 2 * Ki * Ki * Ki * Ki},
                                                        {"2TB", 2 * K * K * K * K},
                                                        {"1.5MB", 1500000},
                                                        {"0.5GiB", 512 * Ki * Ki},
                                                        {"4096", 4096}};
  for (const auto& [text, bytes] : cases) EXPECT_EQ(parse_bytes(text), bytes) << text;
}

TEST(ParseBytes, InvalidThrows) {
  for (const char* bad :
       {"",     "M",   "abc", "12 M", "-5",   "-1G",   "0",      "0M",          "0.4",
        "512X", "4mb", "4Mb", "4MIB", "4Mi",  "4KiBs", "1.2.3K", ".",           "0x10",
        "+4M",  " 4M", "nan", "inf",  "-inf", "1e30G", "1e300",  "99999999999T"})
    EXPECT_THROW(parse_bytes(bad), InvalidArgument) << "'" << bad << "'";
}

// --memory-limit and SHARDMM_MEMORY_LIMIT read sizes alike (one parser).
TEST(ParseBytes, MemoryLimitEnvironment) {
  PlanRequest r;
  ASSERT_EQ(setenv("SHARDMM_MEMORY_LIMIT", "4MB", 1), 0);
  EXPECT_EQ(memory_limit(r), 4000000);
  ASSERT_EQ(setenv("SHARDMM_MEMORY_LIMIT", "4MiB", 1), 0);
  EXPECT_EQ(memory_limit(r), std::int64_t{4} << 20);
  ASSERT_EQ(setenv("SHARDMM_MEMORY_LIMIT", "4 parsecs", 1), 0);
  EXPECT_THROW(memory_limit(r), InvalidArgument);
  ASSERT_EQ(unsetenv("SHARDMM_MEMORY_LIMIT"), 0);
  EXPECT_EQ(memory_limit(r), 0);
}

}  // namespace
}  // namespace shardmm::cli
