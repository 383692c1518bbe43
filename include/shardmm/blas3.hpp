// The PBLAS level-3 family beside gemm, on the same DistMatrix, mesh and redistribution layer.
//
// Today: transpose / geadd / tradd (ScaLAPACK's p?tran, p?tranu, p?tranc, p?geadd,
// p?tradd), the rank-k updates syrk / herk (p?syrk, p?herk) and the triangular products and
// solves trmm / trsm (p?trmm, p?trsm). Every operand may have any layout
// on one mesh (the same communicator); shapes are validated on global metadata before anything
// moves, so a bad call throws on every rank.
#pragma once

#include "shardmm/dist_matrix.hpp"
#include "shardmm/types.hpp"

namespace shardmm {

/// Which triangle of a square (or trapezoid of a rectangular) matrix an operation reads or
/// writes: Upper is i <= j, Lower is i >= j (global indices of the matrix as passed).
enum class Uplo { Upper, Lower };

/// Which side of B the triangular matrix op(A) stands on: Left op(A) B, Right B op(A).
enum class Side { Left, Right };

/// Unit: A's diagonal is taken as ones and never read; NonUnit: A's diagonal is used.
enum class Diag { NonUnit, Unit };

/// C <- beta * C + alpha * op(A), op T or C (op(A) = A^T or A^H; C is m x n, A is n x m).
/// One local transpose of A's tile (no communication) and one redistribution into C's
/// layout with alpha and beta folded in. beta == 0 never reads C. Throws InvalidArgument for
/// op N (use geadd) and DimensionMismatch for shapes that do not fit. Collective.
template <Scalar T>
void transpose(Op op, T alpha, const DistMatrix<T>& A, T beta, DistMatrix<T>& C);

/// C <- beta * C + alpha * op(A), op N, T or C (ScaLAPACK's p?geadd). Collective.
template <Scalar T>
void geadd(Op op, T alpha, const DistMatrix<T>& A, T beta, DistMatrix<T>& C);

/// The `uplo` trapezoid of C (i <= j or i >= j) <- beta * C + alpha * op(A); C's other
/// elements are neither read nor written (ScaLAPACK's p?tradd). op(A) moves into C's layout
/// once (all of it: a trapezoid is not a layout), then each rank updates its own elements of
/// the trapezoid. Collective.
template <Scalar T>
void tradd(Uplo uplo, Op op, T alpha, const DistMatrix<T>& A, T beta, DistMatrix<T>& C);

/// C <- alpha op(A) op(A)^T + beta C on the `uplo` triangle of the n x n matrix C (the other
/// triangle is neither read nor written); op N (A is n x k) or T (A is k x n; for real types C
/// is T). op(A)'s rows move twice, into panels matching C's rows and C's columns (C never
/// moves), and each rank multiplies only the blocks of its tile that touch the triangle: about
/// half of gemm's flops (docs/ALGORITHMS.md). alpha == 0 or k == 0 does not read A; beta == 0
/// does not read C. Throws DimensionMismatch (shapes), InvalidArgument (op C on a complex
/// type), NotSupported (C unreduced). Collective.
template <Scalar T>
void syrk(Uplo uplo, Op op, T alpha, const DistMatrix<T>& A, T beta, DistMatrix<T>& C);

/// C <- alpha op(A) op(A)^H + beta C on the `uplo` triangle, alpha and beta real, op N or C
/// (T for real types); the diagonal's imaginary parts are set to zero (BLAS herk). As syrk
/// otherwise; for a real type it is syrk.
template <Scalar T>
void herk(Uplo uplo, Op op, real_t<T> alpha, const DistMatrix<T>& A, real_t<T> beta,
          DistMatrix<T>& C);

/// B <- alpha op(A)^-1 B (Left) or alpha B op(A)^-1 (Right): solves op(A) X = alpha B or
/// X op(A) = alpha B for X, written over B (m x n). A is the square triangle `uplo` (m x m for
/// Left, n x n for Right; the other triangle is never used), op N, T or C, `diag` Unit takes its
/// diagonal as ones. Blocked and right-looking (docs/ALGORITHMS.md): op(A)'s rows (Left; its
/// columns for Right) move once to the ranks holding the matching rows (columns) of B, then per
/// step one block of B's rows (columns) is solved where it lives and broadcast along B's row
/// (column) axes, and every rank updates its own trailing part of B with one local GEMM. B never
/// moves. alpha == 0 sets B to zero without reading A. A singular A gives what BLAS' trsm
/// gives (infinities or NaN), no error. Throws DimensionMismatch (shapes), NotSupported (B
/// unreduced). Collective.
template <Scalar T>
void trsm(Side side, Uplo uplo, Op op, Diag diag, T alpha, const DistMatrix<T>& A,
          DistMatrix<T>& B);

/// B <- alpha op(A) B (Left) or alpha B op(A) (Right), A triangular as for trsm; the same
/// data movement as trsm (each step broadcasts B's block before its owner multiplies it by
/// the diagonal block). Collective.
template <Scalar T>
void trmm(Side side, Uplo uplo, Op op, Diag diag, T alpha, const DistMatrix<T>& A,
          DistMatrix<T>& B);

/// C <- alpha op(A) op(B)^T + alpha op(B) op(A)^T + beta C on the `uplo` triangle of the n x n
/// C (ScaLAPACK's p?syr2k); op N (A and B n x k) or T (k x n; for real types C is T). Two
/// passes of syrk's update (op(A)'s rows beside C's rows with op(B)'s beside its columns, then
/// the other way round): twice syrk's words and flops. alpha == 0 or k == 0 reads neither A nor
/// B; beta == 0 does not read C. Throws as syrk, and DimensionMismatch when A and B differ in
/// shape. Collective.
template <Scalar T>
void syr2k(Uplo uplo, Op op, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
           DistMatrix<T>& C);

/// C <- alpha op(A) op(B)^H + conj(alpha) op(B) op(A)^H + beta C on the `uplo` triangle (p?her2k),
/// beta real, op N or C (T for real types); the diagonal's imaginary parts are set to zero. As
/// syr2k otherwise.
template <Scalar T>
void her2k(Uplo uplo, Op op, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B,
           real_t<T> beta, DistMatrix<T>& C);

/// C <- alpha A B + beta C (Left; A is m x m) or alpha B A + beta C (Right; A is n x n), A
/// symmetric with only its `uplo` triangle read (ScaLAPACK's p?symm); C and B are m x n.
/// A's full square is formed once in A's own layout (the triangle as it is, the other one
/// from A^T: one transposed redistribution of A), then one gemm (its planner, algorithms and
/// pool as for any product). alpha == 0 reads neither A nor B; beta == 0 does not read C.
/// Throws DimensionMismatch (shapes), NotSupported (A unreduced). Collective.
template <Scalar T>
void symm(Side side, Uplo uplo, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
          DistMatrix<T>& C);

/// As symm with A Hermitian (p?hemm): the other triangle is conj(A)^T and the imaginary parts
/// of A's diagonal are taken as zero. For a real type it is symm.
template <Scalar T>
void hemm(Side side, Uplo uplo, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
          DistMatrix<T>& C);

}  // namespace shardmm
