// What a new user trips on, end to end as main() runs the launcher on every rank:
// multiply checks its output's destination before any work (nothing written, the same error
// everywhere), takes bench's algorithm options, follows numpy's matmul for 1-D .npy operands,
// defaults beta to 1 with --c-in; bench reports a failing contender in its row and exits 1.
#include <unistd.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "agree.hpp"
#include "cli.hpp"
#include "mpi/cli_test_util.hpp"
#include "mpi/npy_test_util.hpp"

namespace shardmm::testing {
namespace {

using namespace npy;
using Args = std::vector<std::string>;

// run_multiply's exit code on `args`; an exception is a failure (and -1).
int multiply(const Args& args) {
  const cli::MultiplyConfig cfg = parse_multiply(args);
  try {
    return cli::run_multiply(cfg);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw " << e.what();
    return -1;
  }
}

// `multiply ARGS` throws E (with `part` in its message) on every rank and writes nothing.
template <class E>
void expect_refused(const Args& args, const std::string& part) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto before = snapshot();
  std::string line;
  for (const auto& a : args) line += " " + a;
  SCOPED_TRACE("multiply" + line);
  const cli::MultiplyConfig cfg = parse_multiply(args);
  expect_same_error_everywhere<E>([&cfg] { cli::run_multiply(cfg); }, part);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_TRUE(snapshot() == before) << "files changed";
}

std::string matrix_npy(const std::string& name, index_t m, index_t n, int seed) {
  put_file(file(name),
           make_npy_header(Dtype::F64, m, n, true) + data_bytes<double>(m, n, true, seed));
  return file(name);
}
// A 1-D .npy (shape (n,)) holding entry(i, 0, seed), or a 0-d one (shape ()) when n < 0.
std::string vector_npy(const std::string& name, index_t n, int seed) {
  const std::string shape = n < 0 ? "()" : "(" + std::to_string(n) + ",)";
  put_file(file(name), header("<f8", false, shape) +
                           data_bytes<double>(std::max<index_t>(n, 1), 1, false, seed));
  return file(name);
}

// Rank 0: the output's header shape text and its elements in file order.
std::pair<std::string, std::vector<double>> read_result(const std::string& path) {
  const std::string bytes = get_file(path);
  if (world_rank() != 0) return {};
  const NpyHeader h = parse_npy_header(bytes);
  const std::string head = bytes.substr(0, static_cast<std::size_t>(h.data_offset));
  const std::size_t at = head.find("'shape': ");
  std::vector<double> v((bytes.size() - static_cast<std::size_t>(h.data_offset)) / sizeof(double));
  std::memcpy(v.data(), bytes.data() + h.data_offset, v.size() * sizeof(double));
  return {head.substr(at + 9, head.find(')', at) - at - 8), v};
}

// (op(X) entry(., ., sx)) times (op(Y) entry(., ., sy)) + beta entry(., ., 3), column-major.
std::vector<double> reference(index_t m, index_t n, index_t k, bool tx, bool ty, int sx, int sy,
                              double beta) {
  std::vector<double> c(static_cast<std::size_t>(m * n));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      double s = beta * entry<double>(i, j, 3);
      for (index_t l = 0; l < k; ++l)
        s += (tx ? entry<double>(l, i, sx) : entry<double>(i, l, sx)) *
             (ty ? entry<double>(j, l, sy) : entry<double>(l, j, sy));
      c[static_cast<std::size_t>(i + j * m)] = s;
    }
  return c;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what) {
  if (world_rank() != 0) return;
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-12) << what << " element " << i;
}

// Rank 0: the output has numpy shape `shape` and elements `want`.
void expect_result(const std::string& out, const std::string& shape,
                   const std::vector<double>& want, const std::string& what) {
  if (world_rank() != 0) return;
  const auto [got_shape, got] = read_result(out);
  EXPECT_EQ(got_shape, shape) << what;
  expect_near(got, want, what);
}

// ------------------------------------------------------------------ destination first

TEST(MultiplyDestination, CheckedBeforeAnyWork) {
  const std::string a = matrix_npy("da.npy", 4, 3, 1), b = matrix_npy("db.npy", 3, 5, 2);
  const std::string missing = file("missing/dir");
  expect_refused<IoError>(
      {a, b, "-o", missing + "/C.npy"},
      "output '" + missing + "/C.npy': directory '" + missing + "' does not exist");
  // Before the inputs too: with a missing input the error is still the output's.
  expect_refused<IoError>({file("no_input.npy"), b, "-o", missing + "/C.npy"}, "does not exist");
  expect_refused<IoError>({a, b, "-o", g_dir}, "is a directory");
  expect_refused<IoError>({a, b, "-o", a + "/C.npy"}, "is not a directory");
  expect_refused<IoError>({a, b, "-o", "/dev/null"}, "not a regular file");
}

