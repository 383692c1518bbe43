// bench: for each algorithm in turn on the same operands — reset C, barrier, time one call
// (the slowest rank's time), repeat; then the probe check and one table row / JSON record.
#include "bench.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "blas/blas.hpp"
#include "commands.hpp"
#include "probe.hpp"
#include "scalapack_ref.hpp"

namespace shardmm::cli {
namespace {

struct Row {
  std::string name, plan;
  std::vector<double> times;
  GemmReport report;
  double words_max = 0, words_mean = 0, algo_words_max = 0, probe = -1;
  long peak_kb = 0;
};

template <Scalar T>
T value_from(double v) { return T(static_cast<real_t<T>>(v)); }

template <Scalar T>
T entry(index_t i, index_t j, int seed) {  // deterministic, independent of P
  const double x = std::sin(0.37 * double(i) + 1.13 * double(j) + 0.71 * seed);
  if constexpr (is_complex_v<T>) return T(static_cast<real_t<T>>(x), static_cast<real_t<T>>(std::cos(0.5 * double(i) - 0.3 * double(j) + seed)));
  else return static_cast<T>(x);
}

double max_over(double v, MPI_Comm comm) {
  double r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, comm);
  return r;
}
double sum_over(double v, MPI_Comm comm) {
  double r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_SUM, comm);
  return r;
}

double flops(index_t m, index_t n, index_t k, bool complex) {
  return (complex ? 8.0 : 2.0) * double(m) * double(n) * double(k);
}

// GEMM rate of one core measured now on every rank at once (the "peak" of the % column).
template <Scalar T>
double local_rate(index_t m, index_t n, index_t k, int P) {
  const index_t s = std::clamp<index_t>(static_cast<index_t>(std::cbrt(double(m) * double(n) * double(k) / P)), 64, 1024);
  std::vector<T> a(static_cast<std::size_t>(s * s), T(1)), b(a), c(a);
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    blas::gemm(Op::N, Op::N, s, s, s, T(1), a.data(), s, b.data(), s, T(0), c.data(), s);
    best = std::min(best, max_over(MPI_Wtime() - t0, MPI_COMM_WORLD));
  }
  return flops(s, s, s, is_complex_v<T>) / best;
}

// --grid PxQ is the operands' mesh; PxQxC keeps a near-square 2D mesh for the operands and
// asks the 2.5D algorithm for that 3D grid.
Mesh make_mesh(const BenchConfig& cfg) {
  if (cfg.grid.empty() || MeshShape::parse(cfg.grid).ndims() == 3) return Mesh::grid2d(MPI_COMM_WORLD);
  MeshShape s = MeshShape::parse(cfg.grid);
  if (s.ndims() == 2) s = MeshShape({"x", "y"}, s.sizes);
  return Mesh(MPI_COMM_WORLD, s);
}

