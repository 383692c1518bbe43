// What a span costs when nothing traces or watches (outside a traced call, or with neither
// SHARDMM_TRACE nor SHARDMM_WATCHDOG set): one test of a global flag when it opens and one of
// its own index when it closes. A Google Benchmark program: the Time column is per span,
// against an empty loop; docs/PROFILING.md multiplies it by the spans of a call.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "trace/trace.hpp"

namespace {

using shardmm::trace::Cat;
using shardmm::trace::Span;

void empty_loop(benchmark::State& state) {
  std::int64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(++i);
}

// A step span as Timers::timed opens one.
void span_off(benchmark::State& state) {
  std::int64_t i = 0;
  for (auto _ : state) {
    const Span span("compute", Cat::Step, i);
    benchmark::DoNotOptimize(++i);
  }
}

// An exchange span with its arguments, as the comm wrappers write them.
void span_with_args_off(benchmark::State& state) {
  std::int64_t i = 0;
  for (auto _ : state) {
    Span span("ibcast", Cat::Comm);
    if (span) span.arg("bytes_sent", i).arg("root", std::int64_t{0});
    benchmark::DoNotOptimize(++i);
  }
}

BENCHMARK(empty_loop);
BENCHMARK(span_off);
BENCHMARK(span_with_args_off);

}  // namespace

BENCHMARK_MAIN();