TEST(MultiplyDestination, NotAnInputThroughALink) {
  const std::string a = matrix_npy("la.npy", 4, 3, 1), b = matrix_npy("lb.npy", 3, 5, 2);
  const std::string c0 = matrix_npy("lc.npy", 4, 5, 3);
  if (world_rank() == 0) {
    fs::create_hard_link(b, file("hard.npy"));
    fs::create_symlink(c0, file("soft.npy"));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_refused<InvalidArgument>({a, b, "-o", a}, "is also an input");
  expect_refused<InvalidArgument>({a, b, "-o", file("hard.npy")}, "is also an input ('" + b + "')");
  expect_refused<InvalidArgument>({a, b, "--c-in", c0, "-o", file("soft.npy")},
                                  "is also an input ('" + c0 + "')");
}

TEST(MultiplyDestination, UnwritableDirectory) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes anywhere";
  const std::string a = matrix_npy("ua.npy", 4, 3, 1), b = matrix_npy("ub.npy", 3, 5, 2),
                    ro = file("ro");
  if (world_rank() == 0)
    fs::create_directory(ro), fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  expect_refused<IoError>({a, b, "-o", ro + "/C.npy"}, "directory '" + ro + "' is not writable");
  if (world_rank() == 0) fs::permissions(ro, fs::perms::owner_all);
}

// ------------------------------------------------------------- misleading options

TEST(MultiplyOptions, CInWithoutBetaAddsC0) {
  const std::string a = matrix_npy("ca.npy", 4, 3, 1), b = matrix_npy("cb.npy", 3, 5, 2);
  const std::string c0 = matrix_npy("cc.npy", 4, 5, 3), out = file("cout.npy");
  ASSERT_EQ(multiply({a, b, "--c-in", c0, "-o", out}), 0);
  expect_near(read_result(out).second, reference(4, 5, 3, false, false, 1, 2, 1.0),
              "--c-in without --beta");
  ASSERT_EQ(multiply({a, b, "--c-in", c0, "--beta", "0.5", "-o", out}), 0);
  expect_near(read_result(out).second, reference(4, 5, 3, false, false, 1, 2, 0.5), "--beta 0.5");
  expect_refused<InvalidArgument>({a, b, "--beta", "2", "-o", out}, "--beta needs --c-in");
}

TEST(MultiplyOptions, RawNeedsShapesAndInnerDimensionsAreNamed) {
  put_file(file("ra.bin"), data_bytes<double>(4, 3, true));
  const std::string a = file("ra.bin"), out = file("rout.bin");
  expect_refused<InvalidArgument>({a, a, "--format", "raw", "-o", out},
                                  "--format raw needs --shape-a RxC");
  expect_refused<InvalidArgument>({a, a, "--format", "raw", "--shape-a", "4x3", "-o", out},
                                  "--format raw needs --shape-b RxC");
  expect_refused<InvalidArgument>(
      {a, a, "--format", "raw", "--shape-a", "4x3", "--shape-b", "3x4", "--c-in", a, "-o", out},
      "--format raw needs --shape-c RxC");
  const std::string m = matrix_npy("ia.npy", 4, 3, 1), n = matrix_npy("ib.npy", 4, 5, 2);
  expect_refused<DimensionMismatch>({m, n, "-o", out}, "inner dimensions differ: op(A) is 4x3");
}

