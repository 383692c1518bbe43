#include "bench_report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench_util.hpp"
#include "mpi_util.hpp"

namespace shardmm::cli::bench {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  (void)std::snprintf(buf, sizeof buf, f, v);  // truncation only shortens a table cell
  return buf;
}

void print_header(const Context& c) {
  const BenchConfig& cfg = c.cfg;
  std::printf(
      "shardmm bench: m=%lld n=%lld k=%lld %s op=%s alpha=%g beta=%g on %d ranks, mesh %s\n",
      (long long)cfg.m, (long long)cfg.n, (long long)cfg.k, cfg.dtype.c_str(), c.operation.c_str(),
      cfg.alpha, cfg.beta, c.mesh.size(), c.mesh.shape().to_string().c_str());
  std::printf("inputs A %s, B %s, C %s; local GEMM rate %.1f GFLOP/s per rank; lower bound %.4g "
              "words/rank\n",
              c.A.spec().to_string().c_str(), c.B.spec().to_string().c_str(),
              c.C.spec().to_string().c_str(), c.rate * 1e-9, c.lower_bound);
  std::printf("BLAS: %s, %d thread(s) per rank\n", blas_vendor().c_str(), blas_threads());
  std::printf("%-10s %9s %9s %9s %8s %6s %12s %12s %6s %7s %6s %6s %6s %9s %4s %8s\n", "algorithm",
              "median_s", "min_s", "max_s", "GFLOP/s", "%peak", "words_max", "words_mean", "/LB",
              "algo/LB", "gemm%", "comm%", "redis%", "peak_MiB", "thr", "check");
}

void print_row(const Context& c, const Row& r) {
  if (!r.error.empty()) {
    std::printf("%-10s FAILED: %s\n", r.name.c_str(), r.error.c_str());
    return;
  }
  const double med = median(r.times), tot = r.report.seconds_total;
  const double lb = c.lower_bound;
  const bool ours = r.name != "scalapack" && r.name != "cores";
  auto mine = [&](const std::string& s) { return ours ? s : std::string("-"); };
  auto split = [&](double part) { return tot > 0 ? mine(fmt("%.0f", 100 * part / tot)) : "-"; };
  const bool flops = c.work > 0;  // the additions do none
  const double limit = c.check_limit > 0 ? c.check_limit : probe_limit(c.cfg);
  std::printf("%-10s %9.4f %9.4f %9.4f %8s %6s %12s %12s %6s %7s %6s %6s %6s %9.1f %4d %8s\n",
              r.name.c_str(), med, *std::min_element(r.times.begin(), r.times.end()),
              *std::max_element(r.times.begin(), r.times.end()),
              flops ? fmt("%.2f", c.work / med * 1e-9).c_str() : "-",
              flops ? fmt("%.1f", 100 * c.work / med / (c.rate * c.mesh.size())).c_str() : "-",
              mine(fmt("%.4g", r.words_max)).c_str(), mine(fmt("%.4g", r.words_mean)).c_str(),
              mine(lb > 0 ? fmt("%.3f", r.words_max / lb) : "-").c_str(),
              mine(lb > 0 ? fmt("%.3f", r.algo_words_max / lb) : "-").c_str(),
              split(r.report.seconds_gemm).c_str(), split(r.report.seconds_comm).c_str(),
              split(r.report.seconds_redist).c_str(), double(r.peak_kb) / 1024.0, r.blas_threads,
              r.probe < 0 ? "-" : (r.probe <= limit ? "PASS" : "FAIL"));
}

void append_json(const Context& c, const Row& r, double base) {
  const BenchConfig& cfg = c.cfg;
  if (!r.error.empty()) {
    const nlohmann::json j = {{"algorithm", r.name},
                              {"m", cfg.m},
                              {"n", cfg.n},
                              {"k", cfg.k},
                              {"dtype", cfg.dtype},
                              {"ranks", c.mesh.size()},
                              {"mesh", c.mesh.shape().to_string()},
                              {"error", r.error}};
    std::ofstream(cfg.json, std::ios::app) << j.dump() << "\n";
    return;
  }
  const double med = median(r.times);
  nlohmann::json j = {{"algorithm", r.name},
                      {"op", c.operation},
                      {"m", cfg.m},
                      {"n", cfg.n},
                      {"k", cfg.k},
                      {"dtype", cfg.dtype},
                      {"transa", to_string(cfg.transa)},
                      {"transb", to_string(cfg.transb)},
                      {"ranks", c.mesh.size()},
                      {"mesh", c.mesh.shape().to_string()},
                      {"layouts", cfg.layouts},  // given or preferred: these
                      {"layout_a", c.A.spec().to_string()},
                      {"layout_b", c.B.spec().to_string()},
                      {"layout_c", c.C.spec().to_string()},
                      {"nb", cfg.nb},
                      {"times_s", r.times},
                      {"median_s", med},
                      {"gflops", c.work / med * 1e-9},
                      {"percent_of_peak", 100 * c.work / med / (c.rate * c.mesh.size())},
                      {"local_gemm_gflops", c.rate * 1e-9},
                      {"lower_bound_words", c.lower_bound},
                      {"words_max", r.words_max},
                      {"words_mean", r.words_mean},
                      {"algo_words_max", r.algo_words_max},
                      {"peak_rss_kib", r.peak_kb},
                      {"blas_threads", r.blas_threads},
                      {"probe_error_eps", r.probe},
                      {"plan", r.plan},
                      {"time_ratio_to_last", med / base},
                      {"seconds_gemm", r.report.seconds_gemm},
                      {"seconds_comm", r.report.seconds_comm},
                      {"seconds_redist", r.report.seconds_redist},
                      {"seconds_total", r.report.seconds_total},
                      {"extra_resident_bytes", c.extra_bytes},
                      {"extra_over_local_abc", c.extra_ratio},
                      {"own_extra_over_local_abc", r.own_extra_ratio}};
  std::ofstream(cfg.json, std::ios::app) << j.dump() << "\n";
}

}  // namespace

void report(const Context& c, const std::vector<Row>& rows) {
  const bool quiet = c.cfg.quiet;
  if (!quiet) print_header(c);
  const Row* last = nullptr;  // the last contender that ran: the time ratios' base
  for (const Row& r : rows)
    if (r.error.empty()) last = &r;
  const double base = last != nullptr ? median(last->times) : 0;
  for (const Row& r : rows) {
    if (!quiet) print_row(c, r);
    if (!c.cfg.json.empty()) append_json(c, r, base);
  }
  if (quiet) return;
  for (const Row& r : rows)
    if (r.error.empty()) std::printf("plan %-10s %s\n", r.name.c_str(), r.plan.c_str());
  std::printf("memory: the calls added at most %.1f MiB resident per rank = %.3f x local A+B+C "
              "(peak over the resident operands)\n",
              c.extra_bytes / 1048576.0, c.extra_ratio);
  for (const Row& r : rows)
    if (last != nullptr && &r != last && r.error.empty())
      std::printf("time ratio %s / %s = %.3f (median)\n", r.name.c_str(), last->name.c_str(),
                  median(r.times) / base);
}

}  // namespace shardmm::cli::bench
