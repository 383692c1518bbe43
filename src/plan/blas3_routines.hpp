// Which family each PBLAS level-3 routine of the planner belongs to (plan_blas3.hpp).
#pragma once

#include "shardmm/plan_blas3.hpp"

namespace shardmm::plan {

inline bool rank_k(Blas3Routine r) {
  return r == Blas3Routine::Syrk || r == Blas3Routine::Herk || r == Blas3Routine::Syr2k ||
         r == Blas3Routine::Her2k;
}
inline bool two_terms(Blas3Routine r) {
  return r == Blas3Routine::Syr2k || r == Blas3Routine::Her2k;
}
inline bool symmetric(Blas3Routine r) { return r == Blas3Routine::Symm || r == Blas3Routine::Hemm; }
inline bool triangular(Blas3Routine r) {
  return r == Blas3Routine::Trmm || r == Blas3Routine::Trsm;
}

}  // namespace shardmm::plan
