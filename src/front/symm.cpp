// symm / hemm front end: C <- alpha A B + beta C (Left) or alpha B A + beta C (Right), A
// symmetric (Hermitian) with one triangle stored, any layouts of one mesh.
//
// What moves where:
//   1. A's full square in A's own layout (an owned matrix S): each rank copies its own tile
//      of A and takes the elements outside the `uplo` triangle from A^T (A^H for hemm), which
//      geadd moves there (a local transpose of each tile, then one redistribution: about
//      |A| / P words per rank); hemm zeroes the imaginary parts of the diagonal.
//   2. One gemm(N, N) with S on the side given: its planner picks the algorithm and moves
//      what it needs, as for any product.
// So the words are gemm's plus one redistribution of A. Validation uses global metadata only
// (same error on every rank).
#include <string>

#include "blas/blas.hpp"
#include "comm/wait.hpp"
#include "core/instantiate.hpp"
#include "shardmm/blas3.hpp"
#include "shardmm/error.hpp"
#include "shardmm/gemm.hpp"
#include "trace/call.hpp"

namespace shardmm {
namespace {

template <Scalar T>
void symm_validate(const char* routine, Side side, const DistMatrix<T>& A, const DistMatrix<T>& B,
                   const DistMatrix<T>& C) {
  const std::string r = routine;
  const index_t na = side == Side::Left ? C.rows() : C.cols();
  if (A.rows() != A.cols() || A.rows() != na || B.rows() != C.rows() || B.cols() != C.cols())
    throw DimensionMismatch(r + ": A " + A.layout().to_string() + " must be square with " +
                            (side == Side::Left ? "C's rows" : "C's columns") + ", B " +
                            B.layout().to_string() + " the shape of C " + C.layout().to_string());
  if (A.layout().is_unreduced())
    throw NotSupported(r + ": A " + A.layout().to_string() + " holds pending partial sums");
}

// A's full square in A's layout from its `uplo` triangle (owned: gemm may use every pooled
// slot).
template <Scalar T>
DistMatrix<T> symm_full(Uplo uplo, bool hermitian, const DistMatrix<T>& A) {
  DistMatrix<T> S(A.mesh(), A.layout());
  geadd(hermitian && is_complex_v<T> ? Op::C : Op::T, T(1), A, T(0), S);  // the other triangle
  for (index_t j = 0; j < A.local_cols(); ++j) {
    const index_t j_glob = A.global_col(j);
    for (index_t i = 0; i < A.local_rows(); ++i) {
      const index_t i_glob = A.global_row(i);
      const bool in = uplo == Uplo::Upper ? i_glob <= j_glob : i_glob >= j_glob;
      if (in) S.local(i, j) = A.local(i, j);
      if constexpr (is_complex_v<T>) {
        if (hermitian && i_glob == j_glob) S.local(i, j) = T(S.local(i, j).real(), 0);
      }
    }
  }
  return S;
}

template <Scalar T>
void symm_product(const char* routine, bool hermitian, Side side, Uplo uplo, T alpha,
                  const DistMatrix<T>& A, const DistMatrix<T>& B, T beta, DistMatrix<T>& C) {
  symm_validate(routine, side, A, B, C);
  const comm::WaitScope waiting;  // SHARDMM_WAIT
  const trace::Call traced(C.mesh().comm(), routine);
  if (C.rows() == 0 || C.cols() == 0 || (alpha == T(0) && beta == T(1))) return;
  if (alpha == T(0) && !C.layout().is_unreduced())  // neither A nor B is read
    return blas::scale(C.local_rows(), C.local_cols(), beta, C.data(), C.ld());
  const DistMatrix<T> S = symm_full(uplo, hermitian, A);
  if (side == Side::Left) gemm(Op::N, Op::N, alpha, S, B, beta, C);
  else gemm(Op::N, Op::N, alpha, B, S, beta, C);
}

}  // namespace

template <Scalar T>
void symm(Side side, Uplo uplo, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
          DistMatrix<T>& C) {
  symm_product("symm", false, side, uplo, alpha, A, B, beta, C);
}

template <Scalar T>
void hemm(Side side, Uplo uplo, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
          DistMatrix<T>& C) {
  symm_product("hemm", true, side, uplo, alpha, A, B, beta, C);
}

#define SHARDMM_INSTANTIATE(T)                                                        \
  template void symm<T>(Side, Uplo, T, const DistMatrix<T>&, const DistMatrix<T>&, T, \
                        DistMatrix<T>&);                                              \
  template void hemm<T>(Side, Uplo, T, const DistMatrix<T>&, const DistMatrix<T>&, T, \
                        DistMatrix<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm
