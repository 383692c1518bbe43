// The launcher's own local GEMM (OpenBLAS's cblas, which the launcher links itself): the
// timing references (one core's rate, the P-core ceiling, calibrate) and the probe check's
// matrix-vector products.
#pragma once

#include "shardmm/types.hpp"

namespace shardmm::cli {

/// C <- alpha * op(A) * op(B) + beta * C, column-major; A is stored m x k (op N) or k x m.
/// Zero m or n: no call; zero k or alpha: C <- beta * C (beta == 0 never reads C). Throws
/// InvalidArgument for a dimension beyond 32 bits.
template <Scalar T>
void local_gemm(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, const T* A, index_t lda,
                const T* B, index_t ldb, T beta, T* C, index_t ldc);

}  // namespace shardmm::cli
