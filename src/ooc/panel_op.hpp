// How a panel buffer or a file's sub-block enters the local GEMM: the op BLAS applies to the
// stored data (its three and a conjugate without transpose, which is applied in place), seen
// from the column-major result D the streamed schedule computes (stream.cpp).
#pragma once

#include <algorithm>
#include <complex>

#include "shardmm/ooc.hpp"

namespace shardmm::ooc {

// op on a column-major buffer: BLAS's three and a conjugate without transpose.
enum class Eff { N, T, C, Conj };

inline Eff flip(Eff e) {  // op(X^T) in terms of X
  switch (e) {
    case Eff::N: return Eff::T;
    case Eff::T: return Eff::N;
    case Eff::C: return Eff::Conj;
    case Eff::Conj: return Eff::C;
  }
  return e;
}

inline Eff eff(Op op) { return op == Op::N ? Eff::N : op == Op::T ? Eff::T : Eff::C; }

/// One operand of D's product: its file and the op applied to the stored matrix.
struct Side {
  const MatrixFile* file = nullptr;
  Eff op = Eff::N;
  [[nodiscard]] bool stored_transposed() const { return op == Eff::T || op == Eff::C; }
};

/// The BLAS op and leading dimension of a panel buffer holding the stored sub-block (in the
/// file's order) of a rows x cols panel; a conjugate without transpose is applied in place
/// when `fresh` (the buffer was just read; a reused one has it already).
template <Scalar T>
Op buffer_op(const Side& side, T* buf, index_t rows, index_t cols, index_t& ld, bool fresh) {
  const bool st = side.stored_transposed();
  const index_t srows = st ? cols : rows, scols = st ? rows : cols;  // stored sub-block
  Eff e = side.file->fortran_order ? side.op : flip(side.op);
  ld = std::max<index_t>(side.file->fortran_order ? srows : scols, 1);
  if (e == Eff::Conj) {
    if constexpr (is_complex_v<T>)
      if (fresh)
        for (index_t i = 0; i < rows * cols; ++i) buf[i] = std::conj(buf[i]);
    e = Eff::N;
  }
  return e == Eff::N ? Op::N : e == Eff::T ? Op::T : Op::C;
}

}  // namespace shardmm::ooc