template <Scalar T>
void copy_local(const DistMatrix<T>& from, DistMatrix<T>& to) {
  for (index_t j = 0; j < from.local_cols(); ++j)
    std::copy_n(&from.local(0, j), from.local_rows(), &to.local(0, j));
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

template <Scalar T>
int bench_typed(const BenchConfig& cfg) {
  Mesh mesh = make_mesh(cfg);
  const int P = mesh.size(), me = mesh.rank();
  const Op opA = parse_op(cfg.transa), opB = parse_op(cfg.transb);
  const T alpha = value_from<T>(cfg.alpha), beta = value_from<T>(cfg.beta);
  const index_t ar = opA == Op::N ? cfg.m : cfg.k, ac = opA == Op::N ? cfg.k : cfg.m;
  const index_t br = opB == Op::N ? cfg.k : cfg.n, bc = opB == Op::N ? cfg.n : cfg.k;
  auto layout = [&](const std::string& spec, index_t r, index_t c) {
    return spec.empty() ? Layout::block_cyclic(mesh.shape(), r, c, cfg.nb, cfg.nb)
                        : Layout(mesh.shape(), r, c, spec);
  };
  DistMatrix<T> A(mesh, layout(cfg.layout_a, ar, ac)), B(mesh, layout(cfg.layout_b, br, bc));
  DistMatrix<T> C0(mesh, layout(cfg.layout_c, cfg.m, cfg.n));
  A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  C0.fill([](index_t i, index_t j) { return entry<T>(i, j, 3); });
  const bool quiet = cfg.quiet;
  const bool progress = !quiet && cfg.json.empty() && me == 0 && (cfg.progress || isatty(STDERR_FILENO));
  const double rate = local_rate<T>(cfg.m, cfg.n, cfg.k, P);
  const double lb = lower_bound_words(cfg.m, cfg.n, cfg.k, P);
  const double work = flops(cfg.m, cfg.n, cfg.k, is_complex_v<T>);
  std::vector<Row> rows;
  int rc = 0;
  for (const std::string& name : cfg.algos) {
    Row row;
    row.name = name;
    const bool scalapack = name == "scalapack";
    std::optional<DistMatrix<T>> As, Bs;
    std::optional<BlacsGrid> grid;
    const DistMatrix<T>* a = &A;
    const DistMatrix<T>* b = &B;
    DistMatrix<T> C(mesh, scalapack && !scalapack_compatible(C0.layout())
                              ? Layout::block_cyclic(mesh.shape(), cfg.m, cfg.n, cfg.nb, cfg.nb)
                              : C0.layout());
    if (scalapack) {
      if (mesh.shape().ndims() != 2) throw InvalidArgument("--algo scalapack needs a 2D grid");
      if (!scalapack_compatible(A.layout())) a = &As.emplace(redistribute(A, Layout::block_cyclic(mesh.shape(), ar, ac, cfg.nb, cfg.nb)));
      if (!scalapack_compatible(B.layout())) b = &Bs.emplace(redistribute(B, Layout::block_cyclic(mesh.shape(), br, bc, cfg.nb, cfg.nb)));
      grid.emplace(mesh.comm(), mesh.shape().sizes[0], mesh.shape().sizes[1]);
      row.plan = "ScaLAPACK p?gemm on " + std::to_string(mesh.shape().sizes[0]) + "x" +
                 std::to_string(mesh.shape().sizes[1]) + ", " + C.layout().spec().to_string();
    }
    Options o;
    o.panel = cfg.panel;
    o.ring_axis = cfg.ring_axis;
    o.bidirectional = cfg.bidirectional;
    if (!cfg.memory_limit.empty()) o.memory_limit = parse_bytes(cfg.memory_limit);
    if (!cfg.grid.empty() && MeshShape::parse(cfg.grid).ndims() == 3) {
      const auto g = MeshShape::parse(cfg.grid).sizes;
      o.grid_m = g[0], o.grid_n = g[1], o.grid_k = g[2];
    }
    if (!scalapack) o.algorithm = parse_algorithm(name);
    for (int r = 0; r < cfg.warmup + cfg.reps; ++r) {
      redistribute(C0, C);  // reset C (untimed)
      MPI_Barrier(mesh.comm());
      const double t0 = MPI_Wtime();
      if (scalapack) scalapack_gemm(*grid, opA, opB, alpha, *a, *b, beta, C);
      else row.report = gemm(opA, opB, alpha, *a, *b, beta, C, o);
      const double t = max_over(MPI_Wtime() - t0, mesh.comm());
      if (r >= cfg.warmup) row.times.push_back(t);
      if (progress) {
        const int total = cfg.warmup + cfg.reps;
        std::fprintf(stderr, "\r%s: rep %d/%d (%.3f s, ETA %.0f s)   ", name.c_str(), r + 1, total, t,
                     t * (total - r - 1));
      }
    }
    if (progress) std::fprintf(stderr, "\n");
    if (!scalapack) {
      row.plan = row.report.grid + ", " + row.report.detail;
      const double words = double(row.report.bytes_received) / sizeof(T);
      row.words_max = max_over(words, mesh.comm());
      row.words_mean = sum_over(words, mesh.comm()) / P;
      const double algo = double(row.report.bytes_received - row.report.redist_bytes_received) / sizeof(T);
      row.algo_words_max = max_over(algo, mesh.comm());
    }
    if (cfg.check) {
      row.probe = probe_error(opA, opB, alpha, *a, *b, beta, C0, C);
      if (row.probe > 100) rc = 3;
    }
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    row.peak_kb = static_cast<long>(max_over(double(ru.ru_maxrss), mesh.comm()));
    rows.push_back(row);
  }
  if (me != 0) return rc;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  if (!quiet) {
    std::printf("shardmm bench: m=%lld n=%lld k=%lld %s op=%s%s alpha=%g beta=%g on %d ranks, mesh %s\n",
                (long long)cfg.m, (long long)cfg.n, (long long)cfg.k, cfg.dtype.c_str(),
                cfg.transa.c_str(), cfg.transb.c_str(), cfg.alpha, cfg.beta, P, mesh.shape().to_string().c_str());
    std::printf("inputs A %s, B %s, C %s; local GEMM rate %.1f GFLOP/s per rank; lower bound %.4g words/rank\n",
                A.layout().spec().to_string().c_str(), B.layout().spec().to_string().c_str(),
                C0.layout().spec().to_string().c_str(), rate * 1e-9, lb);
    std::printf("%-10s %9s %9s %9s %8s %6s %12s %12s %6s %7s %6s %6s %6s %9s %8s\n", "algorithm", "median_s", "min_s",
                "max_s", "GFLOP/s", "%peak", "words_max", "words_mean", "/LB", "algo/LB", "gemm%", "comm%", "redis%",
                "peak_MiB", "check");
  }
  const double base = rows.empty() ? 0 : median(rows.back().times);
  for (const Row& r : rows) {
    const double med = median(r.times), tot = r.report.seconds_total > 0 ? r.report.seconds_total : 1;
    const bool ours = r.name != "scalapack";
    if (!quiet)
      std::printf("%-10s %9.4f %9.4f %9.4f %8.2f %6.1f %12s %12s %6s %7s %6s %6s %6s %9.1f %8s\n", r.name.c_str(), med,
                  *std::min_element(r.times.begin(), r.times.end()), *std::max_element(r.times.begin(), r.times.end()),
                  work / med * 1e-9, 100 * work / med / (rate * P),
                  ours ? fmt("%.4g", r.words_max).c_str() : "-", ours ? fmt("%.4g", r.words_mean).c_str() : "-",
                  ours && lb > 0 ? fmt("%.3f", r.words_max / lb).c_str() : "-",
                  ours && lb > 0 ? fmt("%.3f", r.algo_words_max / lb).c_str() : "-",
                  ours ? fmt("%.0f", 100 * r.report.seconds_gemm / tot).c_str() : "-",
                  ours ? fmt("%.0f", 100 * r.report.seconds_comm / tot).c_str() : "-",
                  ours ? fmt("%.0f", 100 * r.report.seconds_redist / tot).c_str() : "-", double(r.peak_kb) / 1024.0,
                  r.probe < 0 ? "-" : (r.probe <= 100 ? "PASS" : "FAIL"));
    if (!cfg.json.empty()) {
      nlohmann::json j = {{"algorithm", r.name}, {"m", cfg.m}, {"n", cfg.n}, {"k", cfg.k}, {"dtype", cfg.dtype},
                          {"transa", cfg.transa}, {"transb", cfg.transb}, {"ranks", P},
                          {"mesh", mesh.shape().to_string()}, {"times_s", r.times}, {"median_s", med},
                          {"gflops", work / med * 1e-9}, {"percent_of_peak", 100 * work / med / (rate * P)},
                          {"local_gemm_gflops", rate * 1e-9}, {"lower_bound_words", lb},
                          {"words_max", r.words_max}, {"words_mean", r.words_mean},
                          {"algo_words_max", r.algo_words_max}, {"peak_rss_kib", r.peak_kb},
                          {"probe_error_eps", r.probe}, {"plan", r.plan}, {"time_ratio_to_last", med / base}};
      std::ofstream(cfg.json, std::ios::app) << j.dump() << "\n";
    }
  }
  if (!quiet) {
    for (const Row& r : rows) std::printf("plan %-10s %s\n", r.name.c_str(), r.plan.c_str());
    if (rows.size() > 1)
      std::printf("time ratio %s / %s = %.3f (median)\n", rows.front().name.c_str(), rows.back().name.c_str(),
                  median(rows.front().times) / base);
  }
  return rc;
}

int run_bench(const BenchConfig& cfg) {
  switch (parse_dtype(cfg.dtype)) {
    case Dtype::F32: return bench_typed<float>(cfg);
    case Dtype::F64: return bench_typed<double>(cfg);
    case Dtype::C64: return bench_typed<std::complex<float>>(cfg);
    case Dtype::C128: return bench_typed<std::complex<double>>(cfg);
  }
  return 2;
}

}  // namespace shardmm::cli
