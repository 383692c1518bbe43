#include <cmath>
#include <utility>

#include "shardmm/plan.hpp"

namespace shardmm {

double lower_bound_words(std::int64_t m, std::int64_t n, std::int64_t k, int P) {
  double d[3] = {double(m), double(n), double(k)};
  // Largest first (three compare-swaps; std::sort here trips the analyser's bounds model).
  if (d[0] < d[1]) std::swap(d[0], d[1]);
  if (d[1] < d[2]) std::swap(d[1], d[2]);
  if (d[0] < d[1]) std::swap(d[0], d[1]);
  const double d1 = d[0], d2 = d[1], d3 = d[2], p = P;
  if (P <= 1 || d3 == 0) return 0;
  if (p <= d1 / d2) return d2 * d3 * (1 - 1 / p);
  if (p <= d1 * d2 / (d3 * d3))
    return 2 * std::sqrt(d1 * d2 * d3 * d3 / p) - (d1 * d3 + d2 * d3) / p;
  return 3 * std::cbrt(d1 * d2 * d3 / p) * std::cbrt(d1 * d2 * d3 / p) -
         (d1 * d2 + d1 * d3 + d2 * d3) / p;
}

}  // namespace shardmm
