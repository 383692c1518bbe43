// Oracle for 16-bit and wire-format products: gathers the operands and C, recomputes
// alpha op(A) op(B) + beta C0 serially in f64 on rank 0 from the stored values, and returns
// ||C - C_ref||_F over the bound the format promises (docs/ALGORITHMS.md):
//   16-bit storage: u16 ||C_ref|| + (1 + u16) (k + 2) u32 || |alpha||op(A)||op(B)| + |beta||C0| ||
//   f32 on a 16-bit wire: (2 u_w + (k + 2) u32) || |alpha||op(A)||op(B)| || + (k + 2) u32 |beta|
//   ||C0||
// (Frobenius norms; the elementwise first-order bounds summed in quadrature are below these).
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "blas/blas.hpp"
#include "mpi/mpi_test_util.hpp"

namespace shardmm::testing {

struct Bound {
  double storage = 0;  ///< unit roundoff of C's format (0: C is f32)
  double wire = 0;     ///< unit roundoff of the operands' wire format (0: none)
};

template <class T>
std::vector<double> widened(const std::vector<T>& v) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<double>(static_cast<float>(v[i]));
  return out;
}

inline double fro2(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

/// Scaled error on every rank: at most 1 when C is within the bound (0 when exact).
template <Scalar T>
double half_error(Op opA, Op opB, float alpha, const DistMatrix<T>& A, const DistMatrix<T>& B,
                  float beta, const std::vector<T>& C0, const DistMatrix<T>& C, Bound u) {
  const auto a = widened(A.gather()), b = widened(B.gather()), c = widened(C.gather());
  double err = 0;
  if (world_rank() == 0) {
    const index_t m = C.rows(), n = C.cols(), k = opA == Op::N ? A.cols() : A.rows();
    const index_t lda = std::max<index_t>(A.rows(), 1), ldb = std::max<index_t>(B.rows(), 1);
    std::vector<double> ref = widened(C0), mag(ref.size());
    blas::gemm(opA, opB, m, n, k, double(alpha), a.data(), lda, b.data(), ldb, double(beta),
               ref.data(), std::max<index_t>(m, 1));
    std::vector<double> aa(a.size()), ba(b.size()), ca = widened(C0), diff(ref.size());
    for (std::size_t i = 0; i < a.size(); ++i) aa[i] = std::fabs(a[i]);
    for (std::size_t i = 0; i < b.size(); ++i) ba[i] = std::fabs(b[i]);
    for (double& x : ca) x = std::fabs(x) * std::fabs(double(beta));
    blas::gemm(opA, opB, m, n, k, std::fabs(double(alpha)), aa.data(), lda, ba.data(), ldb, 0.0,
               mag.data(), std::max<index_t>(m, 1));
    for (std::size_t i = 0; i < ref.size(); ++i) diff[i] = c[i] - ref[i];
    const double u32 = std::numeric_limits<float>::epsilon() / 2, g = double(k + 2) * u32;
    const double bound =
        u.storage * fro2(ref) + (1 + u.storage) * ((2 * u.wire + g) * fro2(mag) + g * fro2(ca));
    const double num = fro2(diff);
    err = num == 0 ? 0 : (bound == 0 ? std::numeric_limits<double>::infinity() : num / bound);
    if (!std::isfinite(num)) err = std::numeric_limits<double>::infinity();
  }
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return err;
}

}  // namespace shardmm::testing
