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

/// Rank 0's verdict on the n x n C after the update, c0 before it and ref the serial reference
/// (both triangles computed): the largest error in the `uplo` triangle divided by `scale`, or
/// infinity when an element outside it changed or, for a Hermitian update, a diagonal element
/// is not real (the reference's diagonal taken as its real part).
template <class T>
double triangle_error(const RankKCase& c, index_t n, const std::vector<T>& got,
                      const std::vector<T>& c0, const std::vector<T>& ref, double scale) {
  double err = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < n; ++i) {
      const std::size_t e = i + j * n;
      const bool in = c.uplo == Uplo::Upper ? i <= j : i >= j;
      if (!in && got[e] != c0[e]) err = std::numeric_limits<double>::infinity();
      if (in && c.hermitian && i == j && std::imag(got[e]) != 0)
        err = std::numeric_limits<double>::infinity();
      const T want = c.hermitian && i == j ? T(std::real(ref[e])) : ref[e];
      if (in) err = std::max(err, std::abs(got[e] - want) / scale);
    }
  return err;
}

}  // namespace shardmm::testing
