// What the rank-k drop-in tests (test_psyrk.cpp, test_psyr2k.cpp) share: their flags, op(sub(X))
// as a serial matrix, and the update of sub(C)'s UPLO triangle in the serial reference.
#pragma once

#include <complex>
#include <vector>

#include "scalapack/pblas_test_util.hpp"

namespace shardmm::testing {

/// One case's flags: the Hermitian routine (p?herk / p?her2k) or not, UPLO and TRANS.
struct RankKFlags {
  bool hermitian = false;
  char uplo = 'U', trans = 'N';
};

/// Both UPLO with every TRANS the routines take: N, T and C for the symmetric ones on real
/// types, N and T on complex ones, N and C for the Hermitian ones (complex types only).
inline std::vector<RankKFlags> all_flags(bool complex) {
  std::vector<RankKFlags> out;
  for (const char u : {'U', 'L'}) {
    for (const char t : {'N', 'T', 'C'})
      if (!complex || t != 'C') out.push_back({false, u, t});
    if (complex)
      for (const char t : {'N', 'C'}) out.push_back({true, u, t});
  }
  return out;
}

/// op(sub(X)) as an n x k column-major matrix (X's elements entry<T>(., ., X.seed)).
template <class T>
std::vector<T> op_sub(const PMatrix<T>& X, char trans, int n, int k) {
  std::vector<T> out(std::size_t(n) * k);
  for (int l = 0; l < k; ++l)
    for (int i = 0; i < n; ++i) {
      const bool t = trans != 'N';
      T x = entry<T>(X.i - 1 + (t ? l : i), X.j - 1 + (t ? i : l), X.seed);
      if constexpr (is_complex_v<T>) x = trans == 'C' ? std::conj(x) : x;
      out[i + std::size_t(l) * n] = x;
    }
  return out;
}

/// The serial reference for this process's local array of C: inside the n x n sub(C)'s UPLO
/// triangle c <- beta c + update(si, sj) (beta == 0 does not read c; `no_update`, PBLAS'
/// alpha == 0 or K == 0, adds nothing), the diagonal's imaginary parts zeroed for a Hermitian
/// update; everything else as it is.
template <class T, class U>
std::vector<T> rank_k_reference(const BlacsGrid& g, const RankKFlags& f, int n, bool no_update,
                                T beta, const PMatrix<T>& C, U update) {
  std::vector<T> out = C.data;
  for (int jl = 0; jl < C.lc; ++jl)
    for (int il = 0; il < C.lr; ++il) {
      const int si = int(C.row_map().to_global(il, g.row)) - (C.i - 1);
      const int sj = int(C.col_map().to_global(jl, g.col)) - (C.j - 1);
      if (si < 0 || si >= n || sj < 0 || sj >= n || (f.uplo == 'U' ? si > sj : si < sj)) continue;
      T& c = out[il + std::size_t(jl) * C.lld];
      const T ak = no_update ? T(0) : update(si, sj);
      c = (beta == T(0) ? T(0) : beta * c) + ak;
      if constexpr (is_complex_v<T>) {
        if (f.hermitian && si == sj) c = T(c.real(), 0);
      }
    }
  return out;
}

}  // namespace shardmm::testing
