// Strassen's line form on two ranks (strassen_ring.cpp calls it when both op(A) pieces have
// the same k and C's tile has even sides): one Winograd product over the whole k instead of
// one per piece, with the two pieces as the k-halves of the top level:
//   op(A) = [A_own | A_other] (k in the order K_own, K_other: a permutation of k, the same
//   for op(B), whose rows are picked by those index sets),
//   A11 = A_own top rows, A21 = A_own bottom, A12 = A_other top, A22 = A_other bottom,
//   B1j = op(B)[K_own, half j], B2j = op(B)[K_other, half j].
// The first product, P7 = (A11 - A21)(B22 - B12), needs only the own piece, so the other
// arrives while it runs. C's quadrants are updated once per level, not once per piece.
// op(B)'s quadrants are read in place for the T sums and packed one at a time (W) for the
// three products that take one as it is. Scratch: X, Y, Z, W and the sub-products' levels
// (pair_scratch()).
#include <functional>

#include "algo/strassen.hpp"
#include "algo/strassen_kernels.hpp"
#include "algo/strassen_winograd.hpp"

namespace shardmm::algo {
namespace {

enum class Mode { Copy, Add, Sub, RevSub };  // Y = B, Y += B, Y -= B, Y = B - Y

template <class T>
void apply(T* y, const T* b, index_t len, Mode mode) {
  switch (mode) {
    case Mode::Copy:
      for (index_t i = 0; i < len; ++i) y[i] = b[i];
      break;
    case Mode::Add:
      for (index_t i = 0; i < len; ++i) y[i] += b[i];
      break;
    case Mode::Sub:
      for (index_t i = 0; i < len; ++i) y[i] -= b[i];
      break;
    case Mode::RevSub:
      for (index_t i = 0; i < len; ++i) y[i] = b[i] - y[i];
      break;
  }
}

// Y (op N: |K| x cols, op T / C: cols x |K|, as stored) combined with op(B)'s rows K and
// columns [c0, c0 + cols), read run by run from B as stored (B's k is whole: global = local).
template <class T>
void b_quadrant(Op opB, const T* B, index_t ldb, const Ranges& K, index_t c0, index_t cols, T* Y,
                index_t ldy, Mode mode) {
  if (opB == Op::N) {
    for (index_t j = 0; j < cols; ++j) {
      index_t at = 0;
      for (const auto& [b, e] : K) {
        apply(Y + j * ldy + at, B + (c0 + j) * ldb + b, e - b, mode);
        at += e - b;
      }
    }
    return;
  }
  index_t at = 0;
  for (const auto& [b, e] : K)
    for (index_t c = b; c < e; ++c, ++at) apply(Y + at * ldy, B + c * ldb + c0, cols, mode);
}

}  // namespace

template <Scalar T>
void strassen_pair(const Operands<T>& x, const PairPieces<T>& a, int levels, T* work,
                   const std::function<void()>& wait_other, Timers& t) {
  const index_t m = x.C.local_rows(), n = x.C.local_cols(), q = a.k;
  const index_t h = m / 2, g = n / 2, ldc = x.C.ld();
  const bool ta = x.opA != Op::N, tb = x.opB != Op::N;
  const index_t lda = ta ? q : m, ldx = ta ? q : h, ldy = tb ? g : q;
  auto rows = [&](const T* piece, index_t half) { return piece + half * h * (ta ? lda : 1); };
  const T *A11 = rows(a.own, 0), *A21 = rows(a.own, 1), *A12 = rows(a.other, 0),
          *A22 = rows(a.other, 1);
  T* X = work;       // h x q of op(A), as stored
  T* Y = X + h * q;  // q x g of op(B), as stored
  T* Z = Y + q * g;  // h x g of C
  T* W = Z + h * g;  // q x g: one quadrant of op(B) packed
  T* next = W + q * g;
  T *C11 = x.C.data(), *C12 = C11 + g * ldc, *C21 = C11 + h, *C22 = C21 + g * ldc;
  const T* Bd = x.B.data();
  const index_t ldb = x.B.ld();
  auto bq = [&](int i, int j, T* to, Mode mode) {  // op(B)'s quadrant (i, j)
    b_quadrant(x.opB, Bd, ldb, i ? a.k_other : a.k_own, j * g, g, to, ldy, mode);
  };
  auto a_sum = [&](T* to, const T* u, index_t ld_u, const T* v, index_t ld_v, bool minus) {
    const index_t ld_to = ldx;  // the scratch X
    combine(ta ? q : h, ta ? h : q, to, ld_to, u, ld_u, v, ld_v, minus);
  };
  auto prod = [&](T alpha, const T* A, index_t ldA, const T* B, T beta, T* C, index_t ldC) {
    winograd_gemm(x.opA, x.opB, h, g, q, alpha, A, ldA, B, ldy, beta, C, ldC, levels - 1, next);
  };
  auto to_c = [&](T* Cq, T beta) { accumulate(h, g, beta, Cq, ldc, Z, h); };
  const T al = x.alpha, be = x.beta, one(1), zero(0);
  t.timed(&Timers::gemm, "gemm", 0, [&] {
    a_sum(X, A11, lda, A21, lda, true);               // S3 = A11 - A21
    bq(1, 1, Y, Mode::Copy), bq(0, 1, Y, Mode::Sub);  // T3 = B22 - B12
    prod(al, X, ldx, Y, zero, Z, h);                  // Z = a P7
    to_c(C21, be), to_c(C22, be);
  });
  t.timed(&Timers::comm, "wait", 1, wait_other);
  t.timed(&Timers::gemm, "gemm", 1, [&] {
    a_sum(X, A21, lda, A22, lda, false);              // S1 = A21 + A22
    bq(0, 1, Y, Mode::Copy), bq(0, 0, Y, Mode::Sub);  // T1 = B12 - B11
    prod(al, X, ldx, Y, zero, Z, h);                  // Z = a P5
    to_c(C12, be), to_c(C22, one);
    a_sum(X, X, ldx, A11, lda, true);   // S2 = S1 - A11
    bq(1, 1, Y, Mode::RevSub);          // T2 = B22 - T1
    bq(0, 0, W, Mode::Copy);            // W = B11
    prod(al, A11, lda, W, zero, Z, h);  // Z = a P1
    to_c(C11, be);
    prod(al, X, ldx, Y, one, Z, h);  // Z = a (P1 + P6)
    to_c(C12, one), to_c(C21, one), to_c(C22, one);
    a_sum(X, A12, lda, X, ldx, true);       // S4 = A12 - S2
    bq(1, 1, W, Mode::Copy);                // W = B22
    prod(al, X, ldx, W, one, C12, ldc);     // C12 += a P3
    bq(1, 0, Y, Mode::Sub);                 // T4 = T2 - B21
    prod(-al, A22, lda, Y, one, C21, ldc);  // C21 -= a P4
    bq(1, 0, W, Mode::Copy);                // W = B21
    prod(al, A12, lda, W, one, C11, ldc);   // C11 += a P2
  });
}

#define SHARDMM_INSTANTIATE(T)                                                      \
  template void strassen_pair<T>(const Operands<T>&, const PairPieces<T>&, int, T*, \
                                 const std::function<void()>&, Timers&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
