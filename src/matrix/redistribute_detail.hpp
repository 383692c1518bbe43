// Internals shared by the redistribution patterns (redistribute.cpp and redistribute_*.cpp):
// the overlap of one rank's source tile with another's destination tile as runs of local
// indices, the copy loops over it, and one redistribution's context. Not installed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "comm/agree.hpp"
#include "core/fault.hpp"
#include "matrix/redistribute_plan.hpp"
#include "shardmm/redistribute.hpp"

namespace shardmm::matrix::detail {

/// `len` consecutive local indices: `to` in the destination tile, `from` in the source tile.
struct Run {
  index_t to = 0, from = 0, len = 0;
};

/// The elements a source tile and a destination tile share: rows x cols, each a list of runs
/// in increasing global order (so a packed copy lists them in both tiles' local order).
struct Block {
  std::vector<Run> rows, cols;
  index_t nrows = 0, ncols = 0;
  [[nodiscard]] std::int64_t size() const { return std::int64_t{nrows} * ncols; }
};

/// Runs of the indices of dimension `dim` owned by source coordinate `s` and destination
/// coordinate `t` (adjacent runs merged).
std::vector<Run> dim_runs(const DimMap& src, int s, const DimMap& dst, int t);

/// The overlap of the source tile of the cell at `src_coords` (source mesh) and the
/// destination tile of the cell at `dst_coords` (destination mesh).
Block overlap(const Layout& src, const std::vector<int>& src_coords, const Layout& dst,
              const std::vector<int>& dst_coords);

/// The block's elements of `src` (ld_src), column by column into `out` (ld = b.nrows).
template <class T>
void pack(const T* src, index_t ld_src, const Block& b, T* out) {
  for (const Run& c : b.cols)
    for (index_t j = c.from; j < c.from + c.len; ++j)
      for (const Run& r : b.rows) out = std::copy_n(src + r.from + j * ld_src, r.len, out);
}

/// dst <- alpha * in + beta * dst over the block's destination elements, `in` packed as
/// pack() writes it (or, with `in_ld` > 0, in the source tile's local indices with that ld).
/// beta == 0 never reads dst; add == true accumulates (dst += alpha * in) instead.
template <class T>
void place(const T* in, index_t in_ld, const Block& b, T* dst, index_t ld_dst, T alpha, T beta,
           bool add = false) {
  index_t col = 0;
  for (const Run& c : b.cols)
    for (index_t jj = 0; jj < c.len; ++jj, ++col) {
      T* out = dst + (c.to + jj) * ld_dst;
      index_t row = 0;
      for (const Run& r : b.rows) {
        const T* x = in_ld > 0 ? in + r.from + (c.from + jj) * in_ld : in + row + col * b.nrows;
        T* y = out + r.to;
        row += r.len;
        if (add) {
          for (index_t i = 0; i < r.len; ++i) y[i] += alpha * x[i];
        } else if (beta == T(0) && alpha == T(1)) {
          std::copy_n(x, r.len, y);
        } else if (beta == T(0)) {
          for (index_t i = 0; i < r.len; ++i) y[i] = alpha * x[i];
        } else {
          for (index_t i = 0; i < r.len; ++i) y[i] = alpha * x[i] + beta * y[i];
        }
      }
    }
}

/// dst <- beta * dst over the whole local tile (0 when beta == 0, never reading dst).
template <Scalar T>
void scale_tile(DistMatrix<T>& dst, T beta) {
  if (beta == T(1)) return;
  for (index_t j = 0; j < dst.local_cols(); ++j)
    for (index_t i = 0; i < dst.local_rows(); ++i)
      dst.local(i, j) = beta == T(0) ? T(0) : beta * dst.local(i, j);
}

/// One redistribution dst <- alpha * src + beta * dst run as `plan`, on the ranks of this
/// rank's group (`members`: mesh ranks in group order; `me`: this rank's place in it) over
/// `comm` (the exchange axes' communicator, or the whole mesh's across meshes).
template <Scalar T>
struct Move {
  const DistMatrix<T>& src;
  DistMatrix<T>& dst;
  T alpha, beta;
  const RedistPlan& plan;
  std::vector<int> members;
  int me = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  [[nodiscard]] std::vector<int> src_coords(int member) const {
    return src.layout().mesh().coords_of(members[static_cast<std::size_t>(member)]);
  }
  [[nodiscard]] std::vector<int> dst_coords(int member) const {
    return dst.layout().mesh().coords_of(members[static_cast<std::size_t>(member)]);
  }
};

/// Runs `take` (this rank's allocations and packing) as the redistribution's agreed phase:
/// every rank of the mesh learns whether any rank failed before anything moves.
template <Scalar T, class F>
void prepare(const Move<T>& m, F&& take) {
  comm::agreed(m.src.mesh().comm(), "redistribute", [&] {
    fault::point("redistribute");
    take();
  });
}

// The patterns. Each returns the elements it copied locally; the comm wrappers count the
// traffic.
template <Scalar T>
std::int64_t local_copy(const Move<T>& m);
template <Scalar T>
std::int64_t all_gather(const Move<T>& m);
template <Scalar T>
std::int64_t permute(const Move<T>& m);
template <Scalar T>
std::int64_t reduce_scatter(const Move<T>& m);
template <Scalar T>
std::int64_t all_reduce(const Move<T>& m);

}  // namespace shardmm::matrix::detail
