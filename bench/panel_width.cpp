// How the width of a rank-w update and the way it is cut change one core's DGEMM rate:
// C (m x n) += A (m x k) * B (k x n) done as k/w rank-w updates, each in 1, 2 or 4 column
// chunks, against one whole-k call (w = k, 1 chunk). SUMMA's panel width tiers and its k
// pieces (src/core/blocking.hpp, src/algo/summa.cpp) come from this. A Google Benchmark
// program; arguments m, n, k, w, chunks; counters GFLOP/s and of_whole_k (this rate over the
// whole-k call's at the same m, n, k). Run one copy per core at once, as the ranks do (one
// line; bench/README.md):
//   for r in 1 2; do OPENBLAS_NUM_THREADS=1 build/bench_panel_width --benchmark_min_time=3
//     --benchmark_filter=m:2048/ >pw.$r.txt & done; wait
#include <benchmark/benchmark.h>
#include SHARDMM_CBLAS_HEADER

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// The operands of one size, kept between benchmarks of that size (no reallocation, no first
// touch inside a measurement).
struct Operands {
  int m = 0, n = 0, k = 0;
  std::vector<double> A, B, C;
  void resize(int mm, int nn, int kk) {
    if (mm == m && nn == n && kk == k) return;
    m = mm, n = nn, k = kk;
    A.assign(std::size_t(m) * std::size_t(k), 0.0);
    B.assign(std::size_t(k) * std::size_t(n), 0.0);
    C.assign(std::size_t(m) * std::size_t(n), 0.0);
    for (std::size_t i = 0; i < A.size(); ++i) A[i] = double(i % 7) * 0.1;
    for (std::size_t i = 0; i < B.size(); ++i) B[i] = double(i % 5) * 0.1;
  }
};

Operands& operands(int m, int n, int k) {
  static Operands x;
  x.resize(m, n, k);
  return x;
}

// C += A B as rank-w updates, each cut into `chunks` column ranges; seconds taken.
double run(Operands& x, int w, int chunks) {
  const int m = x.m, n = x.n, k = x.k, ch = (n + chunks - 1) / chunks;
  const auto t0 = Clock::now();
  for (int k0 = 0; k0 < k; k0 += w) {
    const int kw = std::min(w, k - k0);
    for (int j0 = 0; j0 < n; j0 += ch)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, std::min(ch, n - j0), kw, 1.0,
                  &x.A[std::size_t(k0) * std::size_t(m)], m,
                  &x.B[std::size_t(k0) + std::size_t(j0) * std::size_t(k)], k, 1.0,
                  &x.C[std::size_t(j0) * std::size_t(m)], m);
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The fastest whole-k call seen at each size, the reference of every width's ratio. The
// whole-k row (registered first for its size) sets it; when a filter leaves that row out, the
// first width measured at the size takes one warm-up and the best of three calls.
std::map<std::array<int, 3>, double>& whole_k_best() {
  static std::map<std::array<int, 3>, double> best;
  return best;
}

double whole_k_seconds(Operands& x) {
  const std::array<int, 3> key{x.m, x.n, x.k};
  auto& cache = whole_k_best();
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  run(x, x.k, 1);
  double best = run(x, x.k, 1);
  for (int r = 0; r < 2; ++r) best = std::min(best, run(x, x.k, 1));
  return cache[key] = best;
}

// Counters from the fastest iteration (the rate the kernel reaches when nothing else runs on
// the core: the old program's best of three; the Time column stays the framework's mean).
void panel_width(benchmark::State& state) {
  const auto m = int(state.range(0)), n = int(state.range(1)), k = int(state.range(2));
  const auto w = int(state.range(3)), chunks = int(state.range(4));
  const bool whole = w >= k && chunks == 1;
  Operands& x = operands(m, n, k);
  if (!whole) whole_k_seconds(x);
  double best = 1e300;
  for ([[maybe_unused]] auto _ : state) {
    const double t = run(x, w, chunks);
    state.SetIterationTime(t);
    best = std::min(best, t);
  }
  benchmark::DoNotOptimize(x.C.data());
  double& reference = whole_k_best().try_emplace({m, n, k}, best).first->second;
  if (whole) reference = std::min(reference, best);
  state.counters["GFLOP/s"] = 2.0 * m * n * double(k) / best * 1e-9;
  state.counters["of_whole_k"] = reference / best;
}

// The sizes: docs' table (C 2048 x 4096, k = 4096) and a small one for quick checks and the
// test (m:256/). Per size: the whole-k call, then w = 128 .. 1024 in 1, 2 and 4 chunks.
void widths(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k", "w", "chunks"});
  for (const std::array<std::int64_t, 3> s : {std::array<std::int64_t, 3>{256, 512, 1024},
                                              std::array<std::int64_t, 3>{2048, 4096, 4096}}) {
    b->Args({s[0], s[1], s[2], s[2], 1});
    for (const std::int64_t w : {128, 256, 384, 512, 768, 1024})
      for (const std::int64_t chunks : {1, 2, 4})
        if (w < s[2] || chunks > 1) b->Args({s[0], s[1], s[2], w, chunks});  // not whole k again
  }
}

}  // namespace

BENCHMARK(panel_width)->Apply(widths)->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
