// The local kernel: typed wrappers over OpenBLAS. The only place that includes cblas.h.
#pragma once

#include "shardmm/types.hpp"

namespace shardmm::blas {

/// C <- alpha * op(A) * op(B) + beta * C, column-major. A is stored m x k (op N) or k x m.
/// beta == 0 never reads C (BLAS semantics). Zero sizes are handled (no call).
template <Scalar T>
void gemm(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, const T* A, index_t lda,
          const T* B, index_t ldb, T beta, T* C, index_t ldc);

/// C <- beta * C on an m x n column-major block (beta == 0 writes zeros without reading).
template <Scalar T>
void scale(index_t m, index_t n, T beta, T* C, index_t ldc);

/// Number of threads OpenBLAS uses; set explicitly by the library and reported.
int num_threads();
void set_num_threads(int n);

}  // namespace shardmm::blas
