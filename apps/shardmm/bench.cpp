// bench: the contenders (shardmm algorithms and ScaLAPACK p?gemm) run on the same operands in
// one mpirun, alternating call by call after the warm-up: reset C, barrier, time one call
// (the slowest rank's time). Then the probe check and one table row / JSON record each.
// --bare runs only the calls (for Open MPI's traffic monitoring); --tune-scalapack: see
// bench_tune.cpp.
#include "bench.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "agree.hpp"
#include "algo_options.hpp"
#include "bench_measure.hpp"
#include "bench_report.hpp"
#include "bench_util.hpp"
#include "commands.hpp"
#include "mpi_util.hpp"
#include "probe.hpp"
#include "progress.hpp"
#include "scalapack_ref.hpp"
#include "shardmm/runtime.hpp"

namespace shardmm::cli {
namespace {

using bench::local_rate;
using bench::max_over;
using bench::peak_resident_bytes;
using bench::resident_bytes;

// The generated operands every contender multiplies.
template <Scalar T>
struct Setup {
  Mesh mesh;
  Op opA = Op::N, opB = Op::N;
  T alpha, beta;
  DistMatrix<T> A, B, C0;
};

template <Scalar T>
std::unique_ptr<Setup<T>> make_setup(const BenchConfig& cfg) {
  const Op opA = cfg.transa, opB = cfg.transb;
  std::optional<PreferredLayouts> pref;
  if (cfg.layouts == "preferred") pref = preferred_inputs(cfg, dtype_of<T>(), opA, opB);
  Mesh mesh = pref ? Mesh(MPI_COMM_WORLD, pref->mesh) : operand_mesh(cfg);
  const index_t ar = opA == Op::N ? cfg.m : cfg.k, ac = opA == Op::N ? cfg.k : cfg.m;
  const index_t br = opB == Op::N ? cfg.k : cfg.n, bc = opB == Op::N ? cfg.n : cfg.k;
  auto layout = [&](const std::string& spec, index_t r, index_t c, const Layout* chosen) {
    if (chosen) return *chosen;
    return spec.empty() ? Layout::block_cyclic(mesh.shape(), r, c, cfg.nb, cfg.nb)
                        : Layout(mesh.shape(), r, c, spec);
  };
  auto s = std::unique_ptr<Setup<T>>(new Setup<T>{
      mesh, opA, opB, bench::value_from<T>(cfg.alpha), bench::value_from<T>(cfg.beta),
      DistMatrix<T>(mesh, layout(cfg.layout_a, ar, ac, pref ? &pref->A : nullptr)),
      DistMatrix<T>(mesh, layout(cfg.layout_b, br, bc, pref ? &pref->B : nullptr)),
      DistMatrix<T>(mesh, layout(cfg.layout_c, cfg.m, cfg.n, pref ? &pref->C : nullptr))});
  s->A.fill([](index_t i, index_t j) { return bench::entry<T>(i, j, 1); });
  s->B.fill([](index_t i, index_t j) { return bench::entry<T>(i, j, 2); });
  s->C0.fill([](index_t i, index_t j) { return bench::entry<T>(i, j, 3); });
  return s;
}

// The library options of contender `name` (scalapack and cores: the algorithm options only).
Options options_of(const BenchConfig& cfg, const std::string& name) {
  return algo_options(cfg, name == "scalapack" || name == "cores" ? "auto" : name);
}

// Filled memory from the library's allocator (allocate_buffer: transparent huge pages from
// 2 MiB up): the P-core ceiling's operands get the memory the library's own buffers get, not
// less.
template <class T>
struct HugeArray {
  std::unique_ptr<void, decltype(&std::free)> mem{nullptr, &std::free};
  T* data = nullptr;
  index_t size = 0;
  void assign(index_t n, T v) {
    mem.reset(allocate_buffer(static_cast<std::size_t>(n) * sizeof(T)));
    data = static_cast<T*>(mem.get()), size = n;
    std::fill(data, data + n, v);
  }
};

// The P-core ceiling's operands: this rank's m_loc x k op(A) and k x n_loc op(B) as chunks of kc
// of k, each one local GEMM of m_loc x n_loc x kc (the first with beta, the rest adding). A
// chunk is the first m_loc x kc and kc x n_loc elements of the generated A's and B's local
// storage when those hold at least min(k / 2, 256) of k (the values do not change a GEMM's
// speed, and the calls only read them), so the ceiling adds no m_loc k + k n_loc of its own
// beside the other contenders; else filled arrays of its own, k whole.
template <Scalar T>
struct CoreOperands {
  const T* a = nullptr;
  const T* b = nullptr;
  index_t k = 0, kc = 0;
  HugeArray<T> own_a, own_b;

