// bench --op for the PBLAS level-3 ops, end to end as main() runs it on every rank: the command
// line parsed, then shardmm's routine beside ScaLAPACK's on a small size. Rank 0's table must
// hold both rows, shardmm's with words and the check passed against ScaLAPACK's output, the
// memory line and the time ratio; the JSON records name the op. The lower bounds are checked
// against gemm's for the same shapes (symmetry and shared operands can only lower them).
#include <nlohmann/json.hpp>

#include <sstream>

#include "blas3_op.hpp"
#include "cli.hpp"
#include "mpi/cli_test_util.hpp"
#include "mpi/npy_test_util.hpp"
#include "shardmm/plan.hpp"

namespace shardmm::testing {
namespace {

using namespace npy;

// `shardmm bench ARGS` parsed by the launcher.
cli::BenchConfig parse_bench(const std::vector<std::string>& args) {
  std::vector<std::string> line{"bench"};
  line.insert(line.end(), args.begin(), args.end());
  const cli::Parsed parsed = cli::testing::parse_args(line);
  EXPECT_EQ(parsed.ending, cli::Ending::Run) << parsed.err << parsed.out;
  return parsed.commands.bench;
}

// The table row of contender `name` (its words split on blanks); empty when there is none.
std::vector<std::string> row_of(const std::string& out, const std::string& name) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (!w.empty() && w[0] == name && w.size() >= 16) return w;
  }
  return {};
}

struct OpCase {
  std::string op;
  std::vector<std::string> flags;
};

// One op at m = 40, n = 36, k = 24 (f64 and c128): both rows, checked.
void bench_op(const OpCase& c, const std::string& dtype) {
  std::vector<std::string> args{"--op",   c.op,   "--m",     "40",     "--n",   "36",       "--k",
                                "24",     "--nb", "8",       "--reps", "2",     "--warmup", "1",
                                "--beta", "0.5",  "--dtype", dtype,    "--json"};
  const std::string json = file("bench_" + c.op + "_" + dtype + ".json");
  args.push_back(json);
  args.insert(args.end(), c.flags.begin(), c.flags.end());
  const cli::BenchConfig cfg = parse_bench(args);
  ASSERT_EQ(cfg.op, c.op);
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(returns([&cfg] { return cli::run_bench(cfg); }), 0) << c.op << " " << dtype;
  const std::string out = ::testing::internal::GetCapturedStdout();
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) {
    EXPECT_EQ(out, "");
    return;
  }
  const std::string what = c.op + " " + dtype + ":\n" + out;
  EXPECT_NE(out.find("op=" + c.op), std::string::npos) << what;
  const auto ours = row_of(out, "auto"), theirs = row_of(out, "scalapack");
  ASSERT_FALSE(ours.empty()) << what;
  ASSERT_FALSE(theirs.empty()) << what;
  EXPECT_EQ(ours.back(), "PASS") << what;      // shardmm's output within the bound of ScaLAPACK's
  EXPECT_GT(std::stod(ours[6]), 0.0) << what;  // words_max: 2 ranks exchange something
  EXPECT_EQ(theirs[6], "-") << what;           // ScaLAPACK's traffic is not counted
  EXPECT_NE(out.find("memory: the calls added at most"), std::string::npos) << what;
  EXPECT_NE(out.find("time ratio auto / scalapack = "), std::string::npos) << what;
  std::istringstream records(get_file(json));
  int n = 0;
  for (std::string line; std::getline(records, line); ++n) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j.value("op", "").substr(0, c.op.size()), c.op) << line;
    EXPECT_EQ(j.value("times_s", nlohmann::json::array()).size(), 2u) << line;
  }
  EXPECT_EQ(n, 2) << what;
}

#if SHARDMM_HAVE_SCALAPACK
TEST(BenchBlas3, EveryOpBesideScaLapack) {
  const std::vector<OpCase> cases = {{"symm", {"--side", "R", "--uplo", "U"}},
                                     {"hemm", {"--side", "L", "--uplo", "L"}},
                                     {"syrk", {"--uplo", "U", "--transa", "T"}},
                                     {"herk", {"--uplo", "L"}},
                                     {"syr2k", {"--uplo", "L"}},
                                     {"her2k", {"--uplo", "U", "--transa", "C"}},
                                     {"trmm", {"--side", "R", "--uplo", "U", "--transa", "T"}},
                                     {"trsm", {"--side", "L", "--uplo", "L", "--diag", "U"}},
                                     {"tran", {"--transa", "C"}},
                                     {"geadd", {"--transa", "T"}}};
  for (const auto& c : cases)
    for (const char* dtype : {"f64", "c128"}) bench_op(c, dtype);
}
#endif

TEST(BenchBlas3, BadRequestsSameErrorEverywhere) {
  cli::BenchConfig cfg = parse_bench({"--op", "syrk", "--size", "16", "--algo", "summa"});
  cfg.quiet = true;
  EXPECT_NE(returns([&cfg] { return cli::run_bench(cfg); }), 0);  // the row says why
  cfg.algos = {"auto"}, cfg.layout_a = "bc(4,4)";
  expect_same_error_everywhere<InvalidArgument>([&cfg] { cli::run_bench(cfg); }, "--layout-a");
  EXPECT_NE(cli::testing::parse_args({"bench", "--op", "gemv"}).ending, cli::Ending::Run);
}

// Symmetry and an operand used twice can only lower the bound of the gemm of the same shape;
// the additions have none; large P gives a positive bound.
TEST(BenchBlas3, LowerBoundsBelowGemmsOfTheSameShape) {
  const index_t m = 4096, n = 4096, k = 1024;
  for (int P : {2, 4, 64, 4096}) {
    const auto bound = [&](const std::string& op) {
      const cli::Blas3Op o{op, 'L', 'L', 'N', 'N'};
      return cli::blas3_lower_bound(o, cli::blas3_shape(o, m, n, k), P);
    };
    EXPECT_LE(bound("symm"), lower_bound_words(m, n, m, P)) << P;
    EXPECT_LE(bound("syrk"), lower_bound_words(n, n, k, P)) << P;
    EXPECT_LE(bound("trsm"), lower_bound_words(m, n, m, P)) << P;
    EXPECT_EQ(bound("geadd"), 0.0);
    EXPECT_EQ(bound("tran"), 0.0);
    if (P >= 64) {
      for (const char* op : {"symm", "syrk", "syr2k", "trmm"}) EXPECT_GT(bound(op), 0.0) << op;
    }
  }
}

}  // namespace
}  // namespace shardmm::testing
