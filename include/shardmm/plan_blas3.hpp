// The planner of the PBLAS level-3 family beside gemm's (plan.hpp): per routine, its candidate
// algorithms priced from the operands' layouts (words each rank receives, flops, memory,
// predicted time), the routine's own lower bound, the choice and why. Pure: no communication;
// the routines of blas3.hpp call plan_blas3 on their operands' layouts and run the chosen
// algorithm, and `shardmm plan --op` prints the same plan.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardmm/blas3.hpp"
#include "shardmm/layout.hpp"
#include "shardmm/plan.hpp"

namespace shardmm {

/// The routines the planner knows (tran covers tranu / tranc; tradd plans as geadd).
enum class Blas3Routine { Symm, Hemm, Syrk, Herk, Syr2k, Her2k, Trmm, Trsm, Tran, Geadd };

std::string to_string(Blas3Routine r);
/// "syrk", "trsm", ... (throws InvalidArgument naming the text otherwise).
Blas3Routine parse_blas3_routine(std::string_view text);

/// One call to plan: the routine, its flags, its extents as the launcher names them (output m x
/// n; the rank-k updates' C is n x n with op(A) n x k; symm / trmm / trsm's A is m x m for side
/// Left, n x n for Right), the ranks and the machine. With layouts (A, B if the routine has one,
/// and the output C, or B for trmm / trsm, all as stored on one mesh of `ranks` ranks) the words
/// are exact per rank; without, operands bc(nb, nb) on the near-square grid are assumed.
struct Blas3Request {
  Blas3Routine routine = Blas3Routine::Syrk;
  Side side = Side::Left;
  Uplo uplo = Uplo::Lower;
  Op op = Op::N;  ///< trans (rank-k, trmm, trsm, tran, geadd)
  std::int64_t m = 0, n = 0, k = 0;
  int ranks = 1;
  Dtype dtype = Dtype::F64;
  std::int64_t nb = 64;  ///< the assumed operands' block size (no layouts given)
  /// As PlanRequest's: bytes per rank (0: SHARDMM_MEMORY_LIMIT or none) and the lean cap on
  /// what a candidate adds, a multiple of the caller's tiles (0: SHARDMM_MEMORY_GROWTH, else
  /// kLeanMemoryGrowth; negative: no cap).
  std::int64_t memory_limit = 0;
  double memory_growth = 0;
  MachineProfile profile;
  std::optional<Layout> a, b, out;
};

/// One way to run the routine and its cost on the busiest rank.
struct Blas3Candidate {
  /// "triangle" (rank-k: C stays, op(A)'s rows move beside C's rows and columns), "reduce"
  /// (rank-k: op(A) split along k, local triangles summed into C), "steps" (trmm / trsm: B
  /// stays, op(A)'s rows beside B's, one block broadcast per step), "local" (trmm / trsm: B's
  /// columns whole on each rank, op(A) on every rank, local BLAS), "square+gemm" (symm / hemm),
  /// "redistribute" (tran / geadd).
  std::string algorithm;
  int pr = 1, pc = 1;             ///< the output's grid: process rows x columns of its layout
  double words = 0;               ///< received by the busiest rank (exact for given layouts)
  double messages = 0;            ///< sent by the busiest rank (latency)
  double flops = 0;               ///< per rank, real arithmetic
  std::int64_t memory_bytes = 0;  ///< workspace the call adds on the busiest rank
  double seconds = 0;             ///< predicted
  bool fits = true;               ///< memory_bytes within the plan's cap
  std::string detail;             ///< what moves, e.g. "op(A) rows -> [I_x,K] and [J_y,K]"
  [[nodiscard]] std::string name() const;  ///< "triangle 2x2"
};

struct Blas3Plan {
  Blas3Request request;
  std::vector<Blas3Candidate> candidates;  ///< cheapest first
  Blas3Candidate chosen;
  double lower_bound = 0;  ///< words per rank (blas3_lower_bound)
  double flops = 0;        ///< the routine's total, real arithmetic (blas3_flops)
  /// Bytes a candidate may add per rank: the memory limit (SHARDMM_MEMORY_LIMIT), else the
  /// lean growth cap (SHARDMM_MEMORY_GROWTH, kLeanMemoryGrowth) times the caller's tiles; 0:
  /// none. Candidates over it are chosen only when none is within it.
  std::int64_t cap_bytes = 0;
  std::string why;  ///< one sentence: why the chosen one
  /// The table: candidates with words / lower bound, memory, time; the choice and why.
  [[nodiscard]] std::string explain() const;
};

/// Prices every candidate of the routine and picks the fastest predicted one within the
/// memory cap (on a near tie the one with fewer words). Throws DimensionMismatch when given layouts
/// do not fit the extents, NotSupported for an unreduced output.
Blas3Plan plan_blas3(const Blas3Request& request);

/// Total flops of one call (complex: 4 real multiplies and adds per multiply-add): symm / hemm
/// 2 m n na, the rank-k updates n (n + 1) k (twice for syr2k / her2k), trmm / trsm na (na + 1)
/// times the other extent; tran, geadd 0.
double blas3_flops(const Blas3Request& q);

/// A memory-independent lower bound on the words the busiest of P ranks receives, from the
/// Loomis-Whitney inequality on the routine's multiply-add triples as for gemm
/// (docs/ALGORITHMS.md); 0 where it gives nothing (and for tran / geadd, which have no triples).
double blas3_lower_bound(const Blas3Request& q);

}  // namespace shardmm
