// Streamed block choice (Hong & Kung, timed): a bm x bn block of C stays resident while
// k-panels of op(A) (bm x kb) and op(B) (kb x bn) stream past it, two of each in flight, and
// the previous block is written from a second block buffer. op(A) is read once per column of
// blocks (n / bn passes), op(B) once per row of blocks (m / bm passes), so larger blocks read
// less; but narrow panels slow the GEMM, and the last block's write cannot overlap anything,
// so the shape is the one with the least predicted time, not the fewest bytes.
#include "plan/ooc_cost.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <vector>

#include "core/blocking.hpp"
#include "plan/request.hpp"
#include "shardmm/error.hpp"
#include "shardmm/mesh.hpp"
#include "shardmm/plan.hpp"

namespace shardmm::plan {
namespace {

constexpr index_t kMinSide = 16;                      // smallest block side / panel width
constexpr index_t kMaxPanelElems = index_t{1} << 30;  // one MPI read's count stays an int
// A rank copies what it writes from its buffers into the page cache, and the kernel writes it
// back, on the cores its GEMMs run on: bytes per second (the system time of a 2.5 GiB product
// from page-cached files: 1.4 GB/s per core). Reads cost the read path's rate (OocProblem).
constexpr double kWriteCopyBytesPerS = 1.5e9;
// Each step (a block x k-panel) costs two reads' set-up (views, requests): seconds.
constexpr double kStepSeconds = 100e-6;
// The buffers are touched once (huge pages, zeroed by the kernel): bytes per second.
constexpr double kTouchBytesPerS = 2e9;

index_t ceil_div(index_t a, index_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

// A block's GEMM seconds on one rank.
double block_seconds(const OocProblem& p, const OocPlan& s) {
  return 2.0 * static_cast<double>(s.bm * s.bn) * static_cast<double>(p.k) /
         (std::max(p.flops_per_s, 1.0) * panel_efficiency(s.kb, p.k));
}

// The stream cuts its last P blocks (one per rank) into kTailStrips strips of D's columns, so
// the ranks end a strip apart, when a block's k is one panel: a strip needs its block's whole
// panel of L (D's rows x k), which a rank computing the block's strips in a row keeps, so the
// strips read nothing more. With several panels each strip would read that panel again: on the
// long-k product (4 blocks of 2048 x 2048, k 32768) that was 0.75 GiB more per rank and slower
// on every I/O path, so such blocks stay whole. D's narrowest block needs a column per strip.
index_t tail_strips(const OocProblem& p, const OocPlan& s) {
  const index_t nd = p.d_is_c ? p.n : p.m, bnd = p.d_is_c ? s.bn : s.bm;
  const index_t narrowest = nd - (ceil_div(nd, bnd) - 1) * bnd;
  const bool cut = p.ranks > 1 && s.blocks >= p.ranks && narrowest >= kTailStrips && s.kb >= p.k;
  return cut ? kTailStrips : 1;
}

// The contiguous runs of a rows x cols sub-block of a matrix of `all_rows` x `all_cols` whose
// rows are contiguous in its file (`by_rows`; else its columns are): one per row (per column)
// unless those are whole, then one.
index_t runs(index_t rows, index_t cols, index_t all_rows, index_t all_cols, bool by_rows) {
  if (by_rows) return cols >= all_cols ? 1 : rows;
  return rows >= all_rows ? 1 : cols;
}

// The runs of one k-panel of op(A) (bm x kb) and of op(B) (kb x bn), as asked; a block reads
// k / kb of each.
index_t panel_runs(const OocProblem& p, const OocPlan& s, bool a, bool b) {
  return (a ? runs(s.bm, s.kb, p.m, p.k, p.orders.a_rows) : 0) +
         (b ? runs(s.kb, s.bn, p.k, p.n, p.orders.b_rows) : 0);
}

// Fills in blocks, passes, tail strips, bytes and runs of a shape.
void account(const OocProblem& p, OocPlan& s) {
  const index_t tm = ceil_div(p.m, s.bm), tn = ceil_div(p.n, s.bn);
  s.blocks = tm * tn;
  const index_t mine = ceil_div(s.blocks, p.ranks);  // the busiest rank's blocks
  // The stream computes D = C (Fortran-order output) or C^T, its blocks dealt round-robin down
  // D's block rows: when those divide the ranks, each rank keeps its rows of D, and with one
  // k-panel per block its panel of D's left operand is read once (stream.cpp, PanelSlots).
  const index_t td = p.d_is_c ? tm : tn;
  const bool kept = s.kb >= p.k && td > 0 && p.ranks % td == 0;
  const index_t left = p.d_is_c ? s.bm : s.bn, right = p.d_is_c ? s.bn : s.bm;
  const index_t left_reads = kept ? 1 : mine;
  s.passes_a = static_cast<int>(p.d_is_c && kept ? 1 : tn);
  s.passes_b = static_cast<int>(!p.d_is_c && kept ? 1 : tm);
  s.tail_strips = tail_strips(p, s);
  s.bytes_read =
      ((left_reads * left + mine * right) * p.k + (p.with_c0 ? mine * s.bm * s.bn : 0)) * p.elem;
  s.bytes_written = mine * s.bm * s.bn * p.elem;
  // The left operand's panels are read left_reads times, the right one's for every block.
  const index_t a_reads = p.d_is_c ? left_reads : mine, b_reads = p.d_is_c ? mine : left_reads;
  const index_t panels = ceil_div(p.k, s.kb);
  s.runs_read =
      panels * (a_reads * panel_runs(p, s, true, false) + b_reads * panel_runs(p, s, false, true)) +
      (p.with_c0 ? mine * runs(s.bm, s.bn, p.m, p.n, p.orders.c0_rows) : 0);
}

}  // namespace

std::int64_t ooc_buffer_bytes(const OocProblem& p, index_t bm, index_t bn, index_t kb) {
  const index_t c = bm * bn * (p.c0_staging ? 3 : 2);
  return (c + 2 * kb * (bm + bn)) * p.elem;
}

std::int64_t in_core_bytes(const OocProblem& p, Dtype dtype) {
  const std::int64_t a = ceil_div(p.m * p.k, p.ranks), b = ceil_div(p.k * p.n, p.ranks),
                     c = ceil_div(p.m * p.n, p.ranks);
  const std::int64_t tiles = (a + b + c) * p.elem;
  Request r;  // with the grid gemm's caller would have (current_pm/pn)
  r.m = p.m, r.n = p.n, r.k = p.k, r.ranks = p.ranks, r.dtype = dtype;
  r.memory_limit = std::numeric_limits<std::int64_t>::max();  // every candidate priced
  const std::vector<int> f = factor_near_square(p.ranks, 2);  // Mesh::grid2d's rows, cols
  r.current_pm = f[1], r.current_pn = f[0];
  std::int64_t leanest = std::numeric_limits<std::int64_t>::max();
  for (const Candidate& cand : plan_gemm(r).candidates)
    leanest = std::min(leanest, cand.memory_bytes + (cand.redist_words > 0 ? tiles : 0));
  return std::max(tiles + std::max({a, b, c}) * p.elem, leanest);
}

std::int64_t ooc_min_budget(const OocProblem& p) {
  return ooc_buffer_bytes(p, std::min(p.m, kMinSide), std::min(p.n, kMinSide),
                          std::min(p.k, kMinSide));
}

double panel_efficiency(index_t kb, index_t k) {
  if (kb >= k || kb % blocking::kKBlock == 0) return 1.0;
  if (kb >= blocking::kMinPanel) return 0.985;
  if (kb >= blocking::kNarrowPanel) return 0.90;
  if (kb >= 64) return 0.75;
  return kb >= 32 ? 0.55 : 0.35;
}

namespace {

// Of `read` bytes a rank reads, those the disk serves when the page cache held none of the
// operands at the start: all of them, or, when the operands stay in the cache between passes
// (OocProblem::rereads_cached), at most this rank's share of the operands' distinct bytes (a
// page one rank read, the other ranks on its node find cached).
double disk_read_bytes(const OocProblem& p, double read) {
  if (!p.rereads_cached) return read;
  const double distinct = static_cast<double>(p.m * p.k + p.k * p.n + (p.with_c0 ? p.m * p.n : 0)) *
                          static_cast<double>(p.elem) / static_cast<double>(std::max(p.ranks, 1));
  return std::min(read, distinct);
}

}  // namespace

// Every byte read costs the read path's copy, and every run its set-up, and every byte written
// the write's (in the GEMM's term); the bytes read that the page cache does not hold cost the
// disk too (disk_read_bytes), overlapped with the GEMMs unless the reads block. The busiest rank
// computes ceil(blocks / ranks) blocks; when the last blocks are cut into strips the ranks share
// those, and it computes its share of all blocks and half a strip more (they take items as they
// finish, so they end at most one strip apart). Edges: the first panels' read, the last
// block's write and sync, the first touch of the buffers.
void ooc_predict(const OocProblem& p, OocPlan& s) {
  const double disk = std::max(p.disk_bytes_per_s, 1.0), elem = static_cast<double>(p.elem);
  const double copy = std::max(p.read_copy_bytes_per_s, 1.0);
  const double c = std::clamp(p.cached, 0.0, 1.0);   // the share of reads the page cache serves
  const index_t mine = ceil_div(s.blocks, p.ranks);  // the busiest rank's blocks
  const double strips = static_cast<double>(s.tail_strips);
  const double gemm_blocks =
      s.tail_strips > 1
          ? static_cast<double>(s.blocks) / static_cast<double>(p.ranks) + 0.5 / strips
          : static_cast<double>(mine);
  const auto read = static_cast<double>(s.bytes_read),
             written = static_cast<double>(s.bytes_written);
  const double read_disk = disk_read_bytes(p, read) * (1.0 - c) / disk;
  s.predicted_compute = gemm_blocks * block_seconds(p, s) + read / copy +
                        static_cast<double>(s.runs_read) * p.read_run_seconds +
                        written / kWriteCopyBytesPerS +
                        static_cast<double>(mine * ceil_div(p.k, s.kb)) * kStepSeconds +
                        (p.reads_block ? read_disk : 0);
  s.predicted_disk = (p.reads_block ? 0 : read_disk) + written / disk;
  const double first = static_cast<double>((s.bm + s.bn) * s.kb) * elem;
  const auto first_runs = static_cast<double>(panel_runs(p, s, true, true));
  s.predicted_edges = first * ((1.0 - c) / disk + 1.0 / copy) + first_runs * p.read_run_seconds +
                      static_cast<double>(s.bm * s.bn) * elem / disk +
                      static_cast<double>(ooc_buffer_bytes(p, s.bm, s.bn, s.kb)) / kTouchBytesPerS;
  s.predicted_seconds = std::max(s.predicted_compute, s.predicted_disk) + s.predicted_edges;
}

namespace {

// Widths worth trying: the whole k, multiples of OpenBLAS's k block, then narrower.
std::vector<index_t> panel_widths(index_t k) {
  std::vector<index_t> w{k};
  for (index_t kb :
       {4 * blocking::kKBlock, 2 * blocking::kKBlock, blocking::kKBlock, blocking::kMinPanel,
        blocking::kNarrowPanel, index_t{64}, index_t{32}, index_t{16}})
    if (kb < k) w.push_back(kb);
  return w;
}

bool better(const OocPlan& a, const OocPlan& b) {  // a beats b
  if (b.bm == 0) return true;
  if (a.predicted_seconds < 0.995 * b.predicted_seconds) return true;
  return a.predicted_seconds <= 1.005 * b.predicted_seconds && a.bytes_read < b.bytes_read;
}

// The best shape with bm rows and kb-wide panels: the widest blocks the budget allows, or a
// few more columns of blocks (a shorter last write, a better spread over the ranks).
void try_rows(const OocProblem& p, index_t bm, index_t kb, OocPlan& best) {
  const index_t words = p.budget / p.elem;
  const index_t per_col = bm * (p.c0_staging ? 3 : 2) + 2 * kb;  // words per C column
  const index_t bn_max = std::min(p.n, (words - 2 * kb * bm) / std::max<index_t>(per_col, 1));
  if (bn_max < std::min(p.n, kMinSide) || bm * kb > kMaxPanelElems) return;
  const index_t u0 = ceil_div(p.n, bn_max);
  for (index_t u = u0; u <= std::min(p.n, u0 + 8); ++u) {
    const index_t bn = ceil_div(p.n, u);
    if (u > u0 && bn == ceil_div(p.n, u - 1)) continue;
    if (bn < std::min(p.n, kMinSide) || bn * kb > kMaxPanelElems || bm * bn > kMaxPanelElems) break;
    OocPlan s = best;
    s.bm = bm, s.bn = bn, s.kb = kb;
    account(p, s);
    ooc_predict(p, s);
    if (better(s, best)) best = s;
  }
}

}  // namespace

OocPlan ooc_schedule(const OocProblem& p) {
  OocPlan best;
  best.m = p.m, best.n = p.n, best.k = p.k, best.budget = p.budget, best.ranks = p.ranks;
  best.min_budget = ooc_min_budget(p);
  best.out_of_core = true;
  if (p.budget < best.min_budget)
    throw OutOfMemory("memory limit of " + std::to_string(p.budget) +
                      " bytes per rank is too small for the out-of-core path: it needs at least " +
                      std::to_string(best.min_budget) + " bytes (two " +
                      std::to_string(std::min(p.m, kMinSide)) + "x" +
                      std::to_string(std::min(p.n, kMinSide)) + " blocks of C and two " +
                      std::to_string(std::min(p.k, kMinSide)) +
                      "-wide panels each of A and B); raise --memory-limit");
  const index_t tmax = std::min<index_t>(ceil_div(p.m, std::min(p.m, kMinSide)), 4000);
  const std::vector<index_t> widths = panel_widths(p.k);
  OocPlan found = best;
  found.bm = 0;
  for (index_t t = 1; t <= tmax; ++t) {
    const index_t bm = ceil_div(p.m, t);
    if (t > 1 && bm == ceil_div(p.m, t - 1)) continue;
    for (index_t kb : widths) try_rows(p, bm, kb, found);
  }
  if (found.bm == 0) {  // the minimum shape fits by the check above
    found = best;
    found.bm = std::min(p.m, kMinSide), found.bn = std::min(p.n, kMinSide);
    found.kb = std::min(p.k, kMinSide);
    account(p, found);
    ooc_predict(p, found);
  }
  return found;
}

}  // namespace shardmm::plan
