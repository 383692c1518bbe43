// The words of a PBLAS level-3 plan (front/plan_blas3_text.cpp): why the chosen candidate.
#pragma once

#include <string>

#include "shardmm/plan_blas3.hpp"

namespace shardmm::front {

/// One sentence: what the chosen algorithm does, and what it beats (predicted time, words,
/// memory) or why it is the routine's only one.
std::string blas3_why(const Blas3Plan& plan);

}  // namespace shardmm::front
