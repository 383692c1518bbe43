// The local Strassen-Winograd recursion for C <- alpha op(A) op(B) when op(A) and op(B) may be
// overwritten (the breadth-first step's stacks, strassen_caps.cpp): its first step needs no
// scratch. It forms the left operands in A21's quadrant and the right ones in B12's (each
// from the one before, in place), the products straight into C's quadrants:
//   C11 = P1 | A21 = S2 B12 = T2 C12 = C11 + P6 (= U) | A21 = S3 B12 = T3 C21 = C12 + P7 (= V)
//   | A21 = S1 B12 = T1 C22 = C21 + P5 | C12 += C22 - C21 | A21 = S4 C12 += P3 |
//   B12 = T4 C21 -= P4 | C11 += P2
// with S2 = A21 + A22 - A11, S3 = A22 - S2, S1 = A11 + A22 - S3, S4 = A12 + A11 - S1,
// T2 = B22 - B12 + B11, T3 = T2 - B11, T1 = B22 - T3 - B11, T4 = B22 - T1 - B21 (the sums of
// strassen_winograd.cpp's header). The products below it are winograd_gemm's, with its
// scratch. Odd last rows and columns of C are done first (they read op(A) and op(B) whole),
// the odd inner index last (it reads only the peeled column of op(A) and row of op(B)).
#include "algo/strassen_kernels.hpp"
#include "algo/strassen_winograd.hpp"
#include "blas/blas.hpp"
#include "core/instantiate.hpp"

