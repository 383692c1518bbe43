// The launcher's `multiply` command line without MPI: positionals, defaults, every option, the
// algorithm options it shares with bench, and invalid input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli.hpp"
#include "cli_parse_util.hpp"
#include "shardmm/error.hpp"

namespace shardmm::cli {
namespace {

using testing::Args;
using testing::Cli;
using testing::expect_rejected;
using testing::expect_success_exit;

TEST(CliMultiply, PositionalsAndDefaults) {
  Cli cli;
  const MultiplyConfig& m = cli.parse({"multiply", "a.npy", "b.npy", "-o", "c.npy"}).c.multiply;
  EXPECT_EQ(cli.parsed.command, "multiply");
  EXPECT_EQ(m.a, "a.npy");
  EXPECT_EQ(m.b, "b.npy");
  EXPECT_EQ(m.output, "c.npy");
  EXPECT_EQ(m.c_in, "");
  EXPECT_EQ(m.transa, Op::N);
  EXPECT_EQ(m.transb, Op::N);
  EXPECT_EQ(m.alpha, 1.0);
  EXPECT_EQ(m.beta, 0.0);
  EXPECT_EQ(m.algo, "auto");
  EXPECT_EQ(m.layout_a + m.layout_b + m.layout_c, "");
  EXPECT_EQ(m.nb, 64);
  EXPECT_EQ(m.format, "npy");
  EXPECT_EQ(m.shape_a + m.shape_b + m.shape_c, "");
  EXPECT_EQ(m.dtype, "f64");
  EXPECT_EQ(m.order, "F");
  EXPECT_TRUE(m.fortran_out);
  EXPECT_FALSE(m.quiet);
  EXPECT_EQ(Cli().parse({"multiply", "-o", "x", "p", "q"}).c.multiply.b, "q");
  EXPECT_EQ(Cli().parse({"multiply", "p", "q", "--output", "y"}).c.multiply.output, "y");
}

TEST(CliMultiply, EveryOption) {
  const MultiplyConfig m =
      Cli()
          .parse({"multiply",   "a.bin",      "b.bin",   "-o",         "c.bin",     "--c-in",
                  "c0.bin",     "--transa",   "t",       "--transb",   "C",         "--alpha",
                  "2.5",        "--beta",     "-1",      "--algo",     "summa",     "--layout-a",
                  "A[I_X,J_Y]", "--layout-b", "bc(2,3)", "--layout-c", "C[I_XY,J]", "--nb",
                  "8",          "--format",   "raw",     "--shape-a",  "3x4",       "--shape-b",
                  "5x4",        "--shape-c",  "3x5",     "--dtype",    "c128",      "--order",
                  "C",          "--quiet"})
          .c.multiply;
  EXPECT_EQ(m.c_in, "c0.bin");
  EXPECT_EQ(m.transa, Op::T);
  EXPECT_EQ(m.transb, Op::C);
  EXPECT_EQ(m.alpha, 2.5);
  EXPECT_EQ(m.beta, -1.0);
  EXPECT_EQ(m.algo, "summa");
  EXPECT_EQ(m.layout_a, "A[I_X,J_Y]");
  EXPECT_EQ(m.layout_b, "bc(2,3)");
  EXPECT_EQ(m.layout_c, "C[I_XY,J]");
  EXPECT_EQ(m.nb, 8);
  EXPECT_EQ(m.format, "raw");
  EXPECT_EQ(m.shape_a, "3x4");
  EXPECT_EQ(m.shape_b, "5x4");
  EXPECT_EQ(m.shape_c, "3x5");
  EXPECT_EQ(m.dtype, "c128");
  EXPECT_EQ(m.order, "C");
  EXPECT_TRUE(m.quiet);
}

// --c-order writes row-major output (fortran_out false), --fortran-order column-major; the
// last one given wins.
TEST(CliMultiply, OutputOrderFlags) {
  const Args base = {"multiply", "a.npy", "b.npy", "-o", "c.npy"};
  auto fortran_out = [&base](const Args& flags) {
    Args args = base;
    args.insert(args.end(), flags.begin(), flags.end());
    return Cli().parse(args).c.multiply.fortran_out;
  };
  EXPECT_FALSE(fortran_out({"--c-order"}));
  EXPECT_TRUE(fortran_out({"--fortran-order"}));
  EXPECT_TRUE(fortran_out({"--c-order", "--fortran-order"}));
  EXPECT_FALSE(fortran_out({"--fortran-order", "--c-order"}));
}

TEST(CliMultiply, InvalidInput) {
  for (const Args& bad :
       {Args{"multiply", "a.npy", "b.npy"}, Args{"multiply", "a.npy", "-o", "c"},
        Args{"multiply", "-o", "c.npy"}, Args{"multiply", "a", "b", "c", "-o", "d"},
        Args{"multiply", "a", "b", "-o"}})
    expect_rejected(bad);
  const Args base = {"multiply", "a.npy", "b.npy", "-o", "c.npy"};
  for (const Args& extra :
       {Args{"--dtype", "f16"}, Args{"--dtype", "<f8"}, Args{"--format", "hdf5"},
        Args{"--order", "R"}, Args{"--transa", "H"}, Args{"--transb", ""}, Args{"--nb", "0"},
        Args{"--nb", "-4"}, Args{"--alpha", "1+i"}, Args{"--frobnicate"}}) {
    Args args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    expect_rejected(args);
  }
}

// multiply takes bench's algorithm options, declared once: the same help line in both.
TEST(CliMultiply, AlgorithmOptionsAsBench) {
  const MultiplyConfig d = Cli().parse({"multiply", "a.npy", "b.npy", "-o", "c.npy"}).c.multiply;
  EXPECT_EQ(d.grid + d.ring_axis + d.memory_limit + d.stationary, "auto");
  EXPECT_EQ(d.panel + d.blas_threads + (d.bidirectional ? 1 : 0), 0);
  EXPECT_EQ(d.ring_chunk + d.stationary_chunk, 0);
  EXPECT_EQ(d.strassen_step, "auto");
  const MultiplyConfig m = Cli()
                               .parse({"multiply",
                                       "a.npy",
                                       "b.npy",
                                       "-o",
                                       "c.npy",
                                       "--algo",
                                       "ring",
                                       "--ring-axis",
                                       "y",
                                       "--bidirectional",
                                       "--stationary",
                                       "B",
                                       "--panel",
                                       "96",
                                       "--ring-chunk",
                                       "40",
                                       "--stationary-chunk",
                                       "24",
                                       "--strassen-step",
                                       "depth-first",
                                       "--grid",
                                       "2x2x2",
                                       "--memory-limit",
                                       "1G",
                                       "--blas-threads",
                                       "2"})
                               .c.multiply;
  EXPECT_EQ(m.algo, "ring");
  EXPECT_EQ(m.ring_axis, "y");
  EXPECT_TRUE(m.bidirectional);
  EXPECT_EQ(m.stationary, "B");
  EXPECT_EQ(m.panel, 96);
  EXPECT_EQ(m.ring_chunk, 40);
  EXPECT_EQ(m.stationary_chunk, 24);
  EXPECT_EQ(m.strassen_step, "depth-first");
  EXPECT_EQ(m.grid, "2x2x2");
  EXPECT_EQ(m.memory_limit, "1G");
  EXPECT_EQ(m.blas_threads, 2);
  const std::string bench = expect_success_exit(Ending::Help, {"bench", "--help"});
  const std::string mult = expect_success_exit(Ending::Help, {"multiply", "--help"});
  auto line_of = [](const std::string& help, const std::string& option) {
    const std::size_t at = help.find("  " + option);
    return at == std::string::npos ? std::string("missing")
                                   : help.substr(at, help.find("\n  -", at + 1) - at);
  };
  for (const char* option :
       {"--grid", "--panel", "--ring-chunk", "--stationary-chunk", "--strassen-step",
        "--stationary", "--ring-axis", "--bidirectional", "--wire", "--wait", "--memory-limit",
        "--blas-threads", "--transa", "--nb", "--layout-a"}) {
    EXPECT_NE(line_of(mult, option), "missing") << option << ":\n" << mult;
    EXPECT_EQ(line_of(mult, option), line_of(bench, option)) << option;
  }
  for (const Args& extra :
       {Args{"--stationary", "D"}, Args{"--panel", "-1"}, Args{"--ring-chunk", "-3"},
        Args{"--stationary-chunk", "-1"}, Args{"--strassen-step", "7"},
        Args{"--strassen-step", "sideways"}, Args{"--blas-threads", "-2"}, Args{"--wire", "f8"},
        Args{"--wait", "doze"}}) {
    Args args = {"multiply", "a.npy", "b.npy", "-o", "c.npy"};
    args.insert(args.end(), extra.begin(), extra.end());
    expect_rejected(args);
  }
}

// beta_given says whether --beta was given: without it beta is 1 when --c-in is (run_multiply).
TEST(CliMultiply, BetaGiven) {
  EXPECT_FALSE(
      Cli().parse({"multiply", "a", "b", "-o", "c", "--c-in", "c0"}).c.multiply.beta_given);
  const MultiplyConfig m =
      Cli().parse({"multiply", "a", "b", "-o", "c", "--beta", "0.5"}).c.multiply;
  EXPECT_TRUE(m.beta_given);
  EXPECT_EQ(m.beta, 0.5);
}

}  // namespace
}  // namespace shardmm::cli