// Raw inputs after another format's header (--offset-a/-b/-c bytes skipped): in core and
// streamed with each reader; an offset given for .npy inputs is refused.
TEST(MultiplyOptions, RawOffsetsSkipAHeader) {
  const std::string a = file("fa.raw"), b = file("fb.raw"), c0 = file("fc.raw");
  const std::string out = file("fout.raw");
  put_file(a, std::string(100, 'h') + data_bytes<double>(13, 10, true, 1));
  put_file(b, std::string(8, 'h') + data_bytes<double>(10, 9, true, 2));
  put_file(c0, std::string(24, 'h') + data_bytes<double>(13, 9, true, 3));
  const Args base = {
      a,           b,       "-o",         out,    "--format",   "raw", "--order",    "F",
      "--shape-a", "13x10", "--shape-b",  "10x9", "--c-in",     c0,    "--shape-c",  "13x9",
      "--beta",    "0.5",   "--offset-a", "100",  "--offset-b", "8",   "--offset-c", "24"};
  for (const Args& extra : {Args{}, Args{"--memory-limit", "6K", "--out-of-core", "--io", "mpiio"},
                            Args{"--memory-limit", "6K", "--out-of-core", "--io", "mmap"}}) {
    Args args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_EQ(multiply(args), 0);
    const std::string bytes = get_file(out);
    std::vector<double> got(bytes.size() / sizeof(double));  // empty off rank 0
    if (!got.empty()) std::memcpy(got.data(), bytes.data(), got.size() * sizeof(double));
    std::string line;
    for (const auto& e : extra) line += " " + e;
    expect_near(got, reference(13, 9, 10, false, false, 1, 2, 0.5), "raw offsets" + line);
  }
  const std::string m = matrix_npy("na.npy", 4, 3, 1), n = matrix_npy("nb.npy", 3, 5, 2);
  expect_refused<InvalidArgument>({m, n, "-o", file("none.npy"), "--offset-b", "8"},
                                  "--offset-b applies to --format raw");
}

// bench's algorithm options reach multiply's gemm: each gives the product; a memory limit
// too small for any plan fails before anything is written, and so do the old spellings of
// the ring's chunk (--panel) and Strassen's step (--grid PxQx7), naming the new options.
TEST(MultiplyOptions, AlgorithmOptionsAsBench) {
  const std::string a = matrix_npy("oa.npy", 13, 10, 1), b = matrix_npy("ob.npy", 10, 9, 2),
                    out = file("oout.npy");
  const std::string P = std::to_string(world_size());
  for (const Args& extra :
       {Args{"--algo", "ring"}, Args{"--algo", "ring", "--ring-axis", "x", "--bidirectional"},
        Args{"--algo", "summa", "--stationary", "B", "--panel", "3"},
        Args{"--algo", "summa", "--stationary", "A", "--stationary-chunk", "2"},
        Args{"--algo", "ring", "--ring-chunk", "3"},
        Args{"--algo", "strassen", "--strassen-step", "depth-first"},
        Args{"--algo", "summa", "--grid", "1x" + P, "--blas-threads", "1"},
        Args{"--algo", "25d", "--grid", "1x1x" + P}}) {
    Args args = {a, b, "-o", out};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_EQ(multiply(args), 0);
    std::string line;
    for (const auto& e : extra) line += " " + e;
    expect_near(read_result(out).second, reference(13, 9, 10, false, false, 1, 2, 0), line);
  }
  expect_refused<OutOfMemory>(
      {a, b, "-o", file("none.npy"), "--algo", "summa", "--memory-limit", "1"}, "memory limit");
  expect_refused<InvalidArgument>(
      {a, b, "-o", file("none.npy"), "--algo", "ring", "--ring-axis", "q"}, "no axis 'q'");
  expect_refused<InvalidArgument>({a, b, "-o", file("none.npy"), "--algo", "ring", "--panel", "3"},
                                  "--ring-chunk");
  expect_refused<InvalidArgument>(
      {a, b, "-o", file("none.npy"), "--algo", "strassen", "--grid", "1x1x" + P},
      "--strassen-step");
}

// ------------------------------------------------------------------ numpy's 1-D rules

TEST(MultiplyNumpy, VectorOperands) {
  const std::string A = matrix_npy("na.npy", 4, 3, 1), B = matrix_npy("nb.npy", 3, 5, 2),
                    out = file("nout.npy");
  const std::string v3 = vector_npy("nv3.npy", 3, 2), u4 = vector_npy("nu4.npy", 4, 1),
                    u3 = vector_npy("nu3.npy", 3, 1);
  ASSERT_EQ(multiply({A, v3, "-o", out}), 0);  // (4, 3) @ (3,) -> (4,)
  expect_result(out, "(4,)", reference(4, 1, 3, false, false, 1, 2, 0), "A @ v");
  ASSERT_EQ(multiply({u3, B, "-o", out}), 0);  // (3,) @ (3, 5) -> (5,)
  expect_result(out, "(5,)", reference(1, 5, 3, true, false, 1, 2, 0), "u @ B");
  ASSERT_EQ(multiply({u4, A, "--transb", "N", "-o", out}), 0);  // (4,) @ (4, 3) -> (3,)
  expect_result(out, "(3,)", reference(1, 3, 4, true, false, 1, 1, 0), "u @ A");
  ASSERT_EQ(multiply({u3, v3, "-o", out}), 0);  // (3,) @ (3,) -> ()
  expect_result(out, "()", reference(1, 1, 3, true, false, 1, 2, 0), "u @ v");
  const std::string c4 = vector_npy("nc4.npy", 4, 3);  // entry(i, 0, 3): C0 of reference()
  ASSERT_EQ(multiply({A, v3, "--c-in", c4, "-o", out}), 0);
  expect_near(read_result(out).second, reference(4, 1, 3, false, false, 1, 2, 1), "A @ v + c");
  EXPECT_EQ(leftover_temps(), 0);
}

