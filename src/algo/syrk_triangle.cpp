// syrk / herk, the local step (algo/syrk.hpp): one rank's tile of C from the op(A) rows of its
// rows (X) and of its columns (Y), which the front end (front/syrk.cpp) has moved here.
// Nothing moves in this file: it only chooses which local GEMMs run.
//
// Per chunk of local columns (global columns jmin..jmax, increasing), the local rows split in
// three runs because local rows are in increasing global order:
//   inside    every element of the row within the chunk is in the triangle (upper: i <= jmin,
//             lower: i >= jmax): one GEMM into C, beta folded;
//   crossing  the diagonal crosses the row within the chunk: the chunk's columns are halved
//             and each half splits these rows again, down to pieces of at most 32 columns,
//             whose crossing rows go through one GEMM into workspace slot Partial, then only
//             the triangle's elements are folded into C;
//   outside   no element in the triangle: skipped.
// So the flops are the triangle's plus a band about 32 columns wide along the diagonal, not a
// chunk-wide one (up to 256 local columns, spanning more global columns on a cyclic layout).
#include <algorithm>
#include <vector>

#include "algo/syrk.hpp"
#include "blas/blas.hpp"
#include "core/instantiate.hpp"
#include "memory/workspace.hpp"

namespace shardmm::algo {
namespace {

bool in_syrk_triangle(Uplo uplo, index_t i, index_t j) {
  return uplo == Uplo::Upper ? i <= j : i >= j;
}

// Local rows [begin, end) of each run for a chunk whose global columns are jmin..jmax.
struct TriangleRows {
  index_t inside_begin, inside_end, cross_begin, cross_end;
};

TriangleRows triangle_rows(Uplo uplo, const std::vector<index_t>& rows, index_t jmin,
                           index_t jmax) {
  const auto at = [&](auto it) { return static_cast<index_t>(it - rows.begin()); };
  if (uplo == Uplo::Upper) {
    const index_t a = at(std::upper_bound(rows.begin(), rows.end(), jmin));
    const index_t b = at(std::upper_bound(rows.begin(), rows.end(), jmax));
    return {0, a, a, b};
  }
  const index_t a = at(std::lower_bound(rows.begin(), rows.end(), jmin));
  const index_t b = at(std::lower_bound(rows.begin(), rows.end(), jmax));
  return {b, index_t(rows.size()), a, b};
}

// out (rows r0..r1 x cols c0..c1 of the tile, leading dimension ldo) <- alpha X Y' + beta out.
template <Scalar T>
void triangle_block(const TrianglePanels& p, index_t r0, index_t r1, index_t c0, index_t c1,
                    T alpha, T beta, T* out, index_t ldo) {
  const Op prime = p.hermitian && is_complex_v<T> ? Op::C : Op::T;
  const T* X = static_cast<const T*>(p.X);
  const T* Y = static_cast<const T*>(p.Y);
  if (p.a_rows)
    blas::gemm(Op::N, prime, r1 - r0, c1 - c0, p.k, alpha, X + r0, p.ldx, Y + c0, p.ldy, beta, out,
               ldo);
  else
    blas::gemm(prime, Op::N, r1 - r0, c1 - c0, p.k, alpha, X + r0 * p.ldx, p.ldx, Y + c0 * p.ldy,
               p.ldy, beta, out, ldo);
}

template <Scalar T>
void zero_diagonal_imag(T* C, index_t ldc, const TileIndex& index) {
  if constexpr (is_complex_v<T>) {
    for (index_t j = 0; j < index_t(index.cols.size()); ++j) {
      const auto it = std::lower_bound(index.rows.begin(), index.rows.end(), index.cols[j]);
      if (it == index.rows.end() || *it != index.cols[j]) continue;
      T& c = C[(it - index.rows.begin()) + j * ldc];
      c = T(c.real(), 0);
    }
  } else {
    (void)C, (void)ldc, (void)index;
  }
}

// The band's width: a crossing piece wider than this is halved, so the flops spent outside
// the triangle are at most a band of about this many columns along the diagonal.
constexpr index_t kFinestBand = 32;

// Local columns [c0, c1) over the local rows [lo, hi).
struct TrianglePiece {
  index_t c0, c1, lo, hi;
};

// One piece: the rows wholly inside the triangle for every column of the piece in one GEMM
// into C; the rows the diagonal crosses either go back to `todo` as the two halves of the
// columns or, for a piece at most kFinestBand wide, through one GEMM into workspace slot
// Partial whose triangle elements are folded into C.
template <Scalar T>
void triangle_piece(Uplo uplo, T alpha, const TrianglePanels& p, T beta, T* C, index_t ldc,
                    const TileIndex& index, const TrianglePiece& q,
                    std::vector<TrianglePiece>& todo) {
  TriangleRows r = triangle_rows(uplo, index.rows, index.cols[q.c0], index.cols[q.c1 - 1]);
  r.inside_begin = std::max(r.inside_begin, q.lo), r.inside_end = std::min(r.inside_end, q.hi);
  r.cross_begin = std::max(r.cross_begin, q.lo), r.cross_end = std::min(r.cross_end, q.hi);
  if (r.inside_end > r.inside_begin)
    triangle_block(p, r.inside_begin, r.inside_end, q.c0, q.c1, alpha, beta,
                   C + r.inside_begin + q.c0 * ldc, ldc);
  const index_t h = r.cross_end - r.cross_begin, w = q.c1 - q.c0;
  if (h <= 0) return;
  if (w > kFinestBand) {
    const index_t mid = q.c0 + w / 2;
    todo.push_back({mid, q.c1, r.cross_begin, r.cross_end});
    todo.push_back({q.c0, mid, r.cross_begin, r.cross_end});
    return;
  }
  T* band = memory::get<T>(memory::Slot::Partial, h * w);
  triangle_block(p, r.cross_begin, r.cross_end, q.c0, q.c1, alpha, T(0), band, h);
  for (index_t j = 0; j < w; ++j)
    for (index_t i = 0; i < h; ++i) {
      if (!in_syrk_triangle(uplo, index.rows[r.cross_begin + i], index.cols[q.c0 + j])) continue;
      T& c = C[r.cross_begin + i + (q.c0 + j) * ldc];
      c = band[i + j * h] + (beta == T(0) ? T(0) : beta * c);
    }
}

}  // namespace

template <Scalar T>
void syrk_triangle(Uplo uplo, T alpha, const TrianglePanels& p, T beta, T* C, index_t ldc,
                   const TileIndex& index, index_t chunk) {
  const index_t ncols = index_t(index.cols.size()), nrows = index_t(index.rows.size());
  std::vector<TrianglePiece> todo;
  for (index_t c0 = 0; c0 < ncols; c0 += chunk) {
    todo.push_back({c0, std::min(ncols, c0 + chunk), 0, nrows});
    while (!todo.empty()) {
      const TrianglePiece q = todo.back();
      todo.pop_back();
      triangle_piece(uplo, alpha, p, beta, C, ldc, index, q, todo);
    }
  }
  if (p.hermitian) zero_diagonal_imag(C, ldc, index);
}

template <Scalar T>
void scale_triangle(Uplo uplo, T beta, bool hermitian, T* C, index_t ldc, const TileIndex& index) {
  for (index_t j = 0; j < index_t(index.cols.size()); ++j)
    for (index_t i = 0; i < index_t(index.rows.size()); ++i) {
      if (!in_syrk_triangle(uplo, index.rows[i], index.cols[j])) continue;
      T& c = C[i + j * ldc];
      c = beta == T(0) ? T(0) : beta * c;
    }
  if (hermitian) zero_diagonal_imag(C, ldc, index);
}

#define SHARDMM_INSTANTIATE(T)                                                                     \
  template void syrk_triangle<T>(Uplo, T, const TrianglePanels&, T, T*, index_t, const TileIndex&, \
                                 index_t);                                                         \
  template void scale_triangle<T>(Uplo, T, bool, T*, index_t, const TileIndex&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
