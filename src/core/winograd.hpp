// Strassen-Winograd's recursion rules, shared by the algorithm (src/algo/strassen*.cpp) and
// the cost model (src/plan/strassen_cost.cpp), so both agree on how many levels a product
// gets and how much scratch they take. Pure arithmetic.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

namespace shardmm::winograd {

/// Smallest min(m, n, k) a Winograd step is taken at when no profile says otherwise (measured
/// by `shardmm calibrate`: one step beats one classical GEMM from about this size on).
inline constexpr std::int64_t kDefaultCrossover = 1536;
/// Deepest recursion: 7^6 leaf products; deeper gains nothing on real sizes.
inline constexpr int kMaxLevels = 6;

/// Levels of the recursion for an m x n x k product: one more while the smallest dimension
/// is at least `crossover` (each level halves all three, odd ones rounded down).
inline int levels(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t crossover) {
  const std::int64_t c = std::max<std::int64_t>(crossover, 2);
  int L = 0;
  while (L < kMaxLevels && std::min({m, n, k}) >= c) m /= 2, n /= 2, k /= 2, ++L;
  return L;
}

/// Elements of scratch the recursion takes with L levels: per level one quadrant each of
/// op(A) (X), op(B) (Y) and C (Z), of the halved sizes; a level's sub-products reuse the
/// next level's part. At most (mk + kn + mn) / 3.
inline std::int64_t scratch(std::int64_t m, std::int64_t n, std::int64_t k, int L) {
  std::int64_t total = 0;
  for (int l = 0; l < L; ++l) {
    m /= 2, n /= 2, k /= 2;
    total += m * k + k * n + m * n;
  }
  return total;
}

/// Scratch of the recursion that may overwrite op(A) and op(B) (winograd_gemm_overwriting):
/// its first step takes none, the steps below it what scratch() gives them.
inline std::int64_t overwriting_scratch(std::int64_t m, std::int64_t n, std::int64_t k, int L) {
  return L > 0 ? scratch(m / 2, n / 2, k / 2, L - 1) : 0;
}

/// Two ranks whose pieces have the same k, and a C tile with even sides, run one product over
/// both pieces (strassen_pair.cpp) when the whole k allows at least one level.
inline int pair_levels(std::int64_t m, std::int64_t n, std::int64_t k_own, std::int64_t k_other,
                       std::int64_t crossover) {
  if (k_own != k_other || m % 2 || n % 2) return 0;
  return levels(m, n, 2 * k_own, crossover);
}

/// Scratch of strassen_pair: X, Y, Z and W, and the sub-products' (levels - 1).
inline std::int64_t pair_scratch(std::int64_t m, std::int64_t n, std::int64_t k, int levels) {
  const std::int64_t h = m / 2, g = n / 2;
  return h * k + 2 * k * g + h * g + scratch(h, g, k, levels - 1);
}

/// Receive buffers of a line form (strassen_ring.cpp) on P ranks whose pieces take `piece`
/// elements: two on three ranks or more (the next piece arrives during the current product)
/// when they and the form's `rest` (packing, scratch) fit in the local A + B + C, else one.
inline int line_buffers(int P, std::int64_t piece, std::int64_t rest, std::int64_t local_abc) {
  if (P <= 1) return 0;
  return P > 2 && 2 * piece + rest <= local_abc ? 2 : 1;
}

/// Elements each level's additions touch (two reads and a write per element), summed over
/// the 7^l sub-products of every level: 4 op(A) quadrant sums, 4 op(B) ones and 8 C
/// quadrant updates per step.
inline double addition_traffic(std::int64_t m, std::int64_t n, std::int64_t k, int L) {
  double total = 0, count = 1;
  for (int l = 0; l < L; ++l) {
    m /= 2, n /= 2, k /= 2;
    total += count * 3.0 * (4.0 * double(m * k) + 4.0 * double(k * n) + 8.0 * double(m * n));
    count *= 7;
  }
  return total;
}

/// Groups of Strassen's breadth-first step (CAPS): one per Winograd product.
inline constexpr int kCapsGroups = 7;

/// Whether the breadth-first step can run: ranks a multiple of 7, and m and n at least twice
/// the ranks (each rank then holds a row block of both halves of op(A) and a column block of
/// both halves of op(B)).
inline bool caps_fits(int ranks, std::int64_t m, std::int64_t n, std::int64_t k) {
  return ranks >= kCapsGroups && ranks % kCapsGroups == 0 && m >= 2 * std::int64_t{ranks} &&
         n >= 2 * std::int64_t{ranks} && k >= 2;
}

/// The breadth-first step's padded half of a side x on `ranks` ranks: ceil(x / 2) rounded up
/// to a multiple of the ranks, so both halves' rows (or columns) deal out alike.
inline std::int64_t caps_half(std::int64_t x, int ranks) {
  const std::int64_t twice = 2 * std::int64_t{ranks};
  return (x + twice - 1) / twice * ranks;
}

/// The default rule (StrassenStep::Auto): a breadth-first step where the ranks and shape allow
/// it (caps_fits) and the smallest side reaches the crossover.
inline bool caps_by_rule(int ranks, std::int64_t m, std::int64_t n, std::int64_t k,
                         std::int64_t crossover) {
  return caps_fits(ranks, m, n, k) && std::min({m, n, k}) >= crossover;
}

/// One rank's tiles in the breadth-first step (elements): op(A), op(B) and C aligned by
/// quadrant; the stacked left operands as formed and as split among the groups, the right ones
/// likewise, the products as the groups hold them and as they come back; the caller's A, B and
/// C; and whether a group has more than one rank (`split`).
struct CapsTiles {
  double a = 0, b = 0, c = 0, left = 0, left_g = 0, right = 0, right_g = 0, products_g = 0,
         products = 0, caller_a = 0, caller_b = 0, caller_c = 0;
  bool split = false;
};

/// The step's one buffer, three regions (strassen_caps.cpp says what each holds when): each
/// as large as the largest thing it holds, a redistribution's Pack and Unpack buffers lent
/// the regions that hold nothing at that moment.
inline std::array<double, 3> caps_regions(const CapsTiles& t) {
  return {std::max({t.a, t.left_g, t.products, t.c}),
          std::max({t.caller_a, t.split ? t.left : 0.0, t.b, t.right_g, t.split ? t.products : 0.0,
                    t.c}),
          std::max({t.a, t.left, t.caller_b + t.b, t.right, t.products_g, t.caller_c})};
}

}  // namespace shardmm::winograd
