// Cost of one candidate (pure): words received by the busiest rank, messages, flops, peak
// memory and predicted time alpha*messages + beta*bytes + gamma*flops, with max() instead of
// a sum where the algorithm overlaps communication with the local GEMM.
#pragma once

#include <cmath>

#include "plan/request.hpp"
#include "shardmm/plan.hpp"

namespace shardmm::plan {

/// a / b rounded up: the pieces of size b that a splits into, the last one partial (uneven
/// splits cost what their largest tile costs).
inline double up(double a, double b) { return std::ceil(a / b); }

/// Predicted times this close (relative) are a tie: the plan with fewer words wins (the
/// planner's choice and the preferred layouts' alike).
inline constexpr double kNearTie = 0.01;

/// Elements of A's, B's and C's tiles on the busiest rank.
struct Tiles {
  double a = 0, b = 0, c = 0;
  [[nodiscard]] double sum() const { return a + b + c; }
};

/// The caller's local A + B + C on the busiest rank, elements (Request::resident, else
/// the balanced share).
double resident(const Request& r);

/// Fills words, redist_words, messages, flops, memory_bytes, added_bytes and seconds of `c`.
void evaluate(const Request& r, Candidate& c);

/// The same for Algorithm::Strassen (strassen_cost.cpp) but added_bytes; returns the tiles of
/// A, B and C in its layouts that memory_bytes counts, and sets `moves_itself` when the
/// algorithm moves the caller's operands itself (the breadth-first step: its memory_bytes
/// then holds the caller's operands and every buffer).
Tiles evaluate_strassen(const Request& r, Candidate& c, bool& moves_itself);

}  // namespace shardmm::plan
