// bench --batch N: times gemm_batched on N generated products of m x n x k against the
// P-core ceiling (each rank's share of the products, ceil(N / P) local GEMMs of m x n x k with
// no communication), run alternately call by call: --warmup and --reps timed calls each (the
// slowest rank's time, the median). Layouts: --layout-a/-b/-c in the batched notation
// (A[B_X,I,K_Y]), else the batch over every mesh axis when N >= P (each product on one rank) or
// over the first axis with the rows of A and C over the others. Check: entries of C from the global
// formulas on the ranks that hold them (a few per product), --no-check skips it.
#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>
#include <vector>

#include "algo_options.hpp"
#include "bench.hpp"
#include "bench_util.hpp"
#include "mpi_util.hpp"
#include "shardmm/batched.hpp"
#include "shardmm/runtime.hpp"

namespace shardmm::cli {
namespace {

using bench::max_over;

// Entry (i, j) of product b of operand `seed`.
template <Scalar T>
T batched_entry(index_t b, index_t i, index_t j, int seed) {
  return bench::entry<T>(i + 7 * b, j, seed);
}

std::string axes_of(const Mesh& mesh, std::size_t from) {
  std::string s = "{";
  for (std::size_t a = from; a < mesh.shape().names.size(); ++a)
    s += (a > from ? "," : "") + mesh.shape().names[a];
  return s + "}";
}

// The three batched layouts (stored A, stored B, C).
std::array<std::string, 3> batched_specs(const BenchConfig& cfg, const Mesh& mesh) {
  if (!cfg.layout_a.empty() || !cfg.layout_b.empty() || !cfg.layout_c.empty()) {
    if (cfg.layout_a.empty() || cfg.layout_b.empty() || cfg.layout_c.empty())
      throw InvalidArgument("bench --batch: give all of --layout-a/-b/-c or none");
    return {cfg.layout_a, cfg.layout_b, cfg.layout_c};
  }
  const bool ta = cfg.transa != Op::N, tb = cfg.transb != Op::N;
  if (cfg.batch >= mesh.size() || mesh.shape().ndims() == 1 || mesh.size() == 1) {
    const std::string b = mesh.size() > 1 ? "B_" + axes_of(mesh, 0) : "B";
    return {"A[" + b + ",I,K]", "B[" + b + ",K,J]", "C[" + b + ",I,J]"};
  }
  const std::string b = "B_{" + mesh.shape().names[0] + "}", rest = axes_of(mesh, 1);
  return {ta ? "A[" + b + ",K,I_" + rest + "]" : "A[" + b + ",I_" + rest + ",K]",
          tb ? "B[" + b + ",J,K]" : "B[" + b + ",K,J]", "C[" + b + ",I_" + rest + ",J]"};
}

// The P-core ceiling's operands: ceil(N / P) products of m x n x k per rank, each with its own
// A, B and C as a batch element has (no communication), so the ceiling moves the bytes the
// batch moves: with one C reused by every product it stayed in cache while the batch wrote
// N / P distinct C's, a difference of memory traffic, not of the library.
template <Scalar T>
struct Ceiling {
  index_t share = 0, m = 0, n = 0, k = 0;
  std::vector<T> a, b, c;  // share consecutive column-major operands each
  Ceiling(const BenchConfig& cfg, int P)
      : share((cfg.batch + P - 1) / P),
        m(cfg.m),
        n(cfg.n),
        k(cfg.k),
        a(std::size_t(std::max<index_t>(1, share * m * k)), T(1)),
        b(std::size_t(std::max<index_t>(1, share * k * n)), T(1)),
        c(std::size_t(std::max<index_t>(1, share * m * n))) {}
  void run() {
    for (index_t p = 0; p < share; ++p)
      local_gemm(Op::N, Op::N, m, n, k, T(1), a.data() + p * m * k, std::max<index_t>(1, m),
                 b.data() + p * k * n, std::max<index_t>(1, k), T(0), c.data() + p * m * n,
                 std::max<index_t>(1, m));
  }
};

// The wall time of `body` on every rank: from a barrier to a barrier, the slowest rank's. The
// closing barrier matters for the ceiling, whose ranks never wait on each other: with more
// ranks than cores a rank's GEMMs can run while another rank is descheduled, and each rank's
// own duration then leaves out the time its core went to the others (4 ranks on 2 cores
// measured a ceiling of 351 GFLOP/s, 1.8 x what the two cores can do).
template <class F>
double timed_call(MPI_Comm comm, F&& body) {
  SHARDMM_CLI_MPI(MPI_Barrier(comm));
  const double t0 = MPI_Wtime();
  body();
  SHARDMM_CLI_MPI(MPI_Barrier(comm));
  return max_over(MPI_Wtime() - t0, comm);
}

// gemm_batched and the P-core ceiling alternately, call by call (so a change in the machine's
// load falls on both alike): their median times.
template <Scalar T>
std::pair<double, double> time_batched(const BenchConfig& cfg, const BatchedMatrix<T>& A,
                                       const BatchedMatrix<T>& B, BatchedMatrix<T>& C,
                                       const Options& o, BatchMerge merge, BatchedReport& rep) {
  const Op ta = cfg.transa, tb = cfg.transb;
  const MPI_Comm comm = A.mesh().comm();
  Ceiling<T> ceiling(cfg, A.mesh().size());
  std::vector<double> times, ceiling_times;
  for (int r = 0; r < cfg.warmup + cfg.reps; ++r) {
    const double t =
        timed_call(comm, [&] { rep = gemm_batched(ta, tb, T(1), A, B, T(0), C, o, merge); });
    const double tc = timed_call(comm, [&] { ceiling.run(); });
    if (r >= cfg.warmup) times.push_back(t), ceiling_times.push_back(tc);
  }
  return {bench::median(times), bench::median(ceiling_times)};
}

// Largest relative error over a few entries of each local product (the entries the rank's
// primary replicas hold), max over ranks.
template <Scalar T>
double check_entries(const BenchConfig& cfg, BatchedMatrix<T>& C) {
  const Op ta = cfg.transa, tb = cfg.transb;
  double worst = 0;
  for (index_t p = 0; p < C.local_batch(); ++p) {
    const DistMatrix<T> S = C.slice(p);
    const index_t bg = C.global_batch(p);
    for (index_t s = 0; s < std::min<index_t>(3, S.local_rows() * S.local_cols()); ++s) {
      const index_t il = (s * 7) % S.local_rows(), jl = (s * 5) % S.local_cols();
      const index_t i = S.global_row(il), j = S.global_col(jl);
      T want(0);
      double mag = 0;
      for (index_t q = 0; q < cfg.k; ++q) {
        const T a = ta == Op::N ? batched_entry<T>(bg, i, q, 1) : batched_entry<T>(bg, q, i, 1);
        const T b = tb == Op::N ? batched_entry<T>(bg, q, j, 2) : batched_entry<T>(bg, j, q, 2);
        want += a * b;
        mag += std::abs(a) * std::abs(b);
      }
      worst = std::max(worst, std::abs(S.local(il, jl) - want) / std::max(mag, 1e-300));
    }
  }
  return max_over(worst, C.mesh().comm());
}

template <Scalar T>
int bench_batched_typed(const BenchConfig& cfg) {
  const Mesh mesh = operand_mesh(cfg);
  const auto specs = batched_specs(cfg, mesh);
  const bool ta = cfg.transa != Op::N, tb = cfg.transb != Op::N;
  BatchedMatrix<T> A(mesh, cfg.batch, ta ? cfg.k : cfg.m, ta ? cfg.m : cfg.k, specs[0]);
  BatchedMatrix<T> B(mesh, cfg.batch, tb ? cfg.n : cfg.k, tb ? cfg.k : cfg.n, specs[1]);
  BatchedMatrix<T> C(mesh, cfg.batch, cfg.m, cfg.n, specs[2]);
  A.fill([](index_t b, index_t i, index_t j) { return batched_entry<T>(b, i, j, 1); });
  B.fill([](index_t b, index_t i, index_t j) { return batched_entry<T>(b, i, j, 2); });
  const Options o = algo_options(cfg, "auto");
  BatchedReport rep;
  const auto [t, ceiling] = time_batched(cfg, A, B, C, o, parse_batch_merge(cfg.merge), rep);
  const double err = cfg.check ? check_entries(cfg, C) : 0;
  const double work = double(cfg.batch) * bench::flops(cfg.m, cfg.n, cfg.k, is_complex_v<T>);
  const double eps = std::is_same_v<real_t<T>, float> ? 0x1p-23 : 0x1p-52;
  const bool ok = err <= 100 * eps * double(std::max<index_t>(cfg.k, 1));
  if (mesh.rank() == 0 && !cfg.quiet) {
    std::printf("batched %lld x %lldx%lldx%lld %s on %d ranks (%s; A %s, B %s, C %s)\n",
                (long long)cfg.batch, (long long)cfg.m, (long long)cfg.n, (long long)cfg.k,
                cfg.dtype.c_str(), mesh.size(), mesh.shape().to_string().c_str(), specs[0].c_str(),
                specs[1].c_str(), specs[2].c_str());
    std::printf("  %-8s %10.4f s %9.2f GFLOP/s %6.1f %% of the P-core ceiling  [%s]\n", "batched",
                t, work / t * 1e-9, 100 * ceiling / t, rep.to_string().c_str());
    std::printf("  %-8s %10.4f s %9.2f GFLOP/s (ceil(N/P) local GEMMs per rank)\n", "cores",
                ceiling, work / ceiling * 1e-9);
    if (cfg.check)
      std::printf("  check: max relative entry error %.3g %s\n", err, ok ? "ok" : "FAILED");
  }
  return ok ? 0 : 3;
}

}  // namespace

int run_bench_batched(const BenchConfig& cfg) {
  if (cfg.batch < 0) throw InvalidArgument("bench --batch must be >= 0");
  return bench::with_dtype(cfg.dtype, [&]<Scalar T>() { return bench_batched_typed<T>(cfg); });
}

}  // namespace shardmm::cli
