// `shardmm bench`: times shardmm (and ScaLAPACK side by side) on generated operands.
#pragma once

#include <string>
#include <vector>

#include "shardmm/shardmm.hpp"

namespace shardmm::cli {

struct BenchConfig {
  /// gemm, or a PBLAS level-3 op (bench_blas3.cpp): symm hemm syrk herk syr2k her2k trmm trsm
  /// tran geadd, their flags from side / uplo / diag and transa (TRANS)
  std::string op = "gemm";
  std::string side = "L", uplo = "L", diag = "N";
  index_t m = 2048, n = 2048, k = 2048;
  std::string dtype = "f64";
  /// Run in this order, on the same data: Auto against ScaLAPACK, or against the P-core
  /// ceiling in a build without ScaLAPACK.
  std::vector<std::string> algos = {"auto", SHARDMM_HAVE_SCALAPACK ? "scalapack" : "cores"};
  std::string grid;  ///< "PxQ" operand mesh, or "PxQxC" 2.5D grid; empty: near-square
  index_t nb = 64;   ///< block size of the input layouts
  std::string layout_a, layout_b, layout_c;  ///< notation; empty: bc(nb,nb)
  /// "given" (--grid, --layout-a/-b/-c, else bc(nb,nb) on a near-square mesh) or
  /// "preferred": the mesh and layouts preferred_layouts chooses for the product
  std::string layouts = "given";
  Op transa = Op::N, transb = Op::N;
  double alpha = 1.0, beta = 0.0;
  int reps = 5, warmup = 1;
  bool check = true;
  std::string json;                    ///< append one JSON record per algorithm
  index_t panel = 0;                   ///< SUMMA C-stationary's panel width
  index_t stationary_chunk = 0;        ///< SUMMA A/B-stationary's chunk per owner
  index_t ring_chunk = 0;              ///< the ring's chunk at p = 2, its pass at p > 2
  std::string strassen_step = "auto";  ///< auto|breadth-first|depth-first
  std::string stationary = "auto";     ///< SUMMA variant: auto|A|B|C
  std::string ring_axis;
  std::string wire = "f32";   ///< --wire: f32 | bf16 | f16 (Options::wire)
  std::string wait = "auto";  ///< --wait: auto | spin | sleep (Options::wait)
  bool bidirectional = false;
  bool allow_fast = false;    ///< --allow-fast: Auto may pick Strassen
  std::string memory_limit;   ///< per rank for the planner, e.g. 512M
  std::string memory_growth;  ///< Auto's cap on added memory, e.g. 2 or unlimited
  bool progress = false, quiet = false;
  int blas_threads = 0;         ///< OpenBLAS threads per rank for every contender (0: as set)
  std::string trace;            ///< --trace: Options::trace of the products (docs/PROFILING.md)
  bool bare = false;            ///< only the calls (no reset, barrier, timing, check): for traffic
                                ///< counting with Open MPI's monitoring
  std::string scalapack_grid;   ///< "PxQ": ScaLAPACK's grid, if not the operands' mesh
  bool tune_scalapack = false;  ///< time ScaLAPACK on every grid and block size, print the best
  index_t batch = 0;            ///< --batch N: N products of m x n x k (gemm_batched), 0: one
  std::string merge = "auto";   ///< --merge: gemm_batched's BatchMerge (auto|never|always)
};

/// The probe check's limit in units of the element type's epsilon: 100, plus the wire format's
/// 2 u_w for f32 under --wire bf16|f16 (docs/ALGORITHMS.md, "Wire formats").
inline double probe_limit(const BenchConfig& cfg) {
  const double eps32 = 0x1p-23;
  if (cfg.dtype != "f32" && cfg.dtype != "float32" && cfg.dtype != "s") return 100;
  if (cfg.wire == "bf16") return 100 + 2 * 0x1p-8 / eps32;
  if (cfg.wire == "f16") return 100 + 2 * 0x1p-11 / eps32;
  return 100;
}

/// Runs the benchmark; returns the process exit code (0, or 3 when a check failed).
int run_bench(const BenchConfig& cfg);

/// bench --batch N (bench_batched.cpp): gemm_batched against the P-core ceiling.
int run_bench_batched(const BenchConfig& cfg);
/// run_bench for cfg.op other than gemm: shardmm's routine beside ScaLAPACK's p?<op>_ on the
/// same bc(nb,nb) operands (bench_blas3.cpp).
int run_bench_blas3(const BenchConfig& cfg);

/// The ops --op takes besides gemm.
const std::vector<std::string>& blas3_ops();

/// --tune-scalapack: times ScaLAPACK p?gemm on every P = p x q grid and nb in {64, 128,
/// 256} (one warm-up and cfg.reps calls each, capped at 3), prints each median and the best
/// as "scalapack best: grid PxQ nb NB median S s".
int run_tune_scalapack(const BenchConfig& cfg);

}  // namespace shardmm::cli
