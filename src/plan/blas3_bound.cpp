// Flops and communication lower bounds of the PBLAS level-3 routines (plan_blas3.hpp).
//
// The bound follows the memory-independent argument behind gemm's (Al Daas et al. 2022;
// include/shardmm/plan.hpp): the busiest rank performs at least F / P of the routine's F
// multiply-add triples (i, j, l); by Loomis-Whitney, F_p^2 <= |pi_ij| |pi_il| |pi_jl| for the
// index pairs its triples project to; it must hold the data behind those pairs at some time,
// and at the start it holds at most its 1/P share of the data the routine touches, so it
// receives at least (the least data it can hold) - (its share). The least data, by minimizing
// the sum under the Loomis-Whitney constraint (the size limits of each matrix are left out,
// which only lowers it: the bound stays valid):
//   - three distinct matrices (each term of syr2k / her2k; the rank does F_p / 2 triples of
//     one of the two): 3 F_p^(2/3);
//   - symm / hemm: A's pairs (i, l) and (l, i) are one element, so A's data is half its pairs:
//     3 (F_p^2 / 2)^(1/3);
//   - syrk / herk (A's rows i and j) and trmm / trsm (B's rows i and l, the same matrix read
//     and written): one matrix carries two of the projections: 3 (F_p^2 / 4)^(1/3).
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "plan/blas3_routines.hpp"
#include "shardmm/error.hpp"
#include "shardmm/plan_blas3.hpp"

namespace shardmm {
namespace {

constexpr std::array<const char*, 10> kNames = {"symm",  "hemm", "syrk", "herk", "syr2k",
                                                "her2k", "trmm", "trsm", "tran", "geadd"};

// The routine's multiply-add triples and the elements it touches (the triangles it reads or
// writes counted once).
struct Work {
  double triples = 0, elements = 0;
};

Work work_of(const Blas3Request& q) {
  const double m = double(q.m), n = double(q.n), k = double(q.k);
  if (plan::rank_k(q.routine)) {
    const double tri = n * (n + 1) / 2;  // C's triangle
    if (plan::two_terms(q.routine)) return {2 * tri * k, 2 * n * k + tri};
    return {tri * k, n * k + tri};
  }
  const double na = q.side == Side::Left ? m : n, other = q.side == Side::Left ? n : m;
  const double tri_a = na * (na + 1) / 2;
  if (plan::symmetric(q.routine)) return {m * n * na, tri_a + 2 * m * n};
  if (plan::triangular(q.routine)) return {tri_a * other, tri_a + m * n};
  return {0, 2 * m * n};  // tran, geadd
}

}  // namespace

std::string to_string(Blas3Routine r) { return kNames.at(static_cast<std::size_t>(r)); }

Blas3Routine parse_blas3_routine(std::string_view text) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (text == kNames[i]) return static_cast<Blas3Routine>(i);
  throw InvalidArgument("unknown PBLAS level-3 routine '" + std::string(text) +
                        "' (symm hemm syrk herk syr2k her2k trmm trsm tran geadd)");
}

double blas3_flops(const Blas3Request& q) {
  const bool complex = q.dtype == Dtype::C64 || q.dtype == Dtype::C128;
  return (complex ? 8.0 : 2.0) * work_of(q).triples;
}

double blas3_lower_bound(const Blas3Request& q) {
  const Work w = work_of(q);
  if (w.triples <= 0 || q.ranks <= 1) return 0;
  const double f = w.triples / q.ranks;
  double least = 0;
  if (plan::two_terms(q.routine)) least = 3 * std::pow(f / 2, 2.0 / 3.0);
  else if (plan::symmetric(q.routine)) least = 3 * std::cbrt(f * f / 2);
  else least = 3 * std::cbrt(f * f / 4);  // syrk herk trmm trsm
  return std::max(0.0, least - w.elements / q.ranks);
}

}  // namespace shardmm
