// The copy loops the distributed algorithms share: blocks, runs of rows and runs of columns
// moved between column-major buffers. Every buffer is (pointer, ld): element (i, j) is at
// p[i + j * ld], ld being a leading dimension (>= the rows used). A "run" is a half-open
// range [begin, end) of row or column indices; runs are taken in the order listed, and the
// packed side holds them one after another (local order). Nothing here allocates.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "shardmm/layout.hpp"

namespace shardmm::algo {

using Runs = std::vector<std::pair<index_t, index_t>>;

/// How many indices `runs` holds in all.
inline index_t count(const Runs& runs) {
  index_t n = 0;
  for (auto [b, e] : runs) n += e - b;
  return n;
}

/// The most any coordinate owns along `map` (a buffer that fits every tile).
inline index_t widest(const DimMap& map) {
  index_t w = 0;
  for (int c = 0; c < map.nprocs; ++c) w = std::max(w, map.local_extent(c));
  return w;
}

/// Whether some coordinate owns more than one run of `map`'s indices (a cyclic split: its
/// rows or columns are not one contiguous range).
inline bool scattered(const DimMap& map) { return (map.extent + map.nb - 1) / map.nb > map.nprocs; }

/// dst = src for a rows x cols block. Returns the column after the block in dst
/// (dst + cols * ld_dst), so packed blocks can follow each other.
template <class T>
T* copy_block(const T* src, index_t ld_src, index_t rows, index_t cols, T* dst, index_t ld_dst) {
  for (index_t j = 0; j < cols; ++j) std::copy_n(src + j * ld_src, rows, dst + j * ld_dst);
  return dst + cols * ld_dst;
}

/// dst[0, n) += src[0, n).
template <class T>
void add_n(const T* src, index_t n, T* dst) {
  for (index_t i = 0; i < n; ++i) dst[i] += src[i];
}

/// dst += src for a rows x cols block.
template <class T>
void add_block(const T* src, index_t ld_src, index_t rows, index_t cols, T* dst, index_t ld_dst) {
  for (index_t j = 0; j < cols; ++j) add_n(src + j * ld_src, rows, dst + j * ld_dst);
}

/// The rows `row_runs` of the columns `col_runs` of src, column by column into dst: each
/// column's rows stacked (count(row_runs) of them), columns ld_dst apart. Returns the column
/// after the last one written.
template <class T>
T* pack_runs(const T* src, index_t ld_src, const Runs& row_runs, const Runs& col_runs, T* dst,
             index_t ld_dst) {
  for (auto [cb, ce] : col_runs)
    for (index_t j = cb; j < ce; ++j, dst += ld_dst) {
      T* out = dst;
      for (auto [rb, re] : row_runs) out = std::copy_n(src + rb + j * ld_src, re - rb, out);
    }
  return dst;
}

/// The rows `runs` of src's first `cols` columns, stacked into dst (ld = count(runs)).
/// Returns the end of what was written.
template <class T>
T* pack_row_runs(const T* src, index_t ld_src, const Runs& runs, index_t cols, T* dst) {
  return pack_runs(src, ld_src, runs, Runs{{0, cols}}, dst, count(runs));
}

/// The whole columns `runs` of src (`rows` each), one after another into dst (ld = rows).
/// Returns the end of what was written.
template <class T>
T* pack_col_runs(const T* src, index_t ld_src, const Runs& runs, index_t rows, T* dst) {
  for (auto [b, e] : runs) dst = copy_block(src + b * ld_src, ld_src, rows, e - b, dst, rows);
  return dst;
}

namespace pack_detail {

// put(s, n, d) for every stretch of consecutive rows of src (its columns ld_src apart) and
// their places, the rows `runs` of dst's first `cols` columns.
template <class T, class Put>
void to_row_runs(const T* src, index_t ld_src, const Runs& runs, index_t cols, T* dst,
                 index_t ld_dst, Put put) {
  for (index_t j = 0; j < cols; ++j) {
    const T* s = src + j * ld_src;
    for (auto [b, e] : runs) {
      put(s, e - b, dst + b + j * ld_dst);
      s += e - b;
    }
  }
}

// put(s, n, d) for every column of src (`rows` each, in order) and its place among the
// columns `runs` of dst.
template <class T, class Put>
void to_col_runs(const T* src, index_t ld_src, const Runs& runs, index_t rows, T* dst,
                 index_t ld_dst, Put put) {
  for (auto [b, e] : runs)
    for (index_t j = b; j < e; ++j, src += ld_src) put(src, rows, dst + j * ld_dst);
}

template <class T>
void copy_n(const T* src, index_t n, T* dst) {
  std::copy_n(src, n, dst);
}

}  // namespace pack_detail

/// The inverse of pack_row_runs: src's consecutive rows (its columns ld_src apart) into the
/// rows `runs` of dst's first `cols` columns.
template <class T>
void place_row_runs(const T* src, index_t ld_src, const Runs& runs, index_t cols, T* dst,
                    index_t ld_dst) {
  pack_detail::to_row_runs(src, ld_src, runs, cols, dst, ld_dst, pack_detail::copy_n<T>);
}

/// The inverse of pack_col_runs: src's consecutive columns (`rows` each) into the columns
/// `runs` of dst.
template <class T>
void place_col_runs(const T* src, index_t ld_src, const Runs& runs, index_t rows, T* dst,
                    index_t ld_dst) {
  pack_detail::to_col_runs(src, ld_src, runs, rows, dst, ld_dst, pack_detail::copy_n<T>);
}

/// dst's rows `runs` (of its first `cols` columns) += src's consecutive rows: a product
/// computed for scattered rows added into their places.
template <class T>
void add_row_runs(const T* src, index_t ld_src, const Runs& runs, index_t cols, T* dst,
                  index_t ld_dst) {
  pack_detail::to_row_runs(src, ld_src, runs, cols, dst, ld_dst, add_n<T>);
}

/// dst's columns `runs` (`rows` each) += src's consecutive columns.
template <class T>
void add_col_runs(const T* src, index_t ld_src, const Runs& runs, index_t rows, T* dst,
                  index_t ld_dst) {
  pack_detail::to_col_runs(src, ld_src, runs, rows, dst, ld_dst, add_n<T>);
}

}  // namespace shardmm::algo
