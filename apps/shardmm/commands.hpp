// `shardmm plan` and `shardmm calibrate`.
#pragma once

#include <string>

#include "shardmm/shardmm.hpp"

namespace shardmm::cli {

struct PlanConfig {
  index_t m = 0, n = 0, k = 0;
  int ranks = 1;
  std::string dtype = "f64";
  std::string memory_limit;   ///< bytes, or with K/M/G suffix
  std::string memory_growth;  ///< Auto's cap on added memory, e.g. 2 or unlimited
  std::string profile;        ///< JSON from `calibrate`; default SHARDMM_PROFILE or built-ins
  std::string io = "posix";   ///< out of core: the read path the streamed plan is priced for
  int rows = 12;
  bool json = false;                  ///< one JSON object instead of the table
  bool allow_fast = false;            ///< price Strassen too
  Op transa = Op::N, transb = Op::N;  ///< op(A), op(B), for what --grid saves
  std::string grid;  ///< "PxQ": the operands are block-cyclic on this grid already (as
                     ///< gemm sees ScaLAPACK-style inputs), so SUMMA there moves nothing in
  index_t nb = 64;   ///< with grid: the block size of those bc(nb, nb) operands
  /// With grid: the operands' layouts on that mesh instead (notation, e.g. A[I_x,J_y]; empty:
  /// bc(nb, nb)), as gemm's Auto sees them.
  std::string layout_a, layout_b, layout_c;
  /// Hosts the ranks span: above 1 the GEMMs poll the messages in flight, as gemm does on a
  /// mesh across nodes (PlanRequest::relays_in_gemm).
  int hosts = 1;
  /// gemm, or a PBLAS level-3 routine (plan_blas3.cpp) with its flags; its operands' extents
  /// as bench --op takes them from m, n, k.
  std::string op = "gemm";
  std::string side = "L", uplo = "L", diag = "N";
};

/// Prints the candidate table and the choice on rank 0; no communication.
int run_plan(const PlanConfig& cfg);
/// plan --op OTHER than gemm: the PBLAS level-3 planner's table (plan_blas3.cpp).
int run_plan_blas3(const PlanConfig& cfg);

struct CalibrateConfig {
  std::string output;  ///< write the profile JSON here (rank 0)
  int reps = 20;
  /// Strassen's crossover: one Winograd step against one GEMM at n = 256, 384, 512, 768, ...
  /// up to this; the first n where the step wins (0: not measured, the default stays).
  index_t crossover_max = 3072;
  /// Bytes per rank of MPI-IO's page-cache read probe (measure_mpiio_reads), as
  /// parse_bytes reads them; "0": not measured, the profile keeps the default rate.
  std::string read_probe = "64M";
};

/// Measures latency, bandwidth and the local GEMM rate per type on the current ranks.
int run_calibrate(const CalibrateConfig& cfg);

/// "512M" -> 536870912, "4MB" -> 4000000: the library's reader (shardmm/plan.hpp), the one
/// every size option and SHARDMM_MEMORY_LIMIT go through.
using shardmm::parse_bytes;

}  // namespace shardmm::cli
