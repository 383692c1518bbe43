// Helpers shared by the bench files: generated operands, reductions over ranks, flop counts.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "shardmm/shardmm.hpp"

namespace shardmm::cli::bench {

template <Scalar T>
T value_from(double v) {
  return T(static_cast<real_t<T>>(v));
}

/// Deterministic entry (i, j) of operand `seed`, independent of P.
template <Scalar T>
T entry(index_t i, index_t j, int seed) {
  const double x = std::sin(0.37 * double(i) + 1.13 * double(j) + 0.71 * seed);
  if constexpr (is_complex_v<T>)
    return T(static_cast<real_t<T>>(x),
             static_cast<real_t<T>>(std::cos(0.5 * double(i) - 0.3 * double(j) + seed)));
  else return static_cast<T>(x);
}

inline double max_over(double v, MPI_Comm comm) {
  double r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, comm);
  return r;
}
inline double sum_over(double v, MPI_Comm comm) {
  double r = 0;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_SUM, comm);
  return r;
}
inline double flops(index_t m, index_t n, index_t k, bool complex) {
  return (complex ? 8.0 : 2.0) * double(m) * double(n) * double(k);
}
/// f.template operator()<T>() for the element type named by `dtype` (f32|f64|c64|c128).
template <class F>
int with_dtype(const std::string& dtype, F&& f) {
  switch (parse_dtype(dtype)) {
    case Dtype::F32: return f.template operator()<float>();
    case Dtype::F64: return f.template operator()<double>();
    case Dtype::C64: return f.template operator()<std::complex<float>>();
    case Dtype::C128: return f.template operator()<std::complex<double>>();
    case Dtype::F16:
    case Dtype::BF16: break;
  }
  throw InvalidArgument("--dtype " + dtype +
                        ": 16-bit products are a library call (gemm on DistMatrix<bf16> or "
                        "<f16>), not in the launcher yet; --wire bf16|f16 sends f32 in 16 bits");
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace shardmm::cli::bench
