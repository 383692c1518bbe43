// Command-line definition of the launcher (CLI11): one function per subcommand. The only
// translation unit that includes CLI11 (a heavy header) for the launcher and its tests.
#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "shardmm/plan.hpp"

namespace shardmm::cli {
namespace {

const char* const kOps = "N|T|C: op(X) = X, X^T or X^H";
// --transa / --transb parse once, into Op (any case); the commands read typed values.
CLI::CheckedTransformer op_option() {
  const std::map<std::string, Op> names{{"N", Op::N}, {"T", Op::T}, {"C", Op::C}};
  return CLI::CheckedTransformer(names, CLI::ignore_case);
}
const char* const kBytesHelp =
    "bytes per rank: 512M, 4MiB (powers of 1024: K, M, G, KiB, MiB, GiB), 4MB (powers of "
    "1000: KB, MB, GB) or plain bytes";

// A byte count as the library reads it (shardmm::parse_bytes): a bad one is a usage error.
CLI::Validator bytes_check() {
  return {[](const std::string& text) {
            try {
              (void)parse_bytes(text);
              return std::string();
            } catch (const std::exception& e) {
              return std::string(e.what());
            }
          },
          "BYTES"};
}

// A growth cap as the library reads it (shardmm::parse_growth): a bad one is a usage error.
CLI::Validator growth_check() {
  return {[](const std::string& text) {
            try {
              (void)parse_growth(text);
              return std::string();
            } catch (const std::exception& e) {
              return std::string(e.what());
            }
          },
          "X"};
}

const char* const kGrowthHelp =
    "without --memory-limit, Auto picks only plans adding at most X times the local A+B+C per "
    "rank (default 1.3, SHARDMM_MEMORY_GROWTH; 'unlimited': any plan)";

// --transa/--transb, --nb and --layout-a/-b/-c: how bench and multiply take and lay out the
// operands. Cfg: BenchConfig or MultiplyConfig.
template <class Cfg>
void add_operand_options(CLI::App* s, Cfg& c) {
  s->add_option("--transa", c.transa, kOps)->transform(op_option());
  s->add_option("--transb", c.transb, kOps)->transform(op_option());
  s->add_option("--nb", c.nb, "block size of the default bc(nb,nb) layouts")
      ->check(CLI::PositiveNumber);
  s->add_option("--layout-a", c.layout_a,
                "layout of A, e.g. A[I_X,J] or bc(64,64) (default bc(nb,nb))");
  s->add_option("--layout-b", c.layout_b, "layout of B (default bc(nb,nb))");
  s->add_option("--layout-c", c.layout_c, "layout of C (default bc(nb,nb))");
}

// The algorithm's knobs (algo_options.hpp turns them into library Options), the same for
// bench and multiply.
template <class Cfg>
void add_algo_options(CLI::App* s, Cfg& c) {
  s->add_option("--grid", c.grid,
                "process grid PxQ of the operands, or PxQxC for --algo 25d (default near-square)");
  s->add_option("--panel", c.panel, "SUMMA C-stationary's panel width along k (0: chosen)")
      ->check(CLI::NonNegativeNumber);
  s->add_option("--stationary-chunk", c.stationary_chunk,
                "SUMMA A/B-stationary: C's columns (rows) per owner in one chunk (0: chosen)")
      ->check(CLI::NonNegativeNumber);
  s->add_option("--ring-chunk", c.ring_chunk,
                "the ring's chunk at p = 2, its pass at p > 2 (0: chosen)")
      ->check(CLI::NonNegativeNumber);
  s->add_option("--strassen-step", c.strassen_step,
                "strassen's first step: auto|breadth-first (7 groups of P/7 ranks)|depth-first")
      ->check(CLI::IsMember({"auto", "breadth-first", "depth-first"}));
  s->add_option("--stationary", c.stationary, "SUMMA variant: auto|A|B|C (the matrix that stays)")
      ->check(CLI::IsMember({"auto", "A", "B", "C"}));
  s->add_option(
      "--ring-axis", c.ring_axis,
      "mesh axis the ring runs along (default: the only axis longer than 1, else the longest)");
  s->add_flag("--bidirectional", c.bidirectional, "ring: send halves both ways");
  s->add_option("--wire", c.wire,
                "f32 operands travel as f32 (default), bf16 or f16: half the bytes, each moved "
                "element rounded once (error bound: docs/ALGORITHMS.md)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  s->add_option("--wait", c.wait,
                "how the ranks wait for messages in the products: spin, sleep (naps that leave "
                "the core to others) or auto (default: SHARDMM_WAIT, else sleep when the node "
                "has more ranks than cores); SHARDMM_WAIT also sets the other library calls'")
      ->check(CLI::IsMember({"auto", "spin", "sleep"}));
  s->add_option("--trace", c.trace,
                "write a trace of every product to FILE (Chrome trace-event JSON for Perfetto; "
                "docs/PROFILING.md); SHARDMM_TRACE=FILE also traces the other library calls");
  s->add_flag("--allow-fast", c.allow_fast,
              "auto may pick Strassen-Winograd (weaker error bound: docs/ALGORITHMS.md)");
  s->add_option("--memory-limit", c.memory_limit,
                std::string("per-rank memory limit for the planner, ") + kBytesHelp)
      ->check(bytes_check());
  s->add_option("--memory-growth", c.memory_growth, kGrowthHelp)->check(growth_check());
  s->add_option("--blas-threads", c.blas_threads,
                "OpenBLAS threads per rank (0: OPENBLAS_NUM_THREADS)")
      ->check(CLI::NonNegativeNumber);
}

// The PBLAS level-3 flags bench --op and plan --op share.
void add_blas3_flags(CLI::App* a, std::string& side, std::string& uplo, std::string& diag) {
  a->add_option("--side", side, "symm/hemm/trmm/trsm: L|R")->check(CLI::IsMember({"L", "R"}));
  a->add_option("--uplo", uplo, "the triangle read or written: U|L")
      ->check(CLI::IsMember({"U", "L"}));
  a->add_option("--diag", diag, "trmm/trsm: N|U (unit diagonal)")->check(CLI::IsMember({"N", "U"}));
}

void add_bench(CLI::App& app, BenchConfig& c) {
  auto* b = app.add_subcommand("bench", "time shardmm (and ScaLAPACK) on generated operands");
  // --size first: CLI11 applies options in declaration order, so an explicit --m/--n/--k wins.
  b->add_option_function<shardmm::index_t>(
       "--size", [&c](shardmm::index_t s) { c.m = c.n = c.k = s; }, "m = n = k")
      ->check(CLI::NonNegativeNumber);
  b->add_option("--m", c.m, "rows of C")->check(CLI::NonNegativeNumber);
  b->add_option("--n", c.n, "columns of C")->check(CLI::NonNegativeNumber);
  b->add_option("--k", c.k, "inner dimension")->check(CLI::NonNegativeNumber);
  b->add_option("--dtype", c.dtype, "f32|f64|c64|c128")
      ->check(CLI::IsMember({"f32", "f64", "c64", "c128"}));
  std::vector<std::string> ops = blas3_ops();
  ops.insert(ops.begin(), "gemm");
  b->add_option("--op", c.op,
                "gemm (default) or a PBLAS level-3 op: symm|hemm (A m x m or n x n by --side) "
                "syrk|herk|syr2k|her2k (C n x n, op(A) n x k by --transa) trmm|trsm (B m x n) "
                "tran|geadd (C m x n), beside ScaLAPACK's p?<op>_")
      ->check(CLI::IsMember(ops));
  add_blas3_flags(b, c.side, c.uplo, c.diag);
  b->add_option(
       "--algo", c.algos,
       "comma list of auto|local|summa|cannon|ring|sharded|25d|strassen|scalapack|cores (cores: "
       "each rank's "
       "share in local GEMMs, no communication: the P-core ceiling); one that fails reports its "
       "error in its row")
      ->delimiter(',');
  add_operand_options(b, c);
  b->add_option("--layouts", c.layouts,
                "given: the inputs' mesh and layouts from --grid and --layout-a/-b/-c; preferred: "
                "the ones shardmm prefers for this product (as `shardmm plan` prints them)")
      ->check(CLI::IsMember({"given", "preferred"}));
  add_algo_options(b, c);
  b->add_option("--alpha", c.alpha, "alpha (real)");
  b->add_option("--beta", c.beta, "beta (real)");
  b->add_option("--reps", c.reps, "timed repetitions")->check(CLI::PositiveNumber);
  b->add_option("--warmup", c.warmup, "untimed repetitions first")->check(CLI::NonNegativeNumber);
  b->add_flag("--check,!--no-check", c.check, "verify with a random-vector probe");
  b->add_option("--json", c.json, "append one JSON record per algorithm to FILE");
  b->add_flag("--progress", c.progress, "show progress on stderr");
  b->add_flag("--quiet", c.quiet, "print nothing (use with --json)");
  b->add_flag(
      "--bare", c.bare,
      "only the calls, nothing else communicates (for traffic monitoring); prints one line");
  b->add_option("--scalapack-grid", c.scalapack_grid,
                "ScaLAPACK's PxQ grid if not the operands' (it gets bc(nb,nb) copies on it)");
  b->add_flag("--tune-scalapack", c.tune_scalapack,
              "time ScaLAPACK on every PxQ grid and nb in 64..256; print the best");
  b->add_option("--batch", c.batch,
                "N products of m x n x k (gemm_batched) against the P-core ceiling; layouts "
                "--layout-a/-b/-c in the batched notation A[B_X,I,K_Y] (docs/USAGE.md)")
      ->check(CLI::NonNegativeNumber);
  b->add_option("--merge", c.merge, "with --batch: auto|never|always (BatchMerge)")
      ->check(CLI::IsMember({"auto", "never", "always"}));
}

void add_plan(CLI::App& app, PlanConfig& c) {
  auto* p =
      app.add_subcommand("plan", "show the planner's candidates and choice (no communication)");
  p->add_option("--m", c.m, "rows of C")->required()->check(CLI::NonNegativeNumber);
  p->add_option("--n", c.n, "columns of C")->required()->check(CLI::NonNegativeNumber);
  p->add_option("--k", c.k, "inner dimension")->required()->check(CLI::NonNegativeNumber);
  p->add_option("--ranks", c.ranks, "number of ranks P")->required()->check(CLI::PositiveNumber);
  p->add_option("--dtype", c.dtype, "f32|f64|c64|c128")
      ->check(CLI::IsMember({"f32", "f64", "c64", "c128"}));
  p->add_option("--memory-limit", c.memory_limit, kBytesHelp)->check(bytes_check());
  p->add_option("--memory-growth", c.memory_growth, kGrowthHelp)->check(growth_check());
  p->add_option("--profile", c.profile, "machine profile JSON from `shardmm calibrate`");
  p->add_option("--io", c.io,
                "with --memory-limit, out of core: the read path (posix, mpiio, mmap) the "
                "streamed plan is priced for")
      ->check(CLI::IsMember({"posix", "mpiio", "mmap"}));
  p->add_option("--rows", c.rows, "candidates to list")->check(CLI::PositiveNumber);
  p->add_option("--grid", c.grid,
                "PxQ: inputs already block-cyclic on this grid (as bench's defaults); PxQxR "
                "(mesh x, y, z) with all three --layout-*");
  p->add_option("--nb", c.nb, "with --grid: block size of those bc(nb,nb) inputs")
      ->check(CLI::PositiveNumber);
  p->add_option("--layout-a", c.layout_a,
                "with --grid: A's layout on that mesh, e.g. A[I_x,J_y] (default bc(nb,nb))");
  p->add_option("--layout-b", c.layout_b, "with --grid: B's layout (default bc(nb,nb))");
  p->add_option("--layout-c", c.layout_c, "with --grid: C's layout (default bc(nb,nb))");
  p->add_option("--transa", c.transa, "N|T|C: op(A), for what --grid saves")
      ->transform(op_option());
  p->add_option("--transb", c.transb, "N|T|C: op(B), for what --grid saves")
      ->transform(op_option());
  p->add_option("--hosts", c.hosts,
                "hosts the ranks span: above 1 the GEMMs relay broadcasts as they run")
      ->check(CLI::PositiveNumber);
  p->add_flag("--json", c.json, "print one JSON object (chosen, candidates, profile, lower bound)");
  p->add_flag("--allow-fast", c.allow_fast, "price Strassen beside the classical candidates");
  std::vector<std::string> ops = blas3_ops();
  ops.insert(ops.begin(), "gemm");
  p->add_option("--op", c.op,
                "gemm (default) or a PBLAS level-3 routine, its operands as bench --op takes "
                "them (syrk|herk|syr2k|her2k: C n x n, op(A) n x k by --transa, --m unused)")
      ->check(CLI::IsMember(ops));
  add_blas3_flags(p, c.side, c.uplo, c.diag);
}

void add_calibrate(CLI::App& app, CalibrateConfig& c) {
  auto* p =
      app.add_subcommand("calibrate", "measure latency, bandwidth and GEMM rates for the planner");
  p->add_option("-o,--output", c.output, "write the profile JSON to FILE");
  p->add_option("--reps", c.reps, "ping-pong repetitions")->check(CLI::PositiveNumber);
  p->add_option("--crossover-max", c.crossover_max,
                "largest size tried for Strassen's crossover (0: keep the default)")
      ->check(CLI::NonNegativeNumber);
  p->add_option("--read-probe", c.read_probe,
                "bytes per rank of MPI-IO's page-cache read probe, in the profile's directory, "
                "in whole 64 MiB blocks (0: not measured, the defaults stay)")
      ->check(CLI::IsMember({"0"}) | bytes_check());
}

void add_multiply(CLI::App& app, MultiplyConfig& c) {
  auto* p =
      app.add_subcommand("multiply", "C = alpha op(A) op(B) + beta C0 from .npy (or raw) files; "
                                     "1-D .npy operands follow numpy's matmul");
  p->add_option("A", c.a, "A.npy")->required();
  p->add_option("B", c.b, "B.npy")->required();
  p->add_option("-o,--output", c.output, "C.npy (written atomically; checked before any work)")
      ->required();
  p->add_option("--c-in", c.c_in, "C0 file (C = alpha op(A) op(B) + beta C0; beta defaults to 1)");
  p->add_option("--alpha", c.alpha, "alpha (real)");
  p->add_option("--beta", c.beta, "beta (real; needs --c-in)")
      ->default_str("0, or 1 with --c-in")
      ->each([&c](const std::string&) { c.beta_given = true; });
  p->add_option("--algo", c.algo, "auto|local|summa|cannon|ring|sharded|25d|strassen");
  add_operand_options(p, c);
  add_algo_options(p, c);
  p->add_option("--format", c.format, "npy|raw")->check(CLI::IsMember({"npy", "raw"}));
  p->add_option("--shape-a", c.shape_a, "raw: shape of A, RxC (required with --format raw)");
  p->add_option("--shape-b", c.shape_b, "raw: shape of B, RxC (required with --format raw)");
  p->add_option("--shape-c", c.shape_c, "raw: shape of C0, RxC (required with --c-in)");
  p->add_option("--offset-a", c.offset_a, "raw: bytes before A's data (e.g. another header)")
      ->check(CLI::NonNegativeNumber);
  p->add_option("--offset-b", c.offset_b, "raw: bytes before B's data")
      ->check(CLI::NonNegativeNumber);
  p->add_option("--offset-c", c.offset_c, "raw: bytes before C0's data")
      ->check(CLI::NonNegativeNumber);
  p->add_option("--dtype", c.dtype, "raw: f32|f64|c64|c128")
      ->check(CLI::IsMember({"f32", "f64", "c64", "c128"}));
  p->add_option("--order", c.order, "raw files: C (row-major) or F (column-major)")
      ->check(CLI::IsMember({"C", "F"}));
  p->add_flag("--fortran-order,!--c-order", c.fortran_out, "npy output order (default Fortran)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  p->add_flag("--quiet", c.quiet, "print nothing");
  p->add_option("--io", c.io,
                "streamed: read panels with posix (pread/pwrite threads), mpiio (collective) "
                "or mmap")
      ->check(CLI::IsMember({"posix", "mpiio", "mmap"}));
  p->add_option("--write", c.write,
                "streamed: write C through the page cache (buffered) or its whole pages with "
                "O_DIRECT (direct; buffered where the file system refuses it)")
      ->check(CLI::IsMember({"direct", "buffered"}));
  p->add_flag("--out-of-core", c.out_of_core, "stream from the files even when they fit");
  p->add_flag("--progress", c.progress,
              "stages (in core) or blocks done and an ETA (out of core) on stderr: redrawn on "
              "a terminal, one line per update otherwise");
}

// Declares every subcommand and option of `shardmm` on `app`, bound to `c`.
void build_app(CLI::App& app, Commands& c) {
  app.set_version_flag("--version", std::string("shardmm ") + version_string);
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();  // --help shows every default
  add_bench(app, c.bench);
  add_plan(app, c.plan);
  add_calibrate(app, c.calibrate);
  add_multiply(app, c.multiply);
}

Ending ending_of(const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::CallForVersion*>(&e) != nullptr) return Ending::Version;
  if (dynamic_cast<const CLI::CallForHelp*>(&e) != nullptr ||
      dynamic_cast<const CLI::CallForAllHelp*>(&e) != nullptr)
    return Ending::Help;
  return Ending::Error;
}

}  // namespace

Parsed parse(int argc, const char* const* argv) {
  Parsed p;
  CLI::App app{"shardmm: distributed dense matrix multiplication over MPI"};
  build_app(app, p.commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    const int rc = app.exit(e, out, err);  // the help, version or error text CLI11 prints
    p.ending = rc == 0 ? ending_of(e) : Ending::Error;
    p.exit_code = rc == 0 ? 0 : 2;
    p.out = out.str();
    p.err = err.str();
    return p;
  }
  p.command = app.get_subcommands().front()->get_name();  // require_subcommand(1): one
  return p;
}

int run(const Parsed& parsed) {
  const Commands& c = parsed.commands;
  const std::string& cmd = parsed.command;
  if (cmd == "bench") return run_bench(c.bench);
  if (cmd == "plan") return run_plan(c.plan);
  if (cmd == "calibrate") return run_calibrate(c.calibrate);
  if (cmd == "multiply") return run_multiply(c.multiply);
  return 2;
}

}  // namespace shardmm::cli
