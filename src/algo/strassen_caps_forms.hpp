// Private to strassen_caps.cpp: the element-wise additions of Strassen's breadth-first step,
// one rank's rows and columns of Winograd's fourteen operands and C's four quadrants.
#pragma once

#include <array>
#include <complex>
#include <initializer_list>
#include <type_traits>

#include "algo/algo.hpp"
#include "core/winograd.hpp"

namespace shardmm::algo::caps {

struct Shape {
  int P = 0, Q = 0;
  index_t m = 0, n = 0, k = 0;
  index_t bm = 0, bn = 0;          // aligned block sizes
  index_t m1 = 0, n1 = 0, k1 = 0;  // padded quadrant sides
};

inline Shape shape_of(int P, index_t m, index_t n, index_t k) {
  Shape s;
  s.P = P, s.Q = P / winograd::kCapsGroups, s.m = m, s.n = n, s.k = k;
  s.m1 = winograd::caps_half(m, P), s.n1 = winograd::caps_half(n, P), s.k1 = (k + 1) / 2;
  s.bm = s.m1 / P, s.bn = s.n1 / P;
  return s;
}

// X(row0 + i, col0 + j) of a local tile read as is or transposed (`trans`), zero past
// rows x cols: one quadrant of an aligned operand, or one product of a stack.
template <class E>  // E: T to write, const T to read
struct Tile {
  E* p;
  index_t ld;
  bool trans;
  index_t row0, col0, rows, cols;
  [[nodiscard]] E& operator()(index_t i, index_t j) const {
    return trans ? p[(col0 + j) + (row0 + i) * ld] : p[(row0 + i) + (col0 + j) * ld];
  }
  [[nodiscard]] std::remove_const_t<E> at(index_t i, index_t j) const {
    return i < rows && j < cols ? (*this)(i, j) : std::remove_const_t<E>(0);
  }
};
template <class T>
using Quad = Tile<const T>;

template <class T>
struct Term {
  T sign;
  Quad<T> q;
};

// out(i, j) = the terms' signed sum (conjugated when `conj`: op C) for i < rows, j < cols,
// walking out's storage in order.
template <class T>
void form(const Tile<T>& out, std::initializer_list<Term<T>> terms, bool conj = false) {
  auto sum = [&](index_t i, index_t j) {
    T s(0);
    for (const Term<T>& t : terms) s += t.sign * t.q.at(i, j);
    if constexpr (is_complex_v<T>)
      if (conj) s = std::conj(s);
    return s;
  };
  if (out.trans) {
    for (index_t i = 0; i < out.rows; ++i)
      for (index_t j = 0; j < out.cols; ++j) out(i, j) = sum(i, j);
    return;
  }
  for (index_t j = 0; j < out.cols; ++j)
    for (index_t i = 0; i < out.rows; ++i) out(i, j) = sum(i, j);
}

// op(A)'s quadrant (qi, qj) in this rank's aligned tile: its rows are the tile's first bm
// (top) or the rest (bottom); its columns op(A)'s first k1 or the rest. Read as stored (no
// conjugation: form() conjugates the sums).
template <class T>
Quad<T> a_quad(const DistMatrix<T>& A, Op op, const Shape& s, int qi, int qj) {
  const bool t = op != Op::N;
  const index_t rows = t ? A.local_cols() : A.local_rows();
  return {
      A.data(), A.ld(), t, qi * s.bm, qj * s.k1, qi ? rows - s.bm : s.bm, qj ? s.k - s.k1 : s.k1};
}

template <class T>
Quad<T> b_quad(const DistMatrix<T>& B, Op op, const Shape& s, int qi, int qj) {
  const bool t = op != Op::N;
  const index_t cols = t ? B.local_rows() : B.local_cols();
  return {
      B.data(), B.ld(), t, qi * s.k1, qj * s.bn, qi ? s.k - s.k1 : s.k1, qj ? cols - s.bn : s.bn};
}

// The left stack holds product g's left operand transposed (k1 x bm, columns g bm on), the
// right stack its right operand as is (k1 x bn, columns g bn on): each group's piece is then
// one run of columns, sent and received in place.
template <class T>
void form_left(const DistMatrix<T>& A, Op op, const Shape& s, DistMatrix<T>& L) {
  const Quad<T> a11 = a_quad(A, op, s, 0, 0), a12 = a_quad(A, op, s, 0, 1),
                a21 = a_quad(A, op, s, 1, 0), a22 = a_quad(A, op, s, 1, 1);
  const T p(1), n(-1);
  const bool c = op == Op::C;
  auto slot = [&](int g) { return Tile<T>{L.data(), L.ld(), true, g * s.bm, 0, s.bm, s.k1}; };
  form(slot(0), {{p, a11}}, c);
  form(slot(1), {{p, a12}}, c);
  form(slot(2), {{p, a12}, {p, a11}, {n, a21}, {n, a22}}, c);  // S4
  form(slot(3), {{p, a22}}, c);
  form(slot(4), {{p, a21}, {p, a22}}, c);            // S1
  form(slot(5), {{p, a21}, {p, a22}, {n, a11}}, c);  // S2
  form(slot(6), {{p, a11}, {n, a21}}, c);            // S3
}

template <class T>
void form_right(const DistMatrix<T>& B, Op op, const Shape& s, DistMatrix<T>& R) {
  const Quad<T> b11 = b_quad(B, op, s, 0, 0), b12 = b_quad(B, op, s, 0, 1),
                b21 = b_quad(B, op, s, 1, 0), b22 = b_quad(B, op, s, 1, 1);
  const T p(1), n(-1);
  const bool c = op == Op::C;
  auto slot = [&](int g) { return Tile<T>{R.data(), R.ld(), false, 0, g * s.bn, s.k1, s.bn}; };
  form(slot(0), {{p, b11}}, c);
  form(slot(1), {{p, b21}}, c);
  form(slot(2), {{p, b22}}, c);
  form(slot(3), {{p, b22}, {n, b12}, {p, b11}, {n, b21}}, c);  // T4
  form(slot(4), {{p, b12}, {n, b11}}, c);                      // T1
  form(slot(5), {{p, b22}, {n, b12}, {p, b11}}, c);            // T2
  form(slot(6), {{p, b22}, {n, b12}}, c);                      // T3
}

// C's quadrants, this rank's rows, from the seven products' rows (Mt: the products
// transposed, n1 x 7 bm, product g in columns g bm on).
template <class T>
void form_c(const DistMatrix<T>& Mt, const Shape& s, DistMatrix<T>& C) {
  std::array<Quad<T>, winograd::kCapsGroups> m{};
  for (int g = 0; g < winograd::kCapsGroups; ++g)
    m[g] = {Mt.data(), Mt.ld(), true, g * s.bm, 0, s.bm, s.n1};
  const index_t bottom = C.local_rows() - s.bm, right = s.n - s.n1;
  auto c = [&](int ci, int cj) {
    return Tile<T>{C.data(),           C.ld(),           false, ci * s.bm, cj * s.n1,
                   ci ? bottom : s.bm, cj ? right : s.n1};
  };
  const T p(1), n(-1);
  form(c(0, 0), {{p, m[0]}, {p, m[1]}});
  form(c(0, 1), {{p, m[0]}, {p, m[5]}, {p, m[4]}, {p, m[2]}});
  form(c(1, 0), {{p, m[0]}, {p, m[5]}, {p, m[6]}, {n, m[3]}});
  form(c(1, 1), {{p, m[0]}, {p, m[5]}, {p, m[6]}, {p, m[4]}});
}

}  // namespace shardmm::algo::caps
