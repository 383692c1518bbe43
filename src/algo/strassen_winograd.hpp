// The local Strassen-Winograd recursion (7 products, 15-addition form) on column-major
// buffers: C <- alpha op(A) op(B) + beta C with OpenBLAS GEMM at the leaves. No MPI; the
// distributed steps (src/algo/strassen.cpp) call it on a rank's whole local product.
#pragma once

#include "shardmm/types.hpp"

namespace shardmm::algo {

/// C (m x n, ldc) <- alpha op(A) op(B) + beta C with `levels` Winograd steps (see
/// core/winograd.hpp: levels() chooses them, scratch() sizes `work`). A is stored m x k (op N)
/// or k x m; odd dimensions peel their last row or column into classical GEMMs at each level.
/// beta == 0 never reads C. `work` holds winograd::scratch(m, n, k, levels) elements.
template <Scalar T>
void winograd_gemm(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, const T* A,
                   index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc, int levels,
                   T* work);

/// C (m x n, ldc) <- alpha op(A) op(B) with `levels` Winograd steps, A and B overwritten: the
/// first step forms its sums in A's and B's quadrants and its products in C's, so it takes no
/// scratch; the steps below it take winograd::overwriting_scratch(m, n, k, levels) elements
/// of `work`. A and B hold no meaningful values afterwards. (strassen_overwrite.cpp)
template <Scalar T>
void winograd_gemm_overwriting(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, T* A,
                               index_t lda, T* B, index_t ldb, T* C, index_t ldc, int levels,
                               T* work);

}  // namespace shardmm::algo