  void make(const Setup<T>& s, index_t m, index_t n, index_t k_all) {
    k = k_all;
    const auto stored = [](const DistMatrix<T>& X) {
      return X.local_cols() > 0 ? X.ld() * X.local_cols() : 0;
    };
    kc =
        std::min({k, stored(s.A) / std::max<index_t>(m, 1), stored(s.B) / std::max<index_t>(n, 1)});
    if (kc > 0 && kc >= std::min<index_t>(k / 2, 256)) {
      a = s.A.data(), b = s.B.data();
      return;
    }
    own_a.assign(m * k, T(1));
    own_b.assign(k * n, T(1));
    a = own_a.data, b = own_b.data, kc = k;
  }
  // C (m x n, leading dimension ldc) <- alpha op(A) op(B) + beta C, chunk by chunk of k.
  void multiply(index_t m, index_t n, T alpha, T beta, T* c, index_t ldc) const {
    if (m <= 0 || n <= 0) return;
    if (k == 0) {  // no chunk: C <- beta C, as a GEMM with k = 0 does
      local_gemm(Op::N, Op::N, m, n, 0, alpha, a, m, b, 1, beta, c, ldc);
      return;
    }
    for (index_t p = 0; p < k; p += kc)
      local_gemm(Op::N, Op::N, m, n, std::min(kc, k - p), alpha, a, m, b, kc, p == 0 ? beta : T(1),
                 c, ldc);
  }
};

// One contender: its options, its C, and (ScaLAPACK) a BLACS grid plus block-cyclic copies
// of inputs it cannot use as they are.
template <Scalar T>
struct Contender {
  bench::Row row;
  bool scalapack = false;
  bool cores = false;  // the P-core ceiling: each rank's C tile in local GEMMs (CoreOperands)
  Options o;
  const DistMatrix<T>* a = nullptr;
  const DistMatrix<T>* b = nullptr;
  std::optional<DistMatrix<T>> As, Bs, C;
  std::optional<Mesh> grid_mesh;  // --scalapack-grid: ScaLAPACK's PxQ over the operands' ranks
  std::optional<BlacsGrid> grid;
  CoreOperands<T> core;  // cores: this rank's m_loc x k and k x n_loc operands

