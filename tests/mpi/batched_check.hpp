// Oracle for batched products: gathers A, B (batched or shared) and C, recomputes
// alpha op(A[b]) op(B[b]) + beta C0[b] serially on rank 0 in f64 (c128 for complex types) from
// the stored values, and returns the largest over b of ||C[b] - C_ref[b]||_F over the bound of
// C's format (docs/ALGORITHMS.md):
//   u_s ||C_ref|| + (1 + u_s) (k + 2) u_c || |alpha||op(A)||op(B)| + |beta||C0| ||
// u_c: the unit roundoff products are computed in (f32 for f32 and the 16-bit formats, f64 for
// f64); u_s: the rounding of C to a 16-bit format (0 otherwise).
#pragma once

#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "blas/blas.hpp"
#include "mpi/mpi_test_util.hpp"
#include "shardmm/batched.hpp"

namespace shardmm::testing {

template <class T>
using Wide = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;

template <class T>
std::vector<Wide<T>> widen_all(const std::vector<T>& v) {
  std::vector<Wide<T>> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (is_half_v<T>) out[i] = double(float(v[i]));
    else out[i] = Wide<T>(v[i]);
  }
  return out;
}

template <class T>
constexpr double compute_roundoff() {
  return std::is_same_v<real_t<T>, double> ? 0x1p-53 : 0x1p-24;
}

template <class T>
constexpr double storage_roundoff() {
  if constexpr (is_half_v<T>) return unit_roundoff_v<T>;
  return 0;
}

/// One operand as gathered on rank 0: its values, rows, columns, and whether it is batched.
template <class T>
struct Gathered {
  std::vector<Wide<T>> v;
  index_t rows = 0, cols = 0;
  bool batched = false;
  [[nodiscard]] const Wide<T>* at(index_t b) const {
    return v.data() + (batched ? b * rows * cols : 0);
  }
};

template <class T>
Gathered<T> gathered(const BatchedMatrix<T>& X) {
  return {widen_all(X.gather()), X.rows(), X.cols(), true};
}
template <class T>
Gathered<T> gathered(const DistMatrix<T>& X) {
  return {widen_all(X.gather()), X.rows(), X.cols(), false};
}

template <class R>
double fro(const std::vector<R>& v, std::size_t begin, std::size_t count) {
  double s = 0;
  for (std::size_t i = begin; i < begin + count; ++i) s += std::norm(std::complex<double>(v[i]));
  return std::sqrt(s);
}

/// Scaled error on every rank: at most 1 when every C[b] is within the bound (0 when exact).
template <class T, class S, class XA, class XB>
double batched_error(Op opA, Op opB, S alpha, const XA& A, const XB& B, S beta,
                     const std::vector<T>& C0, const BatchedMatrix<T>& C) {
  using R = Wide<T>;
  const Gathered<T> a = gathered(A), b = gathered(B);
  const auto c = widen_all(C.gather()), c0 = widen_all(C0);
  double worst = 0;
  if (world_rank() == 0) {
    const index_t m = C.rows(), n = C.cols(), k = opA == Op::N ? a.cols : a.rows, mn = m * n;
    const double g = double(k + 2) * compute_roundoff<T>(), us = storage_roundoff<T>();
    for (index_t p = 0; p < C.batch(); ++p) {
      std::vector<R> ref(c0.begin() + p * mn, c0.begin() + (p + 1) * mn), mag(mn);
      blas::gemm(opA, opB, m, n, k, R(alpha), a.at(p), std::max<index_t>(a.rows, 1), b.at(p),
                 std::max<index_t>(b.rows, 1), R(beta), ref.data(), std::max<index_t>(m, 1));
      std::vector<R> aa(a.at(p), a.at(p) + a.rows * a.cols), ba(b.at(p), b.at(p) + b.rows * b.cols);
      for (R& x : aa) x = std::abs(x);
      for (R& x : ba) x = std::abs(x);
      blas::gemm(opA, opB, m, n, k, R(std::abs(R(alpha))), aa.data(), std::max<index_t>(a.rows, 1),
                 ba.data(), std::max<index_t>(b.rows, 1), R(0), mag.data(),
                 std::max<index_t>(m, 1));
      std::vector<R> diff(mn);
      for (index_t i = 0; i < mn; ++i) {
        mag[i] += std::abs(R(beta)) * std::abs(c0[p * mn + i]);
        diff[i] = c[p * mn + i] - ref[i];
      }
      const double bound = us * fro(ref, 0, mn) + (1 + us) * g * fro(mag, 0, mn);
      const double num = fro(diff, 0, mn);
      double err =
          num == 0 ? 0 : (bound == 0 ? std::numeric_limits<double>::infinity() : num / bound);
      if (!std::isfinite(num)) err = std::numeric_limits<double>::infinity();
      worst = std::max(worst, err);
    }
  }
  MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return worst;
}

}  // namespace shardmm::testing
