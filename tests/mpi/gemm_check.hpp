// Oracle for gemm tests: gathers C, recomputes alpha*op(A)*op(B)+beta*C0 serially with
// OpenBLAS on rank 0 and checks the normwise bound
//   ||C - Cref|| / (sqrt(k+2)|alpha| ||A|| ||B|| + 2|beta| ||C0||) <= c * eps.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "blas/blas.hpp"
#include "mpi/mpi_test_util.hpp"

namespace shardmm::testing {

template <class T>
double fro(const std::vector<T>& v) {
  double s = 0;
  for (const T& x : v) s += std::norm(std::complex<double>(x));
  return std::sqrt(s);
}

/// Returns the scaled error on every rank (0 when the reference matches exactly).
template <Scalar T>
double gemm_error(Op opA, Op opB, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
                  const std::vector<T>& C0, const DistMatrix<T>& C) {
  const auto a = A.gather(), b = B.gather(), c = C.gather();
  double err = 0;
  if (world_rank() == 0) {
    const index_t m = C.rows(), n = C.cols(), k = opA == Op::N ? A.cols() : A.rows();
    std::vector<T> ref = C0;
    blas::gemm(opA, opB, m, n, k, alpha, a.data(), std::max<index_t>(A.rows(), 1), b.data(),
               std::max<index_t>(B.rows(), 1), beta, ref.data(), std::max<index_t>(m, 1));
    std::vector<T> diff(ref.size());
    for (std::size_t i = 0; i < ref.size(); ++i) diff[i] = c[i] - ref[i];
    const double denom =
        std::sqrt(double(k) + 2) * std::abs(alpha) * fro(a) * fro(b) + 2 * std::abs(beta) * fro(C0);
    const double eps = std::numeric_limits<real_t<T>>::epsilon();
    const double num = fro(diff);
    err = num == 0 ? 0 : (denom == 0 ? std::numeric_limits<double>::infinity() : num / denom / eps);
    if (!std::isfinite(num)) err = std::numeric_limits<double>::infinity();
  }
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return err;
}

}  // namespace shardmm::testing
