// The out-of-core schedule's cost: which C block shape (bm x bn) and k-panel width (kb) read
// the fewest bytes under a per-rank budget, and what the busiest rank reads and writes.
#pragma once

#include <cstdint>

#include "shardmm/ooc.hpp"

namespace shardmm::plan {

/// The product's sizes, what the budget must hold besides the panels, and the rates the
/// schedule is timed at (MachineProfile's: GEMM flops and disk bytes per second per rank).
struct OocProblem {
  index_t m = 0, n = 0, k = 0;
  std::int64_t elem = 8;  ///< bytes per element
  int ranks = 1;
  std::int64_t budget = 0;  ///< bytes per rank (0: none)
  bool with_c0 = false;     ///< beta != 0: C0's block is read once
  bool c0_staging = false;  ///< C0's order differs from C's: one more block-sized buffer
  bool d_is_c = true;       ///< the output is in Fortran order (the stream computes C, not C^T)
  double flops_per_s = 30e9, disk_bytes_per_s = 1e9;
  double cached = 0;  ///< the share of the operands' bytes in the page cache (0-1)
  /// The node's free memory holds the operands and the result (plan_files: MemAvailable on
  /// every rank's node), so the page cache keeps what the first pass read: of the bytes it
  /// did not hold at the start, each comes from the disk once, and the passes after the first
  /// re-read them from the cache. False: every read of an uncached byte goes to the disk.
  bool rereads_cached = false;
  /// What a rank's read path copies out of the page cache per second (the profile's
  /// read_copy_bytes_per_s of the I/O method), on the cores the GEMMs run on.
  double read_copy_bytes_per_s = 1.5e9;
  /// What each contiguous run a read takes costs on top of its bytes (the profile's
  /// read_run_seconds of the I/O method), and how the files lie (the runs of a panel's read).
  double read_run_seconds = 0;
  FileOrders orders{};
  /// The reads complete inside the call that starts them (MPI-IO: Open MPI's collective reads),
  /// so they do not overlap the GEMMs: their disk time adds to the GEMMs' instead.
  bool reads_block = false;
};

/// How many strips the stream cuts each of its last `ranks` blocks into (OocPlan::tail_strips).
inline constexpr index_t kTailStrips = 4;

/// Bytes per rank the streamed schedule's buffers take: two C blocks (one computed while the
/// other is written; and a C0 staging block), two A panels (bm x kb), two B panels (kb x bn).
std::int64_t ooc_buffer_bytes(const OocProblem& p, index_t bm, index_t bn, index_t kb);

/// Bytes per rank the in-core path needs: the tiles of A, B and C read from the files (2D
/// block-cyclic on Mesh::grid2d's grid) plus a tile-sized staging buffer, or, when more, the
/// leanest of the planner's candidates for the product (its operands, result and buffers; a
/// candidate on another grid also holds the read tiles while it runs).
std::int64_t in_core_bytes(const OocProblem& p, Dtype dtype);

/// The least budget the streamed schedule accepts: min(m,16) x min(n,16) blocks with
/// min(k,16)-wide panels.
std::int64_t ooc_min_budget(const OocProblem& p);

/// The local GEMM's rate at panel width kb (of k) relative to one whole-k call, measured on one
/// core (bench/panel_width.cpp; core/blocking.hpp): 1 at multiples of OpenBLAS's k block.
double panel_efficiency(index_t kb, index_t k);

/// The block shape with the least predicted time (ooc_predict) under the budget, ties to the
/// fewest bytes read; the passes, bytes and predicted seconds that follow. Throws OutOfMemory
/// (saying the minimum) when the budget is below ooc_min_budget.
OocPlan ooc_schedule(const OocProblem& p);

/// Fills in the predicted seconds of a schedule's shape (bm, bn, kb, blocks, bytes): the
/// busiest rank's GEMMs at the panel width's efficiency plus the copies that share its core
/// (reads at the read path's rate), against the disk time of its bytes not in the page cache
/// and of its writes (the larger of the two: they overlap; reads that block add to the GEMMs
/// instead), plus what cannot overlap (the first panels' read, the last block's
/// write, half a strip's wait for the other ranks when the last blocks are cut).
void ooc_predict(const OocProblem& p, OocPlan& s);

}  // namespace shardmm::plan
