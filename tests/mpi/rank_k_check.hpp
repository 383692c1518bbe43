// What the library-level rank-k tests (test_blas3_syrk.cpp, test_blas3_syr2k.cpp) share: a
// case's flags and the comparison of the gathered C with the serial reference, triangle by
// triangle.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "mpi/mpi_test_util.hpp"

namespace shardmm::testing {

/// One case: the Hermitian routine (herk / her2k) or not, the triangle and op.
struct RankKCase {
  bool hermitian;
  Uplo uplo;
  Op op;
};

/// The componentwise scale of a rank-k update's rounding error (Higham's gamma_k bound): for
/// each (i, j), eps (k + 2) (|alpha| sum_l |x_il| |y_jl| + |alpha| sum_l |y_il| |x_jl| + |beta|
/// |c0_ij|), with x_il = op(A)(i, l) read from the gathered `x` (`y` likewise; pass y = x and
/// alpha2 = 0 for syrk/herk). A complex product rounds up to twice as much, so the scale
/// doubles for complex T. Independent of the BLAS's order of summation, unlike a fixed
/// multiple of eps.
template <class T>
std::vector<double> rank_k_scale(Op op, index_t n, index_t k, const std::vector<T>& x,
                                 const std::vector<T>& y, double alpha, double alpha2, double beta,
                                 const std::vector<T>& c0) {
  const index_t ld = std::max<index_t>(op == Op::N ? n : k, 1);
  auto at = [&](const std::vector<T>& m, index_t i, index_t l) {
    return std::abs(op == Op::N ? m[i + l * ld] : m[l + i * ld]);
  };
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  const double unit = eps * double(k + 2) * (is_complex_v<T> ? 2.0 : 1.0);
  std::vector<double> scale(std::size_t(n) * n);
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      double s = 0;
      for (index_t l = 0; l < k; ++l)
        s += alpha * at(x, i, l) * at(y, j, l) + alpha2 * at(y, i, l) * at(x, j, l);
      scale[i + j * n] = unit * (s + beta * std::abs(c0[i + j * n]));
    }
  return scale;
}

/// Rank 0's verdict on the n x n C after the update, c0 before it and ref the serial reference
/// (both triangles computed): the largest error in the `uplo` triangle divided by its element
/// of `scale` (rank_k_scale; the reference rounds too, so a correct result stays below 2), or
/// infinity when an element outside it changed or, for a Hermitian update, a diagonal element
/// is not real (the reference's diagonal taken as its real part).
template <class T>
double triangle_error(const RankKCase& c, index_t n, const std::vector<T>& got,
                      const std::vector<T>& c0, const std::vector<T>& ref,
                      const std::vector<double>& scale) {
  double err = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      const std::size_t e = i + j * n;
      const bool in = c.uplo == Uplo::Upper ? i <= j : i >= j;
      if (!in && got[e] != c0[e]) err = std::numeric_limits<double>::infinity();
      if (in && c.hermitian && i == j && std::imag(got[e]) != 0)
        err = std::numeric_limits<double>::infinity();
      const T want = c.hermitian && i == j ? T(std::real(ref[e])) : ref[e];
      const double diff = std::abs(got[e] - want);
      if (in && diff > 0)
        err =
            std::max(err, scale[e] > 0 ? diff / scale[e] : std::numeric_limits<double>::infinity());
    }
  return err;
}

}  // namespace shardmm::testing
