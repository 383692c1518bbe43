// The rank-k updates' plan from their operands, and the "reduce" algorithm the plan may choose
// (front/syrk_reduce.cpp); front/syrk.cpp runs the "triangle" one.
#pragma once

#include "algo/syrk.hpp"
#include "shardmm/plan_blas3.hpp"

namespace shardmm::front {

/// plan_blas3 for syrk / herk (B null) or syr2k / her2k on these operands' layouts, with the
/// machine profile of SHARDMM_PROFILE (as gemm's plan). Pure: no communication.
template <Scalar T>
Blas3Plan rank_k_plan(const char* routine, Uplo uplo, Op op, const DistMatrix<T>& A,
                      const DistMatrix<T>* B, const DistMatrix<T>& C);

/// The two terms' alphas of syr2k / her2k (syrk / herk: the first alone).
template <Scalar T>
struct RankKAlphas {
  T first, second;
};

/// C <- alpha op(A) op(B)' [+ alpha2 op(B) op(A)'] + beta C on the `uplo` triangle, "reduce":
/// op(A) (and op(B)) move once into k split over every mesh axis (block nb), each rank adds its
/// slice's n x n triangle into a partial sum, and one reduction brings the sums into C's
/// layout, where each rank folds its own elements of the triangle into C. Collective.
template <Scalar T>
void syrk_reduce(Uplo uplo, Op op, RankKAlphas<T> alphas, const DistMatrix<T>& A,
                 const DistMatrix<T>* B, T beta, DistMatrix<T>& C, bool hermitian,
                 const algo::TileIndex& index, index_t nb);

}  // namespace shardmm::front
