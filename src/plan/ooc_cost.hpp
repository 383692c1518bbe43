// The out-of-core schedule's cost: which C block shape (bm x bn) and k-panel width (kb) read
// the fewest bytes under a per-rank budget, and what the busiest rank reads and writes.
#pragma once

#include <cstdint>

#include "shardmm/ooc.hpp"

namespace shardmm::plan {

/// The product's sizes and what the budget must hold besides the panels.
struct OocProblem {
  index_t m = 0, n = 0, k = 0;
  std::int64_t elem = 8;  ///< bytes per element
  int ranks = 1;
  std::int64_t budget = 0;  ///< bytes per rank (0: none)
  bool with_c0 = false;     ///< beta != 0: C0's block is read once
  bool c0_staging = false;  ///< C0's order differs from C's: one more block-sized buffer
};

/// Bytes per rank the out-of-core buffers take: the C block (and C0 staging), two A panels
/// (bm x kb) and two B panels (kb x bn).
std::int64_t ooc_buffer_bytes(const OocProblem& p, index_t bm, index_t bn, index_t kb);

/// Bytes per rank the in-core path needs: the tiles of A, B and C read from the files (2D
/// block-cyclic on Mesh::grid2d's grid) plus a tile-sized staging buffer, or, when more, the
/// leanest of the planner's candidates for the product (its operands, result and buffers; a
/// candidate on another grid also holds the read tiles while it runs).
std::int64_t in_core_bytes(const OocProblem& p, Dtype dtype);

/// The least budget the out-of-core path accepts: a min(m,16) x min(n,16) block with
/// min(k,16)-wide panels.
std::int64_t ooc_min_budget(const OocProblem& p);

/// The block shape minimising the busiest rank's bytes read (each re-read of A or B counted,
/// plus 256 KiB per panel read for its latency) under the budget; the passes and bytes that
/// follow. Throws OutOfMemory (saying the minimum) when the budget is below ooc_min_budget.
OocPlan ooc_schedule(const OocProblem& p);

/// Predicted seconds of an out-of-core plan: reads and writes at `disk_bytes_per_s`, the
/// GEMM at `flops_per_s` per rank, overlapped (the larger of the two, plus the first panel).
double ooc_seconds(const OocPlan& s, std::int64_t elem, double flops_per_s,
                   double disk_bytes_per_s);

}  // namespace shardmm::plan
