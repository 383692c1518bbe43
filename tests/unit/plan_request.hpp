// Test helper shared by the planner's unit tests: a PlanRequest for an m x n x k product on P
// ranks with the built-in machine profile and no caller layouts.
#pragma once

#include <cstdint>

#include "shardmm/plan.hpp"

namespace shardmm::testing {

/// The product on P ranks, `limit` bytes per rank (0: the lean policy instead).
inline PlanRequest request(std::int64_t m, std::int64_t n, std::int64_t k, int P,
                           std::int64_t limit = 0) {
  PlanRequest r;
  r.m = m, r.n = n, r.k = k, r.ranks = P, r.memory_limit = limit;
  r.profile = MachineProfile{};
  return r;
}

}  // namespace shardmm::testing
