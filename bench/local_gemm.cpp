// The local kernel's rate: one C (m x n) += A (m x k) * B (k x n) through OpenBLAS
// (cblas_sgemm, _dgemm, _cgemm, _zgemm: f32, f64, c64, c128), column-major, no transposes,
// at a few square sizes. What every algorithm's local step runs at on one core, and what
// `shardmm calibrate` puts in a machine profile's gemm_gflops (there: 512^3 on every rank at
// once). A Google Benchmark program; arguments m, n, k; counter GFLOP/s, the fastest call's
// (complex: 8 m n k flops per call; the Time column is the mean). Run one copy per core at
// once, as the ranks do:
//   for r in 1 2; do OPENBLAS_NUM_THREADS=1 build/bench_local_gemm > lg.$r.txt & done; wait
#include <benchmark/benchmark.h>
#include SHARDMM_CBLAS_HEADER

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

template <class T>
struct is_complex : std::false_type {};
template <class R>
struct is_complex<std::complex<R>> : std::true_type {};

void gemm(int m, int n, int k, const float* A, const float* B, float* C) {
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0F, A, m, B, k, 1.0F, C, m);
}
void gemm(int m, int n, int k, const double* A, const double* B, double* C) {
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, A, m, B, k, 1.0, C, m);
}
void gemm(int m, int n, int k, const std::complex<float>* A, const std::complex<float>* B,
          std::complex<float>* C) {
  const std::complex<float> one(1.0F, 0.0F);
  cblas_cgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, &one, A, m, B, k, &one, C, m);
}
void gemm(int m, int n, int k, const std::complex<double>* A, const std::complex<double>* B,
          std::complex<double>* C) {
  const std::complex<double> one(1.0, 0.0);
  cblas_zgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, &one, A, m, B, k, &one, C, m);
}

template <class T>
void local_gemm(benchmark::State& state) {
  const auto m = int(state.range(0)), n = int(state.range(1)), k = int(state.range(2));
  std::vector<T> A(std::size_t(m) * std::size_t(k)), B(std::size_t(k) * std::size_t(n)),
      C(std::size_t(m) * std::size_t(n), T(0));
  using R = decltype(std::real(T{}));
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = T(R(i % 7) / R(10));
  for (std::size_t i = 0; i < B.size(); ++i) B[i] = T(R(i % 5) / R(10));
  gemm(m, n, k, A.data(), B.data(), C.data());  // warm-up: OpenBLAS's buffers, C's pages
  double best = 1e300;
  for ([[maybe_unused]] auto _ : state) {
    const auto t0 = Clock::now();
    gemm(m, n, k, A.data(), B.data(), C.data());
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    state.SetIterationTime(t);
    best = std::min(best, t);
  }
  benchmark::DoNotOptimize(C.data());
  state.counters["GFLOP/s"] = (is_complex<T>::value ? 8.0 : 2.0) * m * n * double(k) / best * 1e-9;
}

// Square sizes: 64 (quick checks and the test: /m:64/), 256, 512 (calibrate's), 1024, 2048.
void sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k"});
  for (const std::int64_t s : {64, 256, 512, 1024, 2048}) b->Args({s, s, s});
}

}  // namespace

BENCHMARK(local_gemm<float>)
    ->Name("local_gemm/f32")
    ->Apply(sizes)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(local_gemm<double>)
    ->Name("local_gemm/f64")
    ->Apply(sizes)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(local_gemm<std::complex<float>>)
    ->Name("local_gemm/c64")
    ->Apply(sizes)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(local_gemm<std::complex<double>>)
    ->Name("local_gemm/c128")
    ->Apply(sizes)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
