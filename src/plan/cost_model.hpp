// Cost of one candidate (pure): words received by the busiest rank, messages, flops, peak
// memory and predicted time alpha*messages + beta*bytes + gamma*flops, with max() instead of
// a sum where the algorithm overlaps communication with the local GEMM.
#pragma once

#include "shardmm/plan.hpp"

namespace shardmm::plan {

/// Fills words, redist_words, messages, flops, memory_bytes and seconds of `c`.
void evaluate(const PlanRequest& r, Candidate& c);

/// The same for Algorithm::Strassen (strassen_cost.cpp).
void evaluate_strassen(const PlanRequest& r, Candidate& c);

}  // namespace shardmm::plan