TEST(MultiplyNumpy, VectorRefusals) {
  const std::string A = matrix_npy("ea.npy", 4, 3, 1), v3 = vector_npy("ev3.npy", 3, 2),
                    out = file("eout.npy");
  const std::string s = vector_npy("es.npy", -1, 1), v4 = vector_npy("ev4.npy", 4, 2);
  expect_refused<InvalidArgument>({v3, A, "--transa", "T", "-o", out},
                                  "--transa applies to 2-D operands only");
  expect_refused<InvalidArgument>({s, v3, "-o", out}, "A has shape ()");
  expect_refused<DimensionMismatch>({A, v4, "-o", out}, "inner dimensions differ: op(A) is 4x3");
  expect_refused<DimensionMismatch>({A, v3, "--c-in", A, "-o", out},
                                    "--c-in has shape (4, 3) but the product has shape (4,)");
}

// ---------------------------------------------------------------- bench's failures

// The agreement the launcher uses: one rank's failure is every rank's, with its message.
TEST(LauncherAgreement, OneRanksFailureEverywhere) {
  const int last = world_size() - 1;
  const auto e = cli::failure_of(MPI_COMM_WORLD, [last] {
    if (world_rank() == last) throw IoError("rank " + std::to_string(last) + " failed");
  });
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, "rank " + std::to_string(last) + " failed");
  EXPECT_FALSE(cli::failure_of(MPI_COMM_WORLD, [] {}).has_value());
}

TEST(BenchFailures, AFailingContenderReportsInItsRow) {
  cli::BenchConfig cfg;
  cfg.m = cfg.n = cfg.k = 32, cfg.nb = 8, cfg.reps = 1, cfg.warmup = 0,
  cfg.json = file("fail.json");
  cfg.algos = {"summa", "ring", "local"}, cfg.ring_axis = "q";  // ring alone uses the axis
  ::testing::internal::CaptureStdout();
  int rc = -1;
  try {
    rc = cli::run_bench(cfg);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw " << e.what();
  }
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 1);
  if (world_rank() != 0) return;
  EXPECT_NE(printed.find("ring       FAILED: mesh"), std::string::npos) << printed;
  std::istringstream in(get_file(cfg.json));
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 3U);
  EXPECT_NE(rows[1].value("error", "").find("no axis 'q'"), std::string::npos) << rows[1].dump();
  for (int i : {0, 2}) {
    EXPECT_FALSE(rows[i].contains("error")) << rows[i].dump();
    EXPECT_LE(rows[i].value("probe_error_eps", 1e9), 100.0) << rows[i].dump();
  }
}

// --bare prints one line (the failures in it) and exits 1 when a contender failed.
TEST(BenchFailures, BarePrintsOneLine) {
  cli::BenchConfig cfg;
  cfg.m = cfg.n = cfg.k = 16, cfg.nb = 8, cfg.reps = 2, cfg.bare = true,
  cfg.algos = {"summa", "local"};
  for (const bool fail : {false, true}) {
    if (fail) cfg.algos.emplace_back("ring"), cfg.ring_axis = "q";
    ::testing::internal::CaptureStdout();
    int rc = -1;
    try {
      rc = cli::run_bench(cfg);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw " << e.what();
    }
    const std::string printed = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(rc, fail ? 1 : 0);
    if (world_rank() != 0) continue;
    EXPECT_EQ(std::count(printed.begin(), printed.end(), '\n'), 1) << printed;
    EXPECT_NE(printed.find("--bare: 2 call(s) each"), std::string::npos) << printed;
    EXPECT_EQ(printed.find("FAILED") != std::string::npos, fail) << printed;
  }
}

}  // namespace
}  // namespace shardmm::testing
