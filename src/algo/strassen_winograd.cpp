// The local Strassen-Winograd recursion. One step splits op(A), op(B) and C into quadrants
// (the even part; odd last rows / columns peel off into classical GEMMs) and forms
//   S1 = A21 + A22  S2 = S1 - A11  S3 = A11 - A21  S4 = A12 - S2
//   T1 = B12 - B11  T2 = B22 - T1  T3 = B22 - B12  T4 = T2 - B21
//   P1 = A11 B11  P2 = A12 B21  P3 = S4 B22  P4 = A22 T4  P5 = S1 T1  P6 = S2 T2  P7 = S3 T3
//   C11 = P1 + P2   C12 = P1 + P6 + P5 + P3   C21 = P1 + P6 + P7 - P4   C22 = P1 + P6 + P7 + P5
// in an order that needs three scratch quadrants, X (of op(A)), Y (of op(B)) and Z (of C),
// and folds alpha into the products and beta into each C quadrant's first update:
//   X=S3 Y=T3 Z=aP7 | C21=bC21+Z C22=bC22+Z | X=S1 Y=T1 Z=aP5 | C12=bC12+Z C22+=Z |
//   X=S2 Y=T2 | Z=aP1 C11=bC11+Z | Z+=aP6 C12+=Z C21+=Z C22+=Z | X=S4 C12+=aP3 |
//   Y=T4 C21-=aP4 | C11+=aP2
// The quadrant sums of op(X) are formed on X as stored (op(X1) + op(X2) = op(X1 + X2)), so
// the leaves' GEMMs keep the caller's ops.
#include "algo/strassen_winograd.hpp"

#include "algo/strassen_kernels.hpp"
#include "blas/blas.hpp"
#include "core/instantiate.hpp"

