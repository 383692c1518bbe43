// shardmm launcher: `mpirun -n P shardmm <command>`.
// Exit codes: 0 success; 1 error (bad input, I/O, MPI); 2 usage error; 3 a --check failed.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <sstream>

#include "bench.hpp"
#include "commands.hpp"
#include "shardmm/shardmm.hpp"

namespace {

using shardmm::cli::BenchConfig;

void add_bench(CLI::App& app, BenchConfig& c) {
  auto* b = app.add_subcommand("bench", "time shardmm (and ScaLAPACK) on generated operands");
  b->add_option("--m", c.m, "rows of C")->check(CLI::NonNegativeNumber);
  b->add_option("--n", c.n, "columns of C")->check(CLI::NonNegativeNumber);
  b->add_option("--k", c.k, "inner dimension")->check(CLI::NonNegativeNumber);
  b->add_option_function<shardmm::index_t>("--size", [&c](shardmm::index_t s) { c.m = c.n = c.k = s; },
                                           "m = n = k")->check(CLI::NonNegativeNumber);
  b->add_option("--dtype", c.dtype, "f32|f64|c64|c128")->check(CLI::IsMember({"f32", "f64", "c64", "c128"}));
  b->add_option("--algo", c.algos, "comma list of auto|local|summa|cannon|ring|sharded|25d|scalapack")
      ->delimiter(',');
  b->add_option("--grid", c.grid, "process grid PxQ, or PxQxC for --algo 25d (default near-square)");
  b->add_option("--nb", c.nb, "block size of the default bc(nb,nb) input layouts")->check(CLI::PositiveNumber);
  b->add_option("--layout-a", c.layout_a, "layout of A, e.g. A[I_X,J] or bc(64,64)");
  b->add_option("--layout-b", c.layout_b, "layout of B");
  b->add_option("--layout-c", c.layout_c, "layout of C");
  b->add_option("--transa", c.transa, "N|T|C")->check(CLI::IsMember({"N", "T", "C", "n", "t", "c"}));
  b->add_option("--transb", c.transb, "N|T|C")->check(CLI::IsMember({"N", "T", "C", "n", "t", "c"}));
  b->add_option("--alpha", c.alpha, "alpha (real)");
  b->add_option("--beta", c.beta, "beta (real)");
  b->add_option("--reps", c.reps, "timed repetitions")->check(CLI::PositiveNumber);
  b->add_option("--warmup", c.warmup, "untimed repetitions first")->check(CLI::NonNegativeNumber);
  b->add_flag("--check,!--no-check", c.check, "verify with a random-vector probe (default on)");
  b->add_option("--json", c.json, "append one JSON record per algorithm to FILE");
  b->add_option("--panel", c.panel, "SUMMA panel width")->check(CLI::NonNegativeNumber);
  b->add_option("--ring-axis", c.ring_axis, "mesh axis of the ring algorithm");
  b->add_flag("--bidirectional", c.bidirectional, "ring: send halves both ways");
  b->add_option("--memory-limit", c.memory_limit, "per-rank memory limit for the planner, e.g. 512M");
  b->add_flag("--progress", c.progress, "show progress on stderr");
  b->add_flag("--quiet", c.quiet, "print nothing (use with --json)");
}

void add_plan(CLI::App& app, shardmm::cli::PlanConfig& c) {
  auto* p = app.add_subcommand("plan", "show the planner's candidates and choice (no communication)");
  p->add_option("--m", c.m, "rows of C")->required()->check(CLI::NonNegativeNumber);
  p->add_option("--n", c.n, "columns of C")->required()->check(CLI::NonNegativeNumber);
  p->add_option("--k", c.k, "inner dimension")->required()->check(CLI::NonNegativeNumber);
  p->add_option("--ranks", c.ranks, "number of ranks P")->required()->check(CLI::PositiveNumber);
  p->add_option("--dtype", c.dtype, "f32|f64|c64|c128")->check(CLI::IsMember({"f32", "f64", "c64", "c128"}));
  p->add_option("--memory-limit", c.memory_limit, "bytes per rank, e.g. 512M");
  p->add_option("--profile", c.profile, "machine profile JSON from `shardmm calibrate`");
  p->add_option("--rows", c.rows, "candidates to list")->check(CLI::PositiveNumber);
}

void add_calibrate(CLI::App& app, shardmm::cli::CalibrateConfig& c) {
  auto* p = app.add_subcommand("calibrate", "measure latency, bandwidth and GEMM rates for the planner");
  p->add_option("-o,--output", c.output, "write the profile JSON to FILE");
  p->add_option("--reps", c.reps, "ping-pong repetitions")->check(CLI::PositiveNumber);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CLI::App app{"shardmm: distributed dense matrix multiplication over MPI"};
  app.set_version_flag("--version", std::string("shardmm ") + shardmm::version_string);
  app.require_subcommand(1);
  BenchConfig bench;
  add_bench(app, bench);
  shardmm::cli::PlanConfig plan;
  add_plan(app, plan);
  shardmm::cli::CalibrateConfig calibrate;
  add_calibrate(app, calibrate);
  int rc = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    rc = app.exit(e, out, err);
    if (rank == 0) {
      std::fputs(out.str().c_str(), stdout);
      std::fputs(err.str().c_str(), stderr);
    }
    MPI_Finalize();
    return rc == 0 ? 0 : 2;
  }
  try {
    if (app.got_subcommand("bench")) rc = shardmm::cli::run_bench(bench);
    if (app.got_subcommand("plan")) rc = shardmm::cli::run_plan(plan);
    if (app.got_subcommand("calibrate")) rc = shardmm::cli::run_calibrate(calibrate);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "shardmm: error: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
