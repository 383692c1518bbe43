// Explicit instantiation for the four scalar types: define M(T), then SHARDMM_FOR_EACH_SCALAR(M).
#pragma once

#include <complex>

#define SHARDMM_FOR_EACH_SCALAR(M) \
  M(float)                         \
  M(double)                        \
  M(std::complex<float>)           \
  M(std::complex<double>)
