// The flops and the lower bound of bench --op: the library's (include/shardmm/plan_blas3.hpp,
// the planner's own), for the launcher's op and operand shapes.
#include <string>

#include "blas3_op.hpp"
#include "shardmm/plan_blas3.hpp"

namespace shardmm::cli {

Blas3Request blas3_request(const Blas3Op& o, const Blas3Shape& s, int P, Dtype dtype) {
  Blas3Request q;
  q.routine = parse_blas3_routine(o.op);
  q.side = o.side == 'L' ? Side::Left : Side::Right;
  q.uplo = o.uplo == 'U' ? Uplo::Upper : Uplo::Lower;
  q.op = parse_op(std::string(1, o.trans));
  q.m = s.out_rows, q.n = s.out_cols, q.k = s.inner, q.ranks = P, q.dtype = dtype;
  return q;
}

double blas3_flops(const Blas3Op& o, const Blas3Shape& s, bool complex) {
  return shardmm::blas3_flops(blas3_request(o, s, 1, complex ? Dtype::C128 : Dtype::F64));
}

double blas3_lower_bound(const Blas3Op& o, const Blas3Shape& s, int P) {
  return shardmm::blas3_lower_bound(blas3_request(o, s, P, Dtype::F64));
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
