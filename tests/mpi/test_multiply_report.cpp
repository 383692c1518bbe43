// What `shardmm multiply` tells, end to end on every rank (argv parsed by the launcher's
// parse(), then run_multiply, stdout and stderr captured): --progress as lines when stderr is
// not a terminal (here a file), in core and out of core; the in-core report's read, multiply
// and write times and every rank's peak memory, as the out-of-core one has; byte sizes in SI
// and IEC spellings. And gemm's label for a ring over all the ranks of a 2 x 2 mesh.
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "mpi/cli_test_util.hpp"
#include "mpi/mpi_test_util.hpp"
#include "mpi/npy_test_util.hpp"
#include "shardmm/shardmm.hpp"

namespace shardmm::testing {
namespace {

using namespace npy;
using Args = std::vector<std::string>;

// `shardmm multiply ARGS` (not quiet) -> its configuration.
cli::MultiplyConfig parse_loud(const Args& args) {
  Args line{"multiply"};
  line.insert(line.end(), args.begin(), args.end());
  const cli::Parsed parsed = cli::testing::parse_args(line);
  EXPECT_EQ(parsed.ending, cli::Ending::Run) << parsed.err << parsed.out;
  return parsed.commands.multiply;
}

struct Printed {
  std::string out, err;
};

// run_multiply on every rank with this rank's stdout and stderr captured (file descriptors
// redirected to files: not a terminal).
Printed run_captured(const cli::MultiplyConfig& cfg) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int rc = returns([&] { return cli::run_multiply(cfg); });
  (void)std::fflush(stdout);
  (void)std::fflush(stderr);
  Printed p{::testing::internal::GetCapturedStdout(), ::testing::internal::GetCapturedStderr()};
  EXPECT_EQ(rc, 0) << p.out << p.err;
  return p;
}

// A (m x k) and B (k x n), f64, Fortran order; returns the multiply arguments for C.
Args inputs(index_t m, index_t k, index_t n, const std::string& out) {
  put_file(file("a.npy"),
           make_npy_header(Dtype::F64, m, k, true) + data_bytes<double>(m, k, true, 1));
  put_file(file("b.npy"),
           make_npy_header(Dtype::F64, k, n, true) + data_bytes<double>(k, n, true, 2));
  return {file("a.npy"), file("b.npy"), "-o", file(out)};
}

int lines_containing(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A named algorithm runs on the layouts, in core: a progress line per stage.
TEST(MultiplyReport, InCoreProgressLinesTimesAndPeakMemory) {
  Args args = inputs(40, 30, 20, "c.npy");
  args.insert(args.end(), {"--progress", "--algo", "summa"});
  const Printed p = run_captured(parse_loud(args));
  if (world_rank() != 0) {
    EXPECT_EQ(p.err, "") << "progress is rank 0's";
    return;
  }
  EXPECT_EQ(p.err.find('\r'), std::string::npos) << p.err;
  for (const char* stage : {"multiply: reading ", "multiply: multiplying 40x20 x 30",
                            "multiply: writing ", "multiply: done"})
    EXPECT_EQ(lines_containing(p.err, std::string(stage)), 1) << stage << " in:\n" << p.err;
  EXPECT_EQ(p.err.back(), '\n');
  EXPECT_NE(p.out.find("wrote " + file("c.npy")), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("rank 0: read 0.0 MiB in "), std::string::npos) << p.out;
  EXPECT_NE(p.out.find(", multiplied in "), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("peak RSS per rank (MiB):"), std::string::npos) << p.out;
  const std::string rss = p.out.substr(p.out.find("peak RSS per rank (MiB):"));
  EXPECT_EQ(lines_containing(rss.substr(0, rss.find('\n')), "."), world_size()) << rss;
}

// The streamed path, out of core (a budget) and in core (Auto, no budget): progress lines
// with blocks, read and write rates and an ETA, and the split of the call's time.
TEST(MultiplyReport, StreamedProgressLinesInALog) {
  for (const bool budget : {true, false}) {
    Args args = inputs(64, 48, 32, "c_ooc.npy");
    args.emplace_back("--progress");
    if (budget) args.insert(args.end(), {"--memory-limit", "16KiB"});
    const Printed p = run_captured(parse_loud(args));
    if (world_rank() != 0) continue;
    EXPECT_EQ(p.err.find('\r'), std::string::npos) << p.err;
    const int lines = lines_containing(p.err, "streamed: ");
    EXPECT_GE(lines, 1) << p.err;                              // at least the last block
    EXPECT_LE(lines, 12) << p.err;                             // a line per tenth, not per block
    EXPECT_EQ(lines_containing(p.err, "\n"), lines) << p.err;  // each update a line of its own
    const std::string last = p.err.substr(p.err.rfind("streamed: "));
    for (const char* part : {" blocks, read ", " MB/s, written ", " MB/s (rank 0), ", ", ETA "})
      EXPECT_NE(last.find(part), std::string::npos) << part << " in " << last;
    const std::string count = last.substr(10, last.find(' ', 10) - 10);  // "N/N"
    EXPECT_EQ(count.substr(0, count.find('/')), count.substr(count.find('/') + 1)) << last;
    EXPECT_NE(p.out.find(budget ? "out of core" : "in core"), std::string::npos) << p.out;
    for (const char* part : {"= open ", " + read wait ", " + GEMM ", " + write wait ", " + sync ",
                             " + rename ", " + other "})
      EXPECT_NE(p.out.find(part), std::string::npos) << part << " in " << p.out;
  }
}

// --memory-limit reads SI and IEC spellings alike: 16KB (16000) and 16KiB (16384) both run the
// product out of core; a misspelt unit is a usage error naming the spellings.
TEST(MultiplyReport, MemoryLimitSpellings) {
  for (const char* limit : {"16KB", "16kB", "16KiB", "16k", "16384"}) {
    Args args = inputs(64, 48, 32, "c_limit.npy");
    args.insert(args.end(), {"--memory-limit", limit});
    const Printed p = run_captured(parse_loud(args));
    if (world_rank() == 0) {
      EXPECT_NE(p.out.find("out of core"), std::string::npos) << limit;
    }
  }
  const cli::Parsed bad = cli::testing::parse_args(
      {"multiply", "a.npy", "b.npy", "-o", "c.npy", "--memory-limit", "16KBs"});
  EXPECT_EQ(bad.ending, cli::Ending::Error);
  EXPECT_NE(bad.err.find("KiB"), std::string::npos) << bad.err;
}

// On a 2 x 2 mesh with operands split over both axes together (I_XY), Auto runs the ring over
// all four ranks arranged as a line: its label names that line by the mesh's axes together
// ("ring over xy (4)"), never "ring over x (4)" where x has 2 ranks.
TEST(MultiplyReport, RingOverAllRanksSaysSo) {
  if (world_size() != 4) GTEST_SKIP() << "a 2 x 2 mesh needs 4 ranks";
  const Mesh mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {2, 2}));
  const index_t m = 512, n = 512, k = 512;
  DistMatrix<double> A(mesh, m, k, "A[I_XY,K]"), B(mesh, k, n, "B[K,J_XY]"),
      C(mesh, m, n, "C[I,J_XY]");
  Options roomy;  // the ring's line copies the operands: above the lean cap
  roomy.memory_growth = -1;
  const GemmReport r = gemm_dry_run(Op::N, Op::N, A, B, C, roomy);
  EXPECT_EQ(r.algorithm, Algorithm::Ring) << r.grid << ": " << r.detail;
  EXPECT_EQ(r.grid.find("ring over x ("), std::string::npos) << r.grid;
  EXPECT_EQ(r.grid, "ring over xy (4)") << r.detail;
}

}  // namespace
}  // namespace shardmm::testing
