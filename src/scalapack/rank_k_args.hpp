// The arguments of the rank-k drop-ins, parsed and checked as PBLAS does: p?syrk / p?herk
// (psyrk.cpp: A, C) and p?syr2k / p?her2k (psyr2k.cpp: A, B, C) share everything but sub(B).
#pragma once

#include "scalapack/pblas.hpp"

namespace shardmm::scalapack {

/// Argument position of DESCA (where a process outside its grid is reported).
constexpr int kRankKDescA = 9;

/// One call: UPLO, TRANS, N, K and the matrix arguments (B only for the rank-2k routines).
struct RankKCall {
  char uplo = 'U', trans = 'N';
  int n = 0, k = 0;
  bool two = false;  ///< p?syr2k / p?her2k: sub(B) as well
  MatrixArg A, B, C;
};

/// The call from the caller's arguments; `b` null for p?syrk / p?herk. Argument positions
/// (PBLAS' error codes): N 3, K 4, DESCA 9, then DESCB 13 and DESCC 18, or DESCC 14.
inline RankKCall parse_rank_k(const char* uplo, const char* trans, const int* n, const int* k,
                              MatrixRef a, const MatrixRef* b, MatrixRef c) {
  constexpr int kPosN = 3, kPosK = 4;
  RankKCall x;
  x.uplo = upper(uplo), x.trans = upper(trans), x.n = *n, x.k = *k, x.two = b != nullptr;
  const bool t = x.trans != 'N';  // sub(A), sub(B) are K x N
  x.A = op_matrix_arg(t, "A", a, x.n, x.k, kPosN, kPosK, kRankKDescA);
  if (x.two) x.B = op_matrix_arg(t, "B", *b, x.n, x.k, kPosN, kPosK, 13);
  x.C = matrix_arg("C", c, x.n, x.n, kPosN, kPosN, x.two ? 18 : 14);
  return x;
}

/// TRANS the routines take: N, and T (p?syrk, p?syr2k) or C (p?herk, p?her2k); real types
/// take both.
template <Scalar T>
bool rank_k_legal_trans(char t, bool hermitian) {
  if (t == 'N') return true;
  if (!is_complex_v<T>) return t == 'T' || t == 'C';
  return t == (hermitian ? 'C' : 'T');
}

/// PBLAS' checks in its order: an illegal UPLO, else an illegal TRANS, else PB_Cchkmat on
/// sub(A), (sub(B),) sub(C).
template <Scalar T>
Finding rank_k_finding(const Grid& g, const RankKCall& x, bool hermitian) {
  Finding f;
  if (!check_flag(f, 100, "UPLO", x.uplo, "UL")) return f;
  if (!rank_k_legal_trans<T>(x.trans, hermitian))
    f.add(200, std::string("Illegal TRANS = ") + x.trans);
  else if (x.two) check_matrices(g, {&x.A, &x.B, &x.C}, f);
  else check_matrices(g, {&x.A, &x.C}, f);
  return f;
}

}  // namespace shardmm::scalapack
