// The local step of the rank-k updates (syrk, herk): one rank's tile of C updated from the
// rows of op(A) its tile needs, only the blocks that touch the triangle.
#pragma once

#include <vector>

#include "shardmm/blas3.hpp"

namespace shardmm::algo {

/// This rank's part of C <- alpha X Y' + beta C on the `uplo` triangle (global i <= j or
/// i >= j), where X holds op(A)'s rows for C's local rows and Y op(A)'s rows for C's local
/// columns, and ' is ^T (syrk) or ^H (hermitian). With `a_rows` (op N) X is local_rows x k
/// and Y local_cols x k (op(A) rows as stored rows); otherwise (op T / C) X is k x local_rows
/// and Y k x local_cols (op(A) rows as stored columns, A^T or A^H taken by the GEMM).
struct TrianglePanels {
  const void* X = nullptr;
  const void* Y = nullptr;
  index_t ldx = 1, ldy = 1, k = 0;
  bool a_rows = true;
  bool hermitian = false;
};

/// Global row / column index of each local row / column of C (increasing).
struct TileIndex {
  std::vector<index_t> rows, cols;
};

/// Runs the update in column chunks of at most `chunk` local columns: per chunk, the local
/// rows whose every element lies in the triangle get one GEMM straight into C; the rows the
/// diagonal crosses are split again per half of the chunk's columns, down to pieces of at most
/// 32 columns, whose crossing rows get one GEMM into workspace slot Partial, of which only the
/// triangle's elements are folded into C; the other rows are skipped. No communication.
/// Flops: the triangle's plus a band about 32 columns wide along the diagonal. beta == 0 never
/// reads C. Hermitian: the diagonal's imaginary parts are set to zero.
template <Scalar T>
void syrk_triangle(Uplo uplo, T alpha, const TrianglePanels& p, T beta, T* C, index_t ldc,
                   const TileIndex& index, index_t chunk);

/// C's `uplo` triangle on this rank <- beta C (beta == 0 writes zeros without reading);
/// hermitian: the diagonal's imaginary parts set to zero. No communication.
template <Scalar T>
void scale_triangle(Uplo uplo, T beta, bool hermitian, T* C, index_t ldc, const TileIndex& index);

}  // namespace shardmm::algo
