// Test helpers shared by tests/unit/test_strassen.cpp and tests/mpi/test_strassen.cpp: the
// largest absolute entry and Winograd's normwise error constant (docs/ALGORITHMS.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "shardmm/types.hpp"

namespace shardmm::testing {

/// max |x| over v (complex: the modulus).
template <class T>
double max_abs(const std::vector<T>& v) {
  double most = 0;
  for (const T& x : v) most = std::max(most, double(std::abs(x)));
  return most;
}

/// Winograd's bound (Higham, Accuracy and Stability, 2nd ed., Thm 23.3) with n = k rounded up
/// to a multiple of 2^L and n0 = that / 2^L: ||C - Chat||max <= [18^L (n0^2 + 6 n0) - 6 n] u
/// ||A||max ||B||max (complex: x 4, a complex product's real operations).
inline double winograd_bound(index_t k, int L) {
  const double step = std::pow(2.0, L);
  const double n0 = std::ceil(double(k) / step), n = n0 * step;
  return std::pow(18.0, L) * (n0 * n0 + 6 * n0) - 6 * n;
}

}  // namespace shardmm::testing
