// One PBLAS level-3 operation as bench runs it (bench_blas3.cpp for shardmm,
// scalapack_blas3.cpp for ScaLAPACK): the op's name and flags, and its operands' shapes.
#pragma once

#include <string>

#include "shardmm/plan_blas3.hpp"
#include "shardmm/types.hpp"

namespace shardmm::cli {

/// The op and its flags as PBLAS spells them. The output is C, or B for trmm / trsm.
struct Blas3Op {
  std::string op;  ///< symm hemm syrk herk syr2k her2k trmm trsm tran geadd
  char side = 'L', uplo = 'L', trans = 'N', diag = 'N';

  [[nodiscard]] bool rank_k() const {
    return op == "syrk" || op == "herk" || op == "syr2k" || op == "her2k";
  }
  [[nodiscard]] bool triangular() const { return op == "trmm" || op == "trsm"; }
  [[nodiscard]] bool has_b() const {
    return op == "symm" || op == "hemm" || op == "syr2k" || op == "her2k";
  }
  [[nodiscard]] bool hermitian() const { return op == "hemm" || op == "herk" || op == "her2k"; }
};

/// Extents of one op's operands for the launcher's m, n, k: the output is m x n (trmm, trsm,
/// symm, hemm, tran, geadd) or n x n (the rank-k updates, op(A) and op(B) n x k); the square A
/// of symm / hemm / trmm / trsm is m x m (side L) or n x n.
struct Blas3Shape {
  index_t a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0, out_rows = 0, out_cols = 0;
  index_t inner = 0;  ///< the length of each element's sum (0 for the additions)
};

inline Blas3Shape blas3_shape(const Blas3Op& o, index_t m, index_t n, index_t k) {
  Blas3Shape s;
  const bool t = o.trans != 'N';
  if (o.rank_k()) {
    s.a_rows = t ? k : n, s.a_cols = t ? n : k, s.out_rows = s.out_cols = n, s.inner = k;
    if (o.has_b()) s.b_rows = s.a_rows, s.b_cols = s.a_cols;
    return s;
  }
  s.out_rows = m, s.out_cols = n;
  if (o.op == "tran") s.a_rows = n, s.a_cols = m;
  else if (o.op == "geadd") s.a_rows = t ? n : m, s.a_cols = t ? m : n;
  else s.a_rows = s.a_cols = s.inner = o.side == 'L' ? m : n;  // symm hemm trmm trsm
  if (o.has_b()) s.b_rows = m, s.b_cols = n;                   // symm hemm
  return s;
}

/// Flops of one call (complex: 4 real multiplies and adds per multiply-add): symm / hemm 2 m n na,
/// the rank-k updates n (n + 1) k (twice for syr2k / her2k), trmm / trsm na (na + 1) times the
/// other extent; the additions 0.
double blas3_flops(const Blas3Op& o, const Blas3Shape& s, bool complex);

/// The planner's request for the op on P ranks (no layouts: the planner's bc(64, 64) on the
/// near-square grid, as bench's operands).
Blas3Request blas3_request(const Blas3Op& o, const Blas3Shape& s, int P, Dtype dtype);

/// The library's lower bound (shardmm::blas3_lower_bound) on the words the busiest of P ranks
/// receives; 0 where it gives nothing (and for the additions, which have no triples).
double blas3_lower_bound(const Blas3Op& o, const Blas3Shape& s, int P);

/// "syrk uplo=L trans=N", "trsm side=L uplo=L trans=N diag=N", ... for the report.
std::string blas3_text(const Blas3Op& o);

}  // namespace shardmm::cli
