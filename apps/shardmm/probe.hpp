// --check: verifies a distributed product of any size with a random-vector probe,
//   C x  against  alpha op(A) (op(B) x) + beta C0 x,
// scaled like the normwise gemm bound; O((m n + m k + k n) / P) work per rank.
#pragma once

#include "shardmm/shardmm.hpp"

namespace shardmm::cli {

/// Scaled probe error (in units of machine epsilon of T); identical on every rank.
template <Scalar T>
double probe_error(Op opA, Op opB, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
                   const DistMatrix<T>& C0, const DistMatrix<T>& C);

}  // namespace shardmm::cli
