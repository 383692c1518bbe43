// Rank-2k update drop-ins: ScaLAPACK's P?SYR2K and P?HER2K on shardmm::syr2k / shardmm::her2k
// (front/syrk.cpp).
//
// Flow, as p?syrk's (psyrk.cpp): the grid of DESCA's context and its Mesh; PBLAS' checks (an
// illegal UPLO, then an illegal TRANS, else PB_Cchkmat on sub(A), sub(B) and the N x N sub(C))
// agreed over the grid with one MPI_Allreduce and reported through PB_Cabort alike on every
// process; PBLAS' quick returns (N = 0, or alpha = 0 or K = 0 with beta = 1); then the
// submatrices as views of the caller's arrays and one library call. What moves: op(sub(A))'s
// and op(sub(B))'s rows, twice each (to the processes holding the matching rows and columns of
// sub(C)); sub(C) never moves and only its UPLO triangle is read or written.
#include <complex>
#include <string>
#include <type_traits>

#include "scalapack/pblas.hpp"
#include "shardmm/blas3.hpp"
#include "shardmm/c/scalapack.h"

namespace shardmm::scalapack {
namespace {

constexpr int kR2PosN = 3, kR2PosK = 4, kR2DescA = 9, kR2DescB = 13, kR2DescC = 18;

struct Rank2kCall {
  char uplo = 'U', trans = 'N';
  int n = 0, k = 0;
  MatrixArg A, B, C;
};

Rank2kCall parse_rank2k(const char* uplo, const char* trans, const int* n, const int* k,
                        const int* ia, const int* ja, const int* desca, const int* ib,
                        const int* jb, const int* descb, const int* ic, const int* jc,
                        const int* descc) {
  Rank2kCall x;
  x.uplo = upper(uplo), x.trans = upper(trans), x.n = *n, x.k = *k;
  const bool nota = x.trans == 'N';
  const int rows = nota ? x.n : x.k, cols = nota ? x.k : x.n;
  const int rpos = nota ? kR2PosN : kR2PosK, cpos = nota ? kR2PosK : kR2PosN;
  x.A = MatrixArg{normalized(desca), *ia, *ja, rows, cols, rpos, cpos, kR2DescA};
  x.B = MatrixArg{normalized(descb), *ib, *jb, rows, cols, rpos, cpos, kR2DescB};
  x.C = MatrixArg{normalized(descc), *ic, *jc, x.n, x.n, kR2PosN, kR2PosN, kR2DescC};
  x.A.name = "A", x.B.name = "B", x.C.name = "C";
  return x;
}

// TRANS p?syr2k / p?her2k take: N, and T (syr2k) or C (her2k); real types take both.
template <Scalar T>
bool rank2k_legal_trans(char t, bool hermitian) {
  if (t == 'N') return true;
  if (!is_complex_v<T>) return t == 'T' || t == 'C';
  return t == (hermitian ? 'C' : 'T');
}

template <Scalar T>
Finding rank2k_finding(const Grid& g, const Rank2kCall& x, bool hermitian) {
  Finding f;
  if (x.uplo != 'U' && x.uplo != 'L') f.add(100, std::string("Illegal UPLO = ") + x.uplo);
  else if (!rank2k_legal_trans<T>(x.trans, hermitian))
    f.add(200, std::string("Illegal TRANS = ") + x.trans);
  else check_matrices(g, {&x.A, &x.B, &x.C}, f);
  return f;
}

// R: the type of BETA (T for p?syr2k, real_t<T> for p?her2k); ALPHA is T for both.
template <Scalar T, class R>
void run_rank2k(const char* routine, const Grid& g, const Mesh& mesh, const Rank2kCall& x, T alpha,
                const T* a, const T* b, R beta, T* c) {
  constexpr bool hermitian = !std::is_same_v<T, R>;
  if (report_if_illegal(g, mesh, routine, rank2k_finding<T>(g, x, hermitian))) return;
  if (x.n == 0 || ((alpha == T(0) || x.k == 0) && beta == R(1))) return;
  const DistMatrix<T> A = operand(mesh, sub_matrix(x.A, g), a);
  const DistMatrix<T> B = operand(mesh, sub_matrix(x.B, g), b);
  DistMatrix<T> C = operand(mesh, sub_matrix(x.C, g), static_cast<const T*>(c));
  const Uplo uplo = x.uplo == 'U' ? Uplo::Upper : Uplo::Lower;
  const Op op = x.trans == 'N' ? Op::N : (hermitian && is_complex_v<T> ? Op::C : Op::T);
  if constexpr (hermitian) her2k(uplo, op, alpha, A, B, beta, C);
  else syr2k(uplo, op, alpha, A, B, beta, C);
}

// The one body behind every entry point of this file.
template <Scalar T, class R>
void prank2k(const char* routine, SHARDMM_PXSYR2K_PARAMS(void, void)) noexcept {
  guarded(routine, desca[kCtxt], kR2DescA, [&](const Grid& g, const Mesh& mesh) {
    const Rank2kCall x =
        parse_rank2k(uplo, trans, n, k, ia, ja, desca, ib, jb, descb, ic, jc, descc);
    run_rank2k<T, R>(routine, g, mesh, x, *static_cast<const T*>(alpha), static_cast<const T*>(a),
                     static_cast<const T*>(b), *static_cast<const R*>(beta), static_cast<T*>(c));
  });
}

}  // namespace
}  // namespace shardmm::scalapack

// The prefixed entry points (ScaLAPACK's own spellings: dropin_entries.cpp).
#define SHARDMM_ARGS \
  uplo, trans, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc
#define SHARDMM_ENTRY(name, NAME, CT, CR, T, R)                 \
  void shardmm_p##name(SHARDMM_PXSYR2K_PARAMS(CT, CR)) {        \
    shardmm::scalapack::prank2k<T, R>("P" #NAME, SHARDMM_ARGS); \
  }

extern "C" {
SHARDMM_ENTRY(ssyr2k, SSYR2K, float, float, float, float)
SHARDMM_ENTRY(dsyr2k, DSYR2K, double, double, double, double)
SHARDMM_ENTRY(csyr2k, CSYR2K, void, void, std::complex<float>, std::complex<float>)
SHARDMM_ENTRY(zsyr2k, ZSYR2K, void, void, std::complex<double>, std::complex<double>)
SHARDMM_ENTRY(cher2k, CHER2K, void, float, std::complex<float>, float)
SHARDMM_ENTRY(zher2k, ZHER2K, void, double, std::complex<double>, double)
}
