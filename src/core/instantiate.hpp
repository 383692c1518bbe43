// The four scalar types (listed once, in shardmm/types.hpp): SHARDMM_FOR_EACH_SCALAR(M)
// expands M(T) for each (explicit instantiation: define M(T), then SHARDMM_FOR_EACH_SCALAR(M));
// SHARDMM_SCALAR_TYPES lists them for typed tests (::testing::Types<SHARDMM_SCALAR_TYPES>).
//
// Under scripts/lint (SHARDMM_LINT defined) only double and complex<double> are instantiated:
// every template body is still analysed, through one real and one complex instantiation, but
// clang-tidy's static analyser no longer walks each body four times (ring_swap.cpp: 34 s ->
// 19 s). The build itself always instantiates all four, under -Wall -Wextra -Werror.
#pragma once

#include <complex>

#include "shardmm/half.hpp"
#include "shardmm/types.hpp"

// The 16-bit storage types, instantiated where values are stored, moved and read or written
// (DistMatrix, redistribution, communication, files) and by gemm's front end (which widens
// them to f32 for the algorithms): SHARDMM_FOR_EACH_HALF(M).
#define SHARDMM_FOR_EACH_HALF(M) \
  M(::shardmm::bf16)             \
  M(::shardmm::f16)

#ifdef SHARDMM_LINT
#define SHARDMM_FOR_EACH_SCALAR(M) \
  M(double)                        \
  M(std::complex<double>)
#define SHARDMM_SCALAR_TYPES double, std::complex<double>
#else
#define SHARDMM_FOR_EACH_SCALAR(M) SHARDMM_FOR_EACH_ARITHMETIC(M)
#define SHARDMM_SCALAR_TYPES float, double, std::complex<float>, std::complex<double>
#endif
