// Element-wise kernels of the Strassen-Winograd steps (strassen_winograd.cpp,
// strassen_pair.cpp): quadrant sums and C updates over column-major blocks.
#pragma once

#include "shardmm/types.hpp"

namespace shardmm::algo {

// Z <- X + Y or X - Y over a rows x cols block (Z may be X or Y).
template <class T>
inline void combine(index_t rows, index_t cols, T* Z, index_t ldz, const T* X, index_t ldx,
                    const T* Y, index_t ldy, bool subtract) {
  for (index_t j = 0; j < cols; ++j) {
    T* z = Z + j * ldz;
    const T* x = X + j * ldx;
    const T* y = Y + j * ldy;
    if (subtract)
      for (index_t i = 0; i < rows; ++i) z[i] = x[i] - y[i];
    else
      for (index_t i = 0; i < rows; ++i) z[i] = x[i] + y[i];
  }
}

// One signed block of a three-term sum: sign X (sign +1 or -1).
template <class T>
struct Signed {
  T sign;
  const T* X;
  index_t ld;
};

// Z <- x + y + w over a rows x cols block, each term signed; Z may be any of the terms' blocks
// (each element is read before it is written).
template <class T>
inline void combine3(index_t rows, index_t cols, T* Z, index_t ldz, Signed<T> x, Signed<T> y,
                     Signed<T> w) {
  for (index_t j = 0; j < cols; ++j) {
    T* z = Z + j * ldz;
    const T *a = x.X + j * x.ld, *b = y.X + j * y.ld, *c = w.X + j * w.ld;
    for (index_t i = 0; i < rows; ++i) z[i] = x.sign * a[i] + y.sign * b[i] + w.sign * c[i];
  }
}

// C <- beta C + Z (beta 0: C <- Z without reading C; beta 1: C += Z).
template <class T>
inline void accumulate(index_t rows, index_t cols, T beta, T* C, index_t ldc, const T* Z,
                       index_t ldz) {
  for (index_t j = 0; j < cols; ++j) {
    T* c = C + j * ldc;
    const T* z = Z + j * ldz;
    if (beta == T(0))
      for (index_t i = 0; i < rows; ++i) c[i] = z[i];
    else if (beta == T(1))
      for (index_t i = 0; i < rows; ++i) c[i] += z[i];
    else
      for (index_t i = 0; i < rows; ++i) c[i] = beta * c[i] + z[i];
  }
}

}  // namespace shardmm::algo
