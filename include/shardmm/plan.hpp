// Cost-model pieces that need no MPI.
#pragma once

#include <cstdint>

namespace shardmm {

/// Memory-independent lower bound on the words moved by the busiest rank for an m x n x k
/// product on P ranks (Al Daas, Ballard, Grigori, Kumar, Rouse 2022): with d1 >= d2 >= d3 the
/// sorted dimensions,
///   P <= d1/d2:               d2*d3*(1 - 1/P)
///   d1/d2 <= P <= d1*d2/d3^2: 2*sqrt(d1*d2*d3^2/P) - (d1*d3 + d2*d3)/P
///   otherwise:                3*(d1*d2*d3/P)^(2/3) - (d1*d2 + d1*d3 + d2*d3)/P
double lower_bound_words(std::int64_t m, std::int64_t n, std::int64_t k, int P);

}  // namespace shardmm
