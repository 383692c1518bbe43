// Flops and communication lower bounds of the PBLAS level-3 ops for bench --op.
//
// The bound follows the memory-independent argument behind gemm's (Al Daas et al. 2022;
// include/shardmm/plan.hpp): the busiest rank performs at least F / P of the op's F
// multiply-add triples (i, j, l); by Loomis-Whitney, F_p^2 <= |pi_ij| |pi_il| |pi_jl| for the
// index pairs its triples project to; it must hold the data behind those pairs at some time,
// and at the start it holds at most its 1/P share of the data the op touches, so it receives
// at least (the least data it can hold) - (its share). The least data, by minimizing the sum
// under the Loomis-Whitney constraint (the size limits of each matrix are left out, which
// only lowers it: the bound stays valid):
//   - three distinct matrices (each term of syr2k / her2k; the rank does F_p / 2 triples of
//     one of the two): 3 F_p^(2/3);
//   - symm / hemm: A's pairs (i, l) and (l, i) are one element, so A's data is half its pairs:
//     3 (F_p^2 / 2)^(1/3);
//   - syrk / herk (A's rows i and j) and trmm / trsm (B's rows i and l, the same matrix read
//     and written): one matrix carries two of the projections: 3 (F_p^2 / 4)^(1/3).
#include <algorithm>
#include <cmath>
#include <string>

#include "blas3_op.hpp"

namespace shardmm::cli {

namespace {

// The op's multiply-add triples and the elements it touches (the triangles it reads or
// writes counted once).
struct Work {
  double triples = 0, elements = 0;
};

Work work_of(const Blas3Op& o, const Blas3Shape& s) {
  const double n = double(s.out_cols), k = double(s.inner);
  const double tri_out = n * (n + 1) / 2;  // rank-k: C's triangle
  if (o.rank_k()) {
    const double a = double(s.a_rows) * double(s.a_cols);
    if (o.has_b()) return {2 * tri_out * k, 2 * a + tri_out};
    return {tri_out * k, a + tri_out};
  }
  const double out = double(s.out_rows) * double(s.out_cols), na = double(s.a_rows);
  const double other = out / std::max(na, 1.0);  // B's extent beside A's (n for side L)
  const double tri_a = na * (na + 1) / 2;
  if (o.op == "symm" || o.op == "hemm") return {out * na, tri_a + 2 * out};
  if (o.triangular()) return {tri_a * other, tri_a + out};
  return {0, 2 * out};  // tran, geadd
}

}  // namespace

double blas3_flops(const Blas3Op& o, const Blas3Shape& s, bool complex) {
  return (complex ? 8.0 : 2.0) * work_of(o, s).triples;
}

double blas3_lower_bound(const Blas3Op& o, const Blas3Shape& s, int P) {
  const Work w = work_of(o, s);
  if (w.triples <= 0 || P <= 1) return 0;
  const double f = w.triples / P;
  double least = 0;
  if (o.op == "syr2k" || o.op == "her2k") least = 3 * std::pow(f / 2, 2.0 / 3.0);
  else if (o.op == "symm" || o.op == "hemm") least = 3 * std::cbrt(f * f / 2);
  else least = 3 * std::cbrt(f * f / 4);  // syrk herk trmm trsm
  return std::max(0.0, least - w.elements / P);
}

std::string blas3_text(const Blas3Op& o) {
  std::string t = o.op;
  const auto add = [&](const char* name, char v) { t += std::string(" ") + name + "=" + v; };
  if (o.op == "symm" || o.op == "hemm" || o.triangular()) add("side", o.side);
  if (o.op != "tran" && o.op != "geadd") add("uplo", o.uplo);
  if (o.op != "symm" && o.op != "hemm") add("trans", o.trans);
  if (o.triangular()) add("diag", o.diag);
  return t;
}

}  // namespace shardmm::cli