namespace shardmm::algo {
namespace {

// Block (r, c) of op(X), as a pointer into X as stored.
template <class T>
T* at(Op op, T* X, index_t ld, index_t r, index_t c) {
  return op == Op::N ? X + r + c * ld : X + c + r * ld;
}

// One product C <- alpha op(A) op(B) + beta C and the scratch below it.
template <class T>
struct Product {
  Op opA, opB;
  index_t m, n, k;
  T alpha;
  const T* A;
  index_t lda;
  const T* B;
  index_t ldb;
  T beta;
  T* C;
  index_t ldc;
};

// recurse -> step -> sub -> recurse is the algorithm itself: depth <= levels <= kMaxLevels (6).
// NOLINTBEGIN(misc-no-recursion)
template <class T>
void recurse(const Product<T>& p, int levels, T* work);

// The same product with other operands, sizes h x g x q.
template <class T>
void sub(const Product<T>& p, index_t h, index_t g, index_t q, T alpha, const T* A, index_t lda,
         const T* B, index_t ldb, T beta, T* C, index_t ldc, int levels, T* work) {
  recurse(Product<T>{p.opA, p.opB, h, g, q, alpha, A, lda, B, ldb, beta, C, ldc}, levels, work);
}

// One Winograd step on the even part (2h x 2g x 2q) of p.
template <class T>
void step(const Product<T>& p, int levels, T* work) {
  const index_t h = p.m / 2, g = p.n / 2, q = p.k / 2;
  const bool ta = p.opA != Op::N, tb = p.opB != Op::N;
  const index_t ar = ta ? q : h, ac = ta ? h : q, br = tb ? g : q, bc = tb ? q : g;
  T* X = work;          // ar x ac: a quadrant of op(A) as stored
  T* Y = X + ar * ac;   // br x bc: a quadrant of op(B) as stored
  T* Z = Y + br * bc;   // h x g: a quadrant of C
  T* next = Z + h * g;  // the sub-products' scratch
  const T *A11 = at(p.opA, p.A, p.lda, 0, 0), *A12 = at(p.opA, p.A, p.lda, 0, q),
          *A21 = at(p.opA, p.A, p.lda, h, 0), *A22 = at(p.opA, p.A, p.lda, h, q);
  const T *B11 = at(p.opB, p.B, p.ldb, 0, 0), *B12 = at(p.opB, p.B, p.ldb, 0, g),
          *B21 = at(p.opB, p.B, p.ldb, q, 0), *B22 = at(p.opB, p.B, p.ldb, q, g);
  T *C11 = p.C, *C12 = p.C + g * p.ldc, *C21 = p.C + h, *C22 = p.C + h + g * p.ldc;
  const index_t ldc = p.ldc;
  const int L = levels - 1;
  auto a_sum = [&](T* to, const T* x, index_t ldx, const T* y, index_t ldy, bool minus) {
    combine(ar, ac, to, ar, x, ldx, y, ldy, minus);
  };
  auto b_sum = [&](T* to, const T* x, index_t ldx, const T* y, index_t ldy, bool minus) {
    combine(br, bc, to, br, x, ldx, y, ldy, minus);
  };
  auto to_c = [&](T* Cq, T beta) { accumulate(h, g, beta, Cq, ldc, Z, h); };
  a_sum(X, A11, p.lda, A21, p.lda, true);                       // S3
  b_sum(Y, B22, p.ldb, B12, p.ldb, true);                       // T3
  sub(p, h, g, q, p.alpha, X, ar, Y, br, T(0), Z, h, L, next);  // Z = a P7
  to_c(C21, p.beta), to_c(C22, p.beta);
  a_sum(X, A21, p.lda, A22, p.lda, false);                      // S1
  b_sum(Y, B12, p.ldb, B11, p.ldb, true);                       // T1
  sub(p, h, g, q, p.alpha, X, ar, Y, br, T(0), Z, h, L, next);  // Z = a P5
  to_c(C12, p.beta), to_c(C22, T(1));
  a_sum(X, X, ar, A11, p.lda, true);                                      // S2 = S1 - A11
  b_sum(Y, B22, p.ldb, Y, br, true);                                      // T2 = B22 - T1
  sub(p, h, g, q, p.alpha, A11, p.lda, B11, p.ldb, T(0), Z, h, L, next);  // Z = a P1
  to_c(C11, p.beta);
  sub(p, h, g, q, p.alpha, X, ar, Y, br, T(1), Z, h, L, next);  // Z = a (P1 + P6)
  to_c(C12, T(1)), to_c(C21, T(1)), to_c(C22, T(1));
  a_sum(X, A12, p.lda, X, ar, true);                                          // S4 = A12 - S2
  sub(p, h, g, q, p.alpha, X, ar, B22, p.ldb, T(1), C12, ldc, L, next);       // C12 += a P3
  b_sum(Y, Y, br, B21, p.ldb, true);                                          // T4 = T2 - B21
  sub(p, h, g, q, -p.alpha, A22, p.lda, Y, br, T(1), C21, ldc, L, next);      // C21 -= a P4
  sub(p, h, g, q, p.alpha, A12, p.lda, B21, p.ldb, T(1), C11, ldc, L, next);  // C11 += a P2
}

// The odd last row, column and inner index of p around its even part (done by step()).
template <class T>
void peel(const Product<T>& p) {
  const index_t m0 = p.m & ~index_t(1), n0 = p.n & ~index_t(1), k0 = p.k & ~index_t(1);
  if (k0 < p.k)  // C[0:m0, 0:n0] += a op(A)[0:m0, k0] op(B)[k0, 0:n0]
    blas::gemm(p.opA, p.opB, m0, n0, 1, p.alpha, at(p.opA, p.A, p.lda, 0, k0), p.lda,
               at(p.opB, p.B, p.ldb, k0, 0), p.ldb, T(1), p.C, p.ldc);
  if (m0 < p.m)  // C[m0, :] = a op(A)[m0, :] op(B) + b C[m0, :]
    blas::gemm(p.opA, p.opB, 1, p.n, p.k, p.alpha, at(p.opA, p.A, p.lda, m0, 0), p.lda, p.B, p.ldb,
               p.beta, p.C + m0, p.ldc);
  if (n0 < p.n)  // C[0:m0, n0] = a op(A)[0:m0, :] op(B)[:, n0] + b C[0:m0, n0]
    blas::gemm(p.opA, p.opB, m0, 1, p.k, p.alpha, p.A, p.lda, at(p.opB, p.B, p.ldb, 0, n0), p.ldb,
               p.beta, p.C + n0 * p.ldc, p.ldc);
}

template <class T>
void recurse(const Product<T>& p, int levels, T* work) {
  if (levels <= 0 || p.m < 2 || p.n < 2 || p.k < 2) {
    blas::gemm(p.opA, p.opB, p.m, p.n, p.k, p.alpha, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
    return;
  }
  step(p, levels, work);
  peel(p);
}
// NOLINTEND(misc-no-recursion)

}  // namespace

template <Scalar T>
void winograd_gemm(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, const T* A,
                   index_t lda, const T* B, index_t ldb, T beta, T* C, index_t ldc, int levels,
                   T* work) {
  recurse(Product<T>{opA, opB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc}, levels, work);
}

#define SHARDMM_INSTANTIATE(T)                                                            \
  template void winograd_gemm<T>(Op, Op, index_t, index_t, index_t, T, const T*, index_t, \
                                 const T*, index_t, T, T*, index_t, int, T*);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
