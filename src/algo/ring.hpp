// Private to the ring (ring*.cpp): the ring's communicator, the AllGather forms' local
// product (TileGemm, multiply_block) and the entry points ring_run dispatches to.
// ring.cpp: the dispatch; ring_setup.cpp: the layouts; ring_allgather.cpp: p > 2 AllGather
// (circulate); ring_swap.cpp: p = 2 AllGather (chunked swaps); ring_reduce_scatter.cpp: the
// ReduceScatter form at every p.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "algo/algo.hpp"
#include "algo/pack.hpp"
#include "blas/blas.hpp"
#include "core/blocking.hpp"

namespace shardmm::algo::ring_detail {

/// The ring: axis_comm(X), its size p and this rank's position r on it.
struct Ring {
  MPI_Comm comm;
  int p, r;
  [[nodiscard]] int at(int d) const { return ((r + d) % p + p) % p; }
};

/// Mesh axes of L's dim d that split it (axes of size 1 dropped).
inline std::vector<int> splitting(const Layout& L, int d) {
  return L.mesh().long_axes(L.dim_axes(d));
}

/// Packs rows or columns [k0, k0+kw) along X's k dimension into `out` (ld = extent packed).
template <Scalar T>
void pack_k(const DistMatrix<T>& X, bool k_is_col, index_t k0, index_t kw, T* out) {
  if (k_is_col) copy_block(X.data() + k0 * X.ld(), X.ld(), X.local_rows(), kw, out, X.local_rows());
  else copy_block(X.data() + k0, X.ld(), kw, X.local_cols(), out, kw);
}

/// The leading dimension of a tile that arrived packed: `extent` x kw when k is X's columns,
/// kw x `extent` when it is X's rows.
inline index_t packed_ld(bool k_is_col, index_t extent, index_t kw) {
  return std::max<index_t>(k_is_col ? extent : kw, 1);
}

/// A rank's share of A + B + C in elements, (m k + k n + m n) / p, from global extents (the
/// same on every rank, so both sides of a swap cut the same chunks).
inline double abc_share(index_t m, index_t n, index_t k, int p) {
  const double dm = double(m), dn = double(n), dk = double(k);
  return (dm * dk + dk * dn + dm * dn) / p;
}
template <Scalar T>
double abc_share(const Operands<T>& x, int p) {
  return abc_share(x.C.rows(), x.C.cols(), x.opA == Op::N ? x.A.cols() : x.A.rows(), p);
}

/// The reduce-scatter ring's pass at p > 2: how many of C's unsplit columns (cd = 0: C split by
/// rows) or rows (cd = 1) circulate at once; Options::ring_chunk, else blocking::rs_pass_width
/// from global extents (k: the product's), at most all of them.
inline index_t rs_pass(const Layout& C, int cd, index_t k, int p, index_t ring_chunk) {
  const index_t other = cd == 0 ? C.cols() : C.rows();
  const index_t w = ring_chunk > 0
                        ? ring_chunk
                        : blocking::rs_pass_width(double(widest(C.map(cd))), double(other),
                                                  abc_share(C.rows(), C.cols(), k, p));
  return std::min<index_t>(std::max<index_t>(other, 1), w);
}

/// The AllGather forms' pass at p > 2: how much of k (of an m x n x k product) the tiles of
/// `map` carry at once; Options::ring_chunk, else blocking::ag_pass_width from global
/// extents, at most k.
inline index_t ag_pass(const DimMap& map, index_t m, index_t n, index_t k, int p,
                       index_t ring_chunk) {
  const index_t w = ring_chunk > 0 ? ring_chunk
                                   : blocking::ag_pass_width(double(widest(map)), double(k),
                                                             abc_share(m, n, k, p));
  return std::min<index_t>(std::max<index_t>(k, 1), w);
}

/// The AllGather forms' local product. AG-A: a tile of op(A)'s rows (`ext` of them) times
/// op(B)[k0 : k0+kw, :]; AG-B: op(A)[:, k0 : k0+kw] times a tile of op(B)'s columns. Into
/// `out` (ld ldo) with beta; at(i) is C's local row (AG-A) or column (AG-B) i. The other
/// operand Y (op(B) for AG-A, op(A) for AG-B) is read from the caller's storage, or, when it
/// is streamed (SplitStream), from `y`: its k-chunk starting at k index y_k0 (ld ldy).
template <Scalar T>
struct TileGemm {
  const Operands<T>& x;
  bool ag_a = true;
  const T* y = nullptr;
  index_t ldy = 0, y_k0 = 0;
  void operator()(const T* tile, index_t ld, index_t ext, index_t k0, index_t kw, T* out,
                  index_t ldo, T beta) const {
    const auto [yk, ldk] = other_at(k0);
    if (ag_a)
      blas::gemm(x.opA, x.opB, ext, x.C.local_cols(), kw, x.alpha, tile, ld, yk, ldk, beta, out,
                 ldo);
    else
      blas::gemm(x.opA, x.opB, x.C.local_rows(), ext, kw, x.alpha, yk, ldk, tile, ld, beta, out,
                 ldo);
  }
  // The other operand Y as the caller holds it, and whether its k runs along its stored rows
  // (op(B) = B, op(A) = A^T).
  [[nodiscard]] const DistMatrix<T>& y_matrix() const { return ag_a ? x.B : x.A; }
  [[nodiscard]] bool y_k_rows() const { return ag_a ? x.opB == Op::N : x.opA != Op::N; }
  // Y at k index k0, and its ld.
  [[nodiscard]] std::pair<const T*, index_t> other_at(index_t k0) const {
    const T* base = y ? y : y_matrix().data();
    const index_t ld = y ? ldy : y_matrix().ld(), kk = y ? k0 - y_k0 : k0;
    return {y_k_rows() ? base + kk : base + kk * ld, ld};
  }
  [[nodiscard]] T* at(index_t i) const { return ag_a ? x.C.data() + i : x.C.data() + i * x.C.ld(); }
  [[nodiscard]] index_t other() const { return ag_a ? x.C.local_cols() : x.C.local_rows(); }
};

/// Block b's tile over k-range [k0, k0+kw) into C: straight into its rows (AG-A) or columns
/// (AG-B) when they are one run (C's rows or columns <- `beta` times themselves plus the
/// product), else into scratch `tmp` and then added into each run (C scaled already).
template <Scalar T>
void multiply_block(const TileGemm<T>& g, const T* tile, index_t ld, const DimMap& map, int b,
                    index_t k0, index_t kw, T* tmp, T beta = T(1)) {
  const index_t ext = map.local_extent(b);
  const Runs runs = map.owned_ranges(b);
  if (runs.size() <= 1)
    return g(tile, ld, ext, k0, kw, g.at(runs.empty() ? 0 : runs[0].first), g.x.C.ld(), beta);
  const index_t ldt =
      std::max<index_t>(g.ag_a ? ext : g.other(), 1);  // tmp: ext x other or other x ext
  g(tile, ld, ext, k0, kw, tmp, ldt, T(0));
  if (g.ag_a) add_row_runs(tmp, ldt, runs, g.other(), g.x.C.data(), g.x.C.ld());
  else add_col_runs(tmp, ldt, runs, g.other(), g.x.C.data(), g.x.C.ld());
}

/// AllGather forms at p > 2 (ring_allgather.cpp): op(X)'s tiles (split along `map`, k along
/// X's columns when k_is_col) travel round the ring, each multiplied into C by g.
template <Scalar T>
void circulate(const Ring& ring, const DistMatrix<T>& X, bool k_is_col, const DimMap& map,
               index_t k, const TileGemm<T>& g, const Options& o, Timers& t);

/// AllGather forms at p = 2 (ring_swap.cpp): the same, the two tiles swapped in k-chunks;
/// `stream`: the other operand is split along k and streamed with them (RingSetup::stream).
/// C's beta goes into the first chunk's GEMMs (C is not scaled before).
template <Scalar T>
void swap_tiles(const Ring& ring, const DistMatrix<T>& X, bool k_is_col, const DimMap& map,
                index_t k, const TileGemm<T>& g, bool stream, const Options& o, Timers& t);

/// The ReduceScatter form (ring_reduce_scatter.cpp): partial sums of C travel round the ring.
template <Scalar T>
void reduce_scatter_ring(const Ring& ring, const Operands<T>& x, const Options& o, Timers& t);

}  // namespace shardmm::algo::ring_detail
