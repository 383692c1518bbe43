// bench output: the table and the JSON records.
#pragma once

#include <string>
#include <vector>

#include "bench.hpp"
#include "shardmm/shardmm.hpp"

namespace shardmm::cli::bench {

/// One contender's results (rank 0 prints them).
struct Row {
  std::string name, plan;
  std::string error;  ///< why it failed (the same on every rank); empty: it ran
  std::vector<double> times;
  GemmReport report;
  double words_max = 0, words_mean = 0, algo_words_max = 0, probe = -1;
  long peak_kb = 0;
  int blas_threads = 0;
  /// Resident memory its first call added over local A + B + C (max over ranks); measured for
  /// the first contender only (later ones run after its peak), else -1.
  double own_extra_ratio = -1;
};

/// What every row is measured against.
struct Context {
  const BenchConfig& cfg;
  const Mesh& mesh;
  const Layout &A, &B, &C;
  double rate = 0;         ///< one core's GEMM rate measured in this run (flop/s)
  double work = 0;         ///< flops of one call
  double extra_bytes = 0;  ///< peak resident memory the calls added (max over ranks)
  double extra_ratio = 0;  ///< ... over the rank's local A + B + C bytes (max over ranks)
  double lower_bound = 0;  ///< words per rank any algorithm moves (0: none known, "-")
  double check_limit = 0;  ///< the check's PASS limit in eps (0: probe_limit(cfg), gemm's)
  /// The operation and its flags for the header and the JSON ("op=NN" for gemm; "syrk
  /// uplo=L trans=N", ...)
  std::string operation = "gemm";
};

/// Rank 0: the table (or nothing with --quiet), the JSON records (--json) and the ratios.
void report(const Context& ctx, const std::vector<Row>& rows);

}  // namespace shardmm::cli::bench
