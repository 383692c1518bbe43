// Cost of one candidate (pure): words received by the busiest rank, messages, flops, peak
// memory and predicted time alpha*messages + beta*bytes + gamma*flops, with max() instead of
// a sum where the algorithm overlaps communication with the local GEMM.
#pragma once

#include <cmath>

#include "shardmm/plan.hpp"

namespace shardmm::plan {

/// a / b rounded up: the pieces of size b that a splits into, the last one partial (uneven
/// splits cost what their largest tile costs).
inline double up(double a, double b) { return std::ceil(a / b); }

/// Fills words, redist_words, messages, flops, memory_bytes and seconds of `c`.
void evaluate(const PlanRequest& r, Candidate& c);

/// The same for Algorithm::Strassen (strassen_cost.cpp).
void evaluate_strassen(const PlanRequest& r, Candidate& c);

}  // namespace shardmm::plan