  [[nodiscard]] bool failed() const { return !row.error.empty(); }
  void call(const Setup<T>& s) {
    if (cores) {
      core.multiply(C->local_rows(), C->local_cols(), s.alpha, s.beta, C->data(), C->ld());
    } else if (scalapack) {
      scalapack_gemm(*grid, s.opA, s.opB, s.alpha, *a, *b, s.beta, *C);
    } else {
      row.report = gemm(s.opA, s.opB, s.alpha, *a, *b, s.beta, *C, o);
    }
  }
};

template <Scalar T>
Layout bc_like(const Mesh& mesh, const DistMatrix<T>& X, index_t nb) {
  return Layout::block_cyclic(mesh.shape(), X.rows(), X.cols(), nb, nb);
}

// ScaLAPACK's mesh: the operands' own (2D; a line as P x 1), or --scalapack-grid PxQ over the
// same ranks (then every operand is copied onto it, before the calls).
template <Scalar T>
const Mesh& scalapack_mesh(const BenchConfig& cfg, const Setup<T>& s, Contender<T>& c) {
  if (cfg.scalapack_grid.empty()) {
    if (s.mesh.shape().ndims() == 2) return s.mesh;
    if (s.mesh.shape().ndims() != 1)
      throw InvalidArgument("--algo scalapack needs a 2D grid (or --scalapack-grid PxQ)");
    // operands on a line (--layouts preferred, say): ScaLAPACK on P x 1, with bc copies
    return c.grid_mesh.emplace(s.mesh.reshaped(MeshShape({"x", "y"}, {s.mesh.size(), 1})));
  }
  const MeshShape g = MeshShape::parse(cfg.scalapack_grid);
  if (g.ndims() != 2 || g.sizes[0] * g.sizes[1] != s.mesh.size())
    throw InvalidArgument("--scalapack-grid '" + cfg.scalapack_grid +
                          "': want PxQ with P Q = " + std::to_string(s.mesh.size()));
  return c.grid_mesh.emplace(s.mesh.reshaped(MeshShape({"x", "y"}, g.sizes)));
}

template <Scalar T>
std::unique_ptr<Contender<T>> make_contender(const BenchConfig& cfg, const Setup<T>& s,
                                             const std::string& name) {
  auto c = std::make_unique<Contender<T>>();
  c->row.name = name;
  c->scalapack = name == "scalapack";
  c->cores = name == "cores";
  c->o = options_of(cfg, name);
  c->a = &s.A, c->b = &s.B;
  if (c->scalapack) {  // A, B and C in bc(nb,nb) on ScaLAPACK's grid where they are not
    const Mesh& mesh = scalapack_mesh(cfg, s, *c);
    const bool own = !c->grid_mesh;
    c->C.emplace(mesh, own && scalapack_compatible(s.C0.layout()) ? s.C0.layout()
                                                                  : bc_like(mesh, s.C0, cfg.nb));
    const auto copy = [&](const DistMatrix<T>& X, std::optional<DistMatrix<T>>& Y) {
      redistribute(X, Y.emplace(mesh, bc_like(mesh, X, cfg.nb)));
      return &*Y;
    };
    if (!own || !scalapack_compatible(s.A.layout())) c->a = copy(s.A, c->As);
    if (!own || !scalapack_compatible(s.B.layout())) c->b = copy(s.B, c->Bs);
    c->grid.emplace(mesh.comm(), mesh.shape().sizes[0], mesh.shape().sizes[1]);
    if (cfg.blas_threads > 0) set_blas_threads(cfg.blas_threads);
    c->row.plan = "ScaLAPACK p?gemm on " + std::to_string(mesh.shape().sizes[0]) + "x" +
                  std::to_string(mesh.shape().sizes[1]) + ", " + c->C->layout().spec().to_string();
    return c;
  }
  c->C.emplace(s.mesh, s.C0.layout());
  if (c->cores) {  // operands of this rank's share of the product (CoreOperands)
    c->core.make(s, c->C->local_rows(), c->C->local_cols(), cfg.k);
    if (cfg.blas_threads > 0) set_blas_threads(cfg.blas_threads);
    c->row.plan = "each rank's C tile times the whole k as local GEMMs over chunks of k (" +
                  std::to_string(c->core.kc) + " on rank 0), no communication (the P-core ceiling)";
  }
  return c;
}

// make_contender, or a contender that only reports the error (the same on every rank) in its row.
template <Scalar T>
std::unique_ptr<Contender<T>> make_or_report(const BenchConfig& cfg, const Setup<T>& s,
                                             const std::string& name) {
  std::unique_ptr<Contender<T>> c;
  if (auto error = failure_of(s.mesh.comm(), [&] { c = make_contender(cfg, s, name); })) {
    c = std::make_unique<Contender<T>>();
    c->row.name = name;
    c->row.error = *error;
  }
  return c;
}

// --bare: nothing but the calls (the traffic Open MPI counts is theirs alone), then one line.
template <Scalar T>
int run_bare(const BenchConfig& cfg, const Setup<T>& s,
             std::vector<std::unique_ptr<Contender<T>>>& cs) {
  std::vector<std::optional<std::string>> errors(cs.size());
  for (int r = 0; r < cfg.reps; ++r)
    for (std::size_t i = 0; i < cs.size(); ++i)
      if (!cs[i]->failed() && !errors[i])
        errors[i] = thrown_by([&] { cs[i]->call(s); });  // agreed by the library
  std::string summary = "shardmm bench --bare: " + std::to_string(cfg.reps) + " call(s) each on " +
                        std::to_string(s.mesh.size()) + " ranks, mesh " +
                        s.mesh.shape().to_string() + ":";
  int rc = 0;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    if (auto e = first_failure(s.mesh.comm(), errors[i])) cs[i]->row.error = *e;
    summary +=
        " " + cs[i]->row.name + (cs[i]->failed() ? " FAILED (" + cs[i]->row.error + ")" : "");
    if (cs[i]->failed()) rc = 1;
  }
  if (s.mesh.rank() == 0 && !cfg.quiet) std::printf("%s (no timing, no check)\n", summary.c_str());
  return rc;
}

// What any local GEMM and any message would touch first, touched before the memory baseline so
// that "added memory" is the contenders' own: OpenBLAS's packing buffer (one GEMM of this
// rank's C extent, k up to one BLAS block, reading the operands' storage and writing into a
// contender's C, which is reset before every call) and Open MPI's per-peer buffers (a
// rendezvous-sized broadcast from every rank).
template <Scalar T>
void warm_runtime(const Setup<T>& s, DistMatrix<T>& C) {
  const auto size = [](const DistMatrix<T>& X) { return X.local_rows() * X.local_cols(); };
  const index_t w = std::min<index_t>(256, std::min(size(s.A), size(s.B)));
  const index_t m = w > 0 ? std::min(C.local_rows(), size(s.A) / w) : 0;
  const index_t n = w > 0 ? std::min(C.local_cols(), size(s.B) / w) : 0;
  if (m > 0 && n > 0)
    local_gemm(Op::N, Op::N, m, n, w, T(1), s.A.data(), m, s.B.data(), w, T(0), C.data(), C.ld());
  std::vector<double> msg(index_t{1} << 14, 1.0);  // 128 KiB: past the eager limit
  for (int root = 0; root < s.mesh.size(); ++root)
    SHARDMM_CLI_MPI(
        MPI_Bcast(msg.data(), static_cast<int>(msg.size()), MPI_DOUBLE, root, s.mesh.comm()));
}

// Warm-up then timed calls, the contenders taking turns (one that fails drops out with its
// error).
template <Scalar T>
void run_alternating(const BenchConfig& cfg, const Setup<T>& s,
                     std::vector<std::unique_ptr<Contender<T>>>& cs, ProgressLine* line,
                     double before, double abc) {
  const int total = cfg.warmup + cfg.reps;
  for (int r = 0; r < total; ++r)
    for (auto& c : cs) {
      if (r == 0 && cs.size() > 1 &&
          c == cs[1]) {  // the first contender's own peak, before the second runs
        const double own = std::max(0.0, peak_resident_bytes() - before);
        cs.front()->row.own_extra_ratio = max_over(abc > 0 ? own / abc : 0.0, s.mesh.comm());
      }
      if (c->failed()) continue;
      redistribute(s.C0, *c->C);  // reset C (untimed)
      SHARDMM_CLI_MPI(MPI_Barrier(s.mesh.comm()));
      const double t0 = MPI_Wtime();
      const auto error = thrown_by([&] { c->call(s); });  // library errors: the same on every rank
      const double t = max_over(MPI_Wtime() - t0, s.mesh.comm());
      if (auto agreed = first_failure(s.mesh.comm(), error)) {
        c->row.error = *agreed;
        continue;
      }
      if (r >= cfg.warmup) c->row.times.push_back(t);
      char text[160];
      (void)std::snprintf(text, sizeof text, "%s: call %d/%d (%.3f s)", c->row.name.c_str(), r + 1,
                          total, t);
      if (line) line->update(text);
    }
  if (line) line->finish();
}

// Words from shardmm's own counters, the probe check and peak memory.
template <Scalar T>
void finish_row(const BenchConfig& cfg, const Setup<T>& s, Contender<T>& c) {
  bench::Row& row = c.row;
  const MPI_Comm comm = s.mesh.comm();
  const int P = s.mesh.size();
  if (!c.scalapack && !c.cores) {
    row.plan = row.report.grid + ", " + row.report.detail;
    const double words = double(row.report.bytes_received) / sizeof(T);
    row.words_max = max_over(words, comm);
    row.words_mean = bench::sum_over(words, comm) / P;
    const double algo =
        double(row.report.bytes_received - row.report.redist_bytes_received) / sizeof(T);
    row.algo_words_max = max_over(algo, comm);
  }
  row.blas_threads = shardmm::blas_threads();
  if (cfg.check && !c.cores)
    row.probe = probe_error(s.opA, s.opB, s.alpha, *c.a, *c.b, s.beta, s.C0, *c.C);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  row.peak_kb = static_cast<long>(max_over(double(ru.ru_maxrss), comm));
}

template <Scalar T>
int bench_typed(const BenchConfig& cfg) {
  // Rank 0's progress on stderr: redrawn on a terminal, a line per update in a log.
  const bool progress = !cfg.quiet && cfg.json.empty() && world_rank() == 0 &&
                        (cfg.progress || isatty(STDERR_FILENO));
  ProgressLine line;
  // Filling the operands, the contenders' set-up and the warm-up call take seconds before the
  // first call is timed (2-4 s for run-demo's 4 ranks on 2 cores): said first.
  if (progress && !cfg.bare) line.update("setting up the operands, the contenders and a warm-up");
  const auto s = make_setup<T>(cfg);
  std::vector<std::unique_ptr<Contender<T>>> cs;
  cs.reserve(cfg.algos.size());
  for (const std::string& name : cfg.algos)
    (void)options_of(cfg, name);  // a bad name is the command's error
  for (const std::string& name : cfg.algos) cs.push_back(make_or_report(cfg, *s, name));
  if (cfg.bare) return run_bare(cfg, *s, cs);
  bench::Context ctx{cfg, s->mesh, s->A.layout(), s->B.layout(), s->C0.layout(), 0, 0};
  ctx.work = bench::flops(cfg.m, cfg.n, cfg.k, is_complex_v<T>);
  ctx.lower_bound = lower_bound_words(cfg.m, cfg.n, cfg.k, s->mesh.size());
  ctx.operation = to_string(cfg.transa) + to_string(cfg.transb);
  // Memory the calls add on top of the operands (all allocated and touched by now).
  const double abc =
      double(s->A.local_rows() * s->A.local_cols() + s->B.local_rows() * s->B.local_cols() +
             s->C0.local_rows() * s->C0.local_cols()) *
      sizeof(T);
  for (auto& c : cs)
    if (!c->failed()) {
      warm_runtime(*s, *c->C);
      break;
    }
  const double before = resident_bytes();
  run_alternating(cfg, *s, cs, progress ? &line : nullptr, before, abc);
  const double extra = std::max(0.0, peak_resident_bytes() - before);
  if (cs.size() == 1)
    cs.front()->row.own_extra_ratio = max_over(abc > 0 ? extra / abc : 0.0, s->mesh.comm());
  ctx.extra_bytes = max_over(extra, s->mesh.comm());
  ctx.extra_ratio = max_over(abc > 0 ? extra / abc : 0.0, s->mesh.comm());
  ctx.rate =
      local_rate<T>(cfg.m, cfg.n, cfg.k, s->mesh.size());  // after: its buffers are not the calls'

  std::vector<bench::Row> rows;
  int rc = 0;
  for (auto& c : cs) {
    if (c->failed()) {
      rc = 1;
      rows.push_back(c->row);
      continue;
    }
    finish_row(cfg, *s, *c);
    if (c->row.probe > probe_limit(cfg) && rc == 0) rc = 3;
    rows.push_back(c->row);
  }
  if (s->mesh.rank() == 0) bench::report(ctx, rows);
  return rc;
}

}  // namespace

int run_bench(const BenchConfig& cfg) {
  if (cfg.tune_scalapack) return run_tune_scalapack(cfg);
  if (cfg.batch > 0) return run_bench_batched(cfg);
  if (cfg.op != "gemm") return run_bench_blas3(cfg);
  return bench::with_dtype(cfg.dtype, [&]<Scalar T>() { return bench_typed<T>(cfg); });
}

}  // namespace shardmm::cli
