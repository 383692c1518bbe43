// Cost of a Strassen candidate (pure; src/algo/strassen*.cpp is what it prices). On 1 x P (the
// line form) op(A)'s k pieces travel and each is one recursion of m x n/P x k/P, the next piece
// arriving during the current product; on P x 1 (the column form) op(B)'s pieces do the same,
// recursions of m/P x n x k/P. On a pm x pn grid with both above 1 (the grid form) op(A)'s and
// op(B)'s pieces of k are broadcast along the rows and columns of ranks, priced as max(pm, pn)
// pieces of k / max(pm, pn) (the owner pairs of block or equal-block cyclic maps on a square
// grid), nothing overlapping. core/winograd.hpp decides the levels and the scratch.
#include <algorithm>
#include <cmath>

#include "core/winograd.hpp"
#include "plan/cost_model.hpp"

namespace shardmm::plan {
namespace {

// Rate of the recursion's element-wise additions per rank (bytes moved through memory): they
// stream from memory, unlike the GEMMs; a conservative figure for one core of these VMs.
constexpr double kAddBytesPerS = 6e9;

// The breadth-first step (strassen_caps.cpp) on P = 7 Q ranks, priced as it runs:
// - A and B into the quadrant-aligned layouts and C out of it: each rank's share of each,
//   priced as all of it moving (the caller's layouts are any);
// - the fourteen stacked operands to the groups and the seven products back: 7/4 of a rank's
//   share of A, B and C, padded;
// - one group's product, transposed: n1 x m1 x k1 on Q ranks, its operands already in place:
//   another step when the ranks and shape allow (priced by this same function), else the
//   column form;
// - the additions: 14 reads and 7 writes of a quadrant tile per stack of A and of B, 14 and 4
//   for C's quadrants, at the streaming rate; nothing overlaps.
// Memory: the caller's A, B and C, the step's three regions (winograd::caps_regions; the
// redistributions' buffers live in them), and the group product's beyond the operands it is
// handed (a group of one rank: the recursion's scratch below its first level, which overwrites
// the pair).
void evaluate_distributed(const Request& r, Candidate& c);

// NOLINTNEXTLINE(misc-no-recursion): a group's step has 7 x fewer ranks, so it ends
void evaluate_caps(const Request& r, Candidate& c) {
  const int P = r.ranks, Q = P / winograd::kCapsGroups;
  const double m = double(r.m), n = double(r.n), k = double(r.k),
               elem = double(dtype_size(r.dtype));
  const std::int64_t m1 = winograd::caps_half(r.m, P), n1 = winograd::caps_half(r.n, P),
                     k1 = (r.k + 1) / 2;
  const double bm = double(m1) / P, bn = double(n1) / P, K1 = double(k1);  // exact
  // The group's product M^T = T^T S^T: n1 x m1 x k1, rows of M^T split over its Q ranks.
  Request g = r;
  g.ranks = Q, g.m = n1, g.n = m1, g.k = k1, g.current_pm = Q, g.current_pn = 1;
  g.resident = 0;
  const std::int64_t crossover =
      r.fast_crossover > 0 ? r.fast_crossover : r.profile.strassen_crossover;
  const bool again = winograd::caps_by_rule(Q, n1, m1, k1, crossover);  // the group steps too
  Candidate sub =
      again ? Candidate{Algorithm::Strassen,       Stationary::C,        RingForm::Auto, 1,
                        Q / winograd::kCapsGroups, winograd::kCapsGroups}
            : Candidate{Algorithm::Strassen, Stationary::C, RingForm::Auto, Q, 1, 1};
  // Another step has 7 x fewer ranks, so the recursion ends.
  if (again) evaluate_caps(g, sub);  // NOLINT(misc-no-recursion)
  else evaluate_distributed(g, sub);
  if (Q == 1) {  // one local recursion that overwrites the pair: scratch only below its first level
    const int L = winograd::levels(n1, m1, k1, crossover);
    sub.memory_bytes = static_cast<std::int64_t>(
        elem * double(m1 * k1 + k1 * n1 + m1 * n1 + winograd::overwriting_scratch(n1, m1, k1, L)));
  }
  const double stacks = 7 * (bm * K1 + K1 * bn + bm * double(n1));  // per rank, each way
  c.words = stacks * (1 - 1.0 / P) + sub.words;
  c.redist_words = (m * k + k * n + m * n) / P * (1 - 1.0 / P);
  c.messages = 5.0 * (P - 1) + sub.messages;
  const double traffic = 21 * bm * K1 + 21 * K1 * bn + 18 * bm * double(n1);
  c.flops = sub.flops + traffic / 3;
  const double share = (m * k + k * n + m * n) / P;
  winograd::CapsTiles t;
  t.a = 2 * bm * k, t.b = 2 * bn * k, t.c = 2 * bm * n;
  t.left = t.left_g = 7 * bm * K1, t.right = t.right_g = 7 * bn * K1;
  t.products = t.products_g = 7 * bm * double(n1);
  t.caller_a = m * k / P, t.caller_b = k * n / P, t.caller_c = m * n / P;
  t.split = Q > 1;
  const std::array<double, 3> regions = winograd::caps_regions(t);
  const double handed = t.left_g + t.right_g + t.products_g;  // the group's tiles
  c.memory_bytes =
      static_cast<std::int64_t>(elem * (share + regions[0] + regions[1] + regions[2] - handed)) +
      sub.memory_bytes;
  c.seconds = sub.seconds + traffic * elem / kAddBytesPerS +
              (c.words - sub.words + c.redist_words) * elem / r.profile.bytes_per_s +
              r.profile.latency_s * 5 * (P - 1);
}

// The classical distribution's forms (line, column, grid, one rank), Strassen locally.
void evaluate_distributed(const Request& r, Candidate& c) {
  const double P = r.ranks, m = double(r.m), n = double(r.n), k = double(r.k);
  const double pm = c.pm, pn = c.pn, elem = double(dtype_size(r.dtype));
  const bool cplx = r.dtype == Dtype::C64 || r.dtype == Dtype::C128;
  const auto ml = static_cast<std::int64_t>(up(m, pm)), nl = static_cast<std::int64_t>(up(n, pn));
  const std::int64_t crossover =
      r.fast_crossover > 0 ? r.fast_crossover : r.profile.strassen_crossover;
  const bool line = c.pm == 1 && c.pn > 1, column = c.pn == 1 && c.pm > 1;
  const double pl = line ? pn : column ? pm : 1;  // ranks along the line or column
  // Two ranks: one product over both pieces when they split evenly (strassen_pair.cpp).
  const auto piece = static_cast<std::int64_t>(up(k, pl));
  const int pair = line && c.pn == 2 && r.k % 2 == 0
                       ? winograd::pair_levels(ml, nl, piece, piece, crossover)
                       : 0;
  const bool grid = c.pm > 1 && c.pn > 1;
  const bool pieces = (line || column) && !pair;  // one product per piece
  const double grid_n = std::max(pm, pn);
  const std::int64_t kl = pieces ? piece : grid ? static_cast<std::int64_t>(up(k, grid_n)) : r.k;
  const double products_n = pieces ? pl : grid ? grid_n : 1;
  const int L = pair ? pair : winograd::levels(ml, nl, kl, crossover);
  // Line: op(A)'s pieces from the P - 1 others; column: op(B)'s. Grid: op(A)'s pieces along
  // the column axes and op(B)'s along the row axes. A and C also move when the caller's grid
  // is another one.
  c.words = line     ? m * k * (1 - 1 / pn)
            : column ? k * n * (1 - 1 / pm)
                     : double(ml) * k * (1 - 1 / pn) + k * double(nl) * (1 - 1 / pm);
  const bool on_grid = c.pm == r.current_pm && c.pn == r.current_pn;
  c.redist_words = on_grid || r.ranks == 1 ? 0 : (m * k + m * n) / P * (1 - 1 / P);
  c.messages = r.ranks > 1 ? 2 * (P - 1) + (c.redist_words > 0 ? 2 * (P - 1) : 0) : 0;
  const double products =
      products_n * (cplx ? 8 : 2) * double(ml) * double(nl) * double(kl) * std::pow(7.0 / 8.0, L);
  const double traffic = products_n * winograd::addition_traffic(ml, nl, kl, L);
  c.flops = products + traffic / 3;
  const std::int64_t scratch =
      pair ? winograd::pair_scratch(ml, nl, piece, pair) : winograd::scratch(ml, nl, kl, L);
  // The operands as held (line, column: the moving one's own piece, the staying one whole
  // along k; grid: both split along k; one rank: whole), C's tile and the scratch; line and
  // column: the receive buffers and the staying operand's packed k (priced as if its k were
  // not one run); grid: one panel of each operand.
  const std::int64_t span = column ? nl : ml, other = column ? ml : nl;
  const auto k_of_a = static_cast<std::int64_t>(up(k, pn)),
             k_of_b = static_cast<std::int64_t>(up(k, pm));
  const std::int64_t held = pieces ? span * kl + other * r.k + ml * nl
                            : grid ? ml * k_of_a + k_of_b * nl + ml * nl
                                   : ml * r.k + r.k * nl + ml * nl;
  const std::int64_t pack = pieces ? other * kl : grid ? ml * kl + kl * nl : 0;
  const int buffers =
      pieces ? winograd::line_buffers(static_cast<int>(pl), span * kl, pack + scratch, held) : 0;
  c.memory_bytes = static_cast<std::int64_t>(
      elem * double(held + std::int64_t{buffers} * span * kl + pack + scratch));
  const double compute = products / r.profile.flops_per_s(r.dtype) + traffic * elem / kAddBytesPerS;
  const double comm =
      (c.words + c.redist_words) * elem / r.profile.bytes_per_s + r.profile.latency_s * c.messages;
  // Line and column: each piece arrives while the previous one is multiplied; only the first is
  // waited for.
  c.seconds = line || column ? compute + comm / pl + std::max(0.0, comm * (1 - 1 / pl) - compute)
                             : compute + comm;
}

}  // namespace

Tiles evaluate_strassen(const Request& r, Candidate& c, bool& moves_itself) {
  moves_itself = c.pk == winograd::kCapsGroups;
  if (moves_itself) {
    evaluate_caps(r, c);
    return {};
  }
  evaluate_distributed(r, c);
  // The tiles memory_bytes counts (evaluate_distributed's `held`), per operand.
  const double m = double(r.m), n = double(r.n), k = double(r.k);
  const double ml = up(m, c.pm), nl = up(n, c.pn);
  const bool line = c.pm == 1 && c.pn > 1, column = c.pn == 1 && c.pm > 1;
  if (line) return {ml * up(k, c.pn), k * nl, ml * nl};
  if (column) return {ml * k, up(k, c.pm) * nl, ml * nl};
  return {ml * (c.pm > 1 ? up(k, c.pn) : k), (c.pn > 1 ? up(k, c.pm) : k) * nl, ml * nl};
}

}  // namespace shardmm::plan