namespace shardmm::algo {
namespace {

// Block (r, c) of op(X), as a pointer into X as stored.
template <class T>
T* block_of(Op op, T* X, index_t ld, index_t r, index_t c) {
  return op == Op::N ? X + r + c * ld : X + c + r * ld;
}

// A product of the overwriting step: its operands' quadrants and C's, as stored.
template <class T>
struct Quadrants {
  Op opA, opB;
  index_t h, g, q;  // half of m, n, k
  T *A11, *A12, *A21, *A22, *B11, *B12, *B21, *B22;
  index_t lda, ldb;
  T *C11, *C12, *C21, *C22;
  index_t ldc;
};

template <class T>
Quadrants<T> quadrants(Op opA, Op opB, index_t m, index_t n, index_t k, T* A, index_t lda, T* B,
                       index_t ldb, T* C, index_t ldc) {
  const index_t h = m / 2, g = n / 2, q = k / 2;
  return {opA,
          opB,
          h,
          g,
          q,
          block_of(opA, A, lda, 0, 0),
          block_of(opA, A, lda, 0, q),
          block_of(opA, A, lda, h, 0),
          block_of(opA, A, lda, h, q),
          block_of(opB, B, ldb, 0, 0),
          block_of(opB, B, ldb, 0, g),
          block_of(opB, B, ldb, q, 0),
          block_of(opB, B, ldb, q, g),
          lda,
          ldb,
          C,
          C + g * ldc,
          C + h,
          C + h + g * ldc,
          ldc};
}

// The even part of the product (2h x 2g x 2q), the products below with `levels` - 1 levels.
template <class T>
void overwriting_step(const Quadrants<T>& s, T alpha, int levels, T* work) {
  const index_t h = s.h, g = s.g, q = s.q;
  const bool ta = s.opA != Op::N, tb = s.opB != Op::N;
  const index_t ar = ta ? q : h, ac = ta ? h : q, br = tb ? g : q, bc = tb ? q : g;
  const index_t lda = s.lda, ldb = s.ldb, ldc = s.ldc;
  const T p(1), n(-1);
  auto left = [&](Signed<T> x, Signed<T> y, Signed<T> w) { combine3(ar, ac, s.A21, lda, x, y, w); };
  auto right = [&](Signed<T> x, Signed<T> y, Signed<T> w) {
    combine3(br, bc, s.B12, ldb, x, y, w);
  };
  auto product = [&](T a, const T* X, const T* Y, T beta, T* Cq) {
    winograd_gemm(s.opA, s.opB, h, g, q, a, X, lda, Y, ldb, beta, Cq, ldc, levels - 1, work);
  };
  auto copy = [&](T* to, const T* from) { accumulate(h, g, T(0), to, ldc, from, ldc); };
  const Signed<T> a11{p, s.A11, lda}, a12{p, s.A12, lda}, a22{p, s.A22, lda};
  const Signed<T> b11{p, s.B11, ldb}, b21{n, s.B21, ldb}, b22{p, s.B22, ldb};
  product(alpha, s.A11, s.B11, T(0), s.C11);                  // C11 = a P1
  left({p, s.A21, lda}, a22, {n, s.A11, lda});                // S2 = A21 + A22 - A11
  right(b22, {n, s.B12, ldb}, b11);                           // T2 = B22 - B12 + B11
  copy(s.C12, s.C11);                                         // C12 = a P1
  product(alpha, s.A21, s.B12, T(1), s.C12);                  // C12 = a (P1 + P6) = U
  combine(ar, ac, s.A21, lda, s.A22, lda, s.A21, lda, true);  // S3 = A22 - S2
  combine(br, bc, s.B12, ldb, s.B12, ldb, s.B11, ldb, true);  // T3 = T2 - B11
  copy(s.C21, s.C12);                                         // C21 = U
  product(alpha, s.A21, s.B12, T(1), s.C21);                  // C21 = U + a P7 = V
  left(a11, a22, {n, s.A21, lda});                            // S1 = A11 + A22 - S3
  right(b22, {n, s.B12, ldb}, {n, s.B11, ldb});               // T1 = B22 - T3 - B11
  copy(s.C22, s.C21);                                         // C22 = V
  product(alpha, s.A21, s.B12, T(1), s.C22);                  // C22 = V + a P5
  combine3(h, g, s.C12, ldc, {p, s.C12, ldc}, {p, s.C22, ldc}, {n, s.C21, ldc});  // U + a P5
  left(a12, a11, {n, s.A21, lda});             // S4 = A12 + A11 - S1
  product(alpha, s.A21, s.B22, T(1), s.C12);   // C12 += a P3
  right(b22, {n, s.B12, ldb}, b21);            // T4 = B22 - T1 - B21
  product(-alpha, s.A22, s.B12, T(1), s.C21);  // C21 -= a P4
  product(alpha, s.A12, s.B21, T(1), s.C11);   // C11 += a P2
}

}  // namespace

template <Scalar T>
void winograd_gemm_overwriting(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, T* A,
                               index_t lda, T* B, index_t ldb, T* C, index_t ldc, int levels,
                               T* work) {
  if (levels <= 0 || m < 2 || n < 2 || k < 2) {
    blas::gemm(opA, opB, m, n, k, alpha, A, lda, B, ldb, T(0), C, ldc);
    return;
  }
  const index_t m0 = m & ~index_t(1), n0 = n & ~index_t(1), k0 = k & ~index_t(1);
  // The odd last row and column of C first, from op(A) and op(B) as given.
  if (m0 < m)  // C[m0, :] = a op(A)[m0, :] op(B)
    blas::gemm(opA, opB, 1, n, k, alpha, block_of(opA, A, lda, m0, 0), lda, B, ldb, T(0), C + m0,
               ldc);
  if (n0 < n)  // C[0:m0, n0] = a op(A)[0:m0, :] op(B)[:, n0]
    blas::gemm(opA, opB, m0, 1, k, alpha, A, lda, block_of(opB, B, ldb, 0, n0), ldb, T(0),
               C + n0 * ldc, ldc);
  overwriting_step(quadrants(opA, opB, m0, n0, k0, A, lda, B, ldb, C, ldc), alpha, levels, work);
  if (k0 < k)  // C[0:m0, 0:n0] += a op(A)[0:m0, k0] op(B)[k0, 0:n0]: outside the quadrants
    blas::gemm(opA, opB, m0, n0, 1, alpha, block_of(opA, A, lda, 0, k0), lda,
               block_of(opB, B, ldb, k0, 0), ldb, T(1), C, ldc);
}

#define SHARDMM_INSTANTIATE(T)                                                                  \
  template void winograd_gemm_overwriting<T>(Op, Op, index_t, index_t, index_t, T, T*, index_t, \
                                             T*, index_t, T*, index_t, int, T*);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
