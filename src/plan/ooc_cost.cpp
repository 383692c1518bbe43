// Out-of-core block choice (Hong & Kung): a bm x bn block of C stays resident while k-panels
// of op(A) (bm x kb) and op(B) (kb x bn) stream past it, two of each in flight. op(A) is read
// once per column of blocks (n / bn passes), op(B) once per row of blocks (m / bm passes), so
// larger blocks read less; the budget bounds bm*bn + 2 kb (bm + bn).
#include "plan/ooc_cost.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "shardmm/error.hpp"
#include "shardmm/mesh.hpp"
#include "shardmm/plan.hpp"

namespace shardmm::plan {
namespace {

constexpr index_t kMinSide = 16;                             // smallest block side / panel width
constexpr std::int64_t kOpBytes = std::int64_t{256} * 1024;  // a panel read's latency, in bytes
constexpr index_t kMaxPanelElems = index_t{1} << 30;         // one MPI read's count stays an int

index_t ceil_div(index_t a, index_t b) { return b == 0 ? 0 : (a + b - 1) / b; }

// Fills in blocks, passes and bytes of a shape.
void account(const OocProblem& p, OocPlan& s) {
  const index_t tm = ceil_div(p.m, s.bm), tn = ceil_div(p.n, s.bn);
  s.blocks = tm * tn;
  s.passes_a = static_cast<int>(tn);
  s.passes_b = static_cast<int>(tm);
  const index_t mine = ceil_div(s.blocks, p.ranks);  // the busiest rank's blocks
  const std::int64_t per_block_read = (s.bm + s.bn) * p.k + (p.with_c0 ? s.bm * s.bn : 0);
  s.bytes_read = mine * per_block_read * p.elem;
  s.bytes_written = mine * s.bm * s.bn * p.elem;
}

}  // namespace

std::int64_t ooc_buffer_bytes(const OocProblem& p, index_t bm, index_t bn, index_t kb) {
  const index_t c = bm * bn * (p.c0_staging ? 2 : 1);
  return (c + 2 * kb * (bm + bn)) * p.elem;
}

std::int64_t in_core_bytes(const OocProblem& p, Dtype dtype) {
  const std::int64_t a = ceil_div(p.m * p.k, p.ranks), b = ceil_div(p.k * p.n, p.ranks),
                     c = ceil_div(p.m * p.n, p.ranks);
  const std::int64_t tiles = (a + b + c) * p.elem;
  PlanRequest r;
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

OocPlan ooc_schedule(const OocProblem& p) {
  OocPlan best;
  best.m = p.m, best.n = p.n, best.k = p.k, best.budget = p.budget, best.ranks = p.ranks;
  best.min_budget = ooc_min_budget(p);
  best.out_of_core = true;
  if (p.budget < best.min_budget)
    throw OutOfMemory("memory limit of " + std::to_string(p.budget) +
                      " bytes per rank is too small for the out-of-core path: it needs at least " +
                      std::to_string(best.min_budget) + " bytes (a " +
                      std::to_string(std::min(p.m, kMinSide)) + "x" +
                      std::to_string(std::min(p.n, kMinSide)) + " block of C and two " +
                      std::to_string(std::min(p.k, kMinSide)) +
                      "-wide panels each of A and B); raise --memory-limit");
  const index_t words = p.budget / p.elem;
  double best_cost = std::numeric_limits<double>::infinity();
  const index_t kbs[] = {1024, 512, 256, 128, 64, 32, 16};
  const index_t tmax = std::min<index_t>(ceil_div(p.m, std::min(p.m, kMinSide)), 20000);
  for (index_t t = 1; t <= tmax; ++t) {
    const index_t bm = ceil_div(p.m, t);
    if (t > 1 && bm == ceil_div(p.m, t - 1)) continue;
    for (index_t kb0 : kbs) {
      const index_t kb = std::min(kb0, p.k);
      const index_t per_col = bm * (p.c0_staging ? 2 : 1) + 2 * kb;  // words per C column
      const index_t bn = std::min(p.n, (words - 2 * kb * bm) / std::max<index_t>(per_col, 1));
      if (bn < std::min(p.n, kMinSide) || bm * kb > kMaxPanelElems || bn * kb > kMaxPanelElems ||
          bm * bn > kMaxPanelElems)
        continue;
      OocPlan s = best;
      s.bm = bm, s.bn = bn, s.kb = kb;
      account(p, s);
      const index_t mine = ceil_div(s.blocks, p.ranks);
      const double cost = static_cast<double>(s.bytes_read) +
                          static_cast<double>(mine * 2 * ceil_div(p.k, kb) * kOpBytes);
      if (cost < best_cost) best_cost = cost, best = s;
    }
  }
  if (best.bm == 0) {  // the minimum shape fits by the check above
    best.bm = std::min(p.m, kMinSide), best.bn = std::min(p.n, kMinSide);
    best.kb = std::min(p.k, kMinSide);
    account(p, best);
  }
  return best;
}

double ooc_seconds(const OocPlan& s, std::int64_t elem, double flops_per_s,
                   double disk_bytes_per_s) {
  const double disk = std::max(disk_bytes_per_s, 1.0);
  const double flops =  // the busiest rank's: its blocks, or its share in core
      s.out_of_core ? 2.0 * static_cast<double>(ceil_div(s.blocks, s.ranks) * s.bm * s.bn * s.k)
                    : 2.0 * static_cast<double>(s.m * s.n) * static_cast<double>(s.k) / s.ranks;
  const double compute = flops / std::max(flops_per_s, 1.0);
  const double io = static_cast<double>(s.bytes_read + s.bytes_written) / disk;
  if (!s.out_of_core) return compute + io;  // read, multiply, write: one after the other
  const double first = static_cast<double>((s.bm + s.bn) * s.kb * elem) / disk;
  return std::max(compute, io) + first;  // panels read ahead while the previous multiplies
}

}  // namespace shardmm::plan
