// The ring's ReduceScatter form, op(A) = [I, K_X], op(B) = [K_X, J] -> C = [I_X, J] (or
// [I, J_X]), over mesh axis X of size p.
// Partial sums travel: at step s rank r computes alpha * A[rows of block (r+1+s), k_r] *
//   B[k_r, :], adds the accumulator received from r+1 and passes it to r-1 (MPI_Isend/Irecv
//   on axis_comm(X), two outgoing buffers); the GEMM of step s overlaps the sum arriving for
//   it. After p steps rank r holds block r complete. Words received per rank: (p-1) blocks
//   of C rows. With C split by columns the same runs on op(B)'s column blocks.
// C's split along X may be block, cyclic or block-cyclic: a scattered block's slice of op(A)
//   (op(B)) is packed before its GEMM.
// p = 2 swaps the sums in chunks of C's split dimension instead of whole blocks, for memory
//   (reduce_scatter_swap): each chunk sent to the peer overlaps the own chunk's GEMM.
// p > 2 runs the ring in passes over C's unsplit dimension (reduce_scatter_pass) when whole
//   blocks' sums would not fit (blocking::rs_pass_width): the same words, p - 1 messages a pass.
#include <algorithm>

#include "algo/ring.hpp"
#include "comm/collectives.hpp"
#include "comm/wire.hpp"
#include "core/blocking.hpp"
#include "core/instantiate.hpp"
#include "memory/workspace.hpp"

namespace shardmm::algo::ring_detail {
namespace {

// op(X)'s rows (op_dim 0) or columns (op_dim 1) listed in `runs` (`count` in all), as a
// pointer and ld for BLAS with `op`: into X itself when they are one run, else packed into
// `buf` in X's stored orientation. The listed dim must be whole in X (local = global index).
template <Scalar T>
std::pair<const T*, index_t> op_slice(const DistMatrix<T>& X, Op op, int op_dim, const Runs& runs,
                                      index_t count, T* buf) {
  const int d = stored_dim(op, op_dim);
  if (runs.size() <= 1) {
    const index_t g0 = runs.empty() ? 0 : runs[0].first;
    return {d == 0 ? X.data() + g0 : X.data() + g0 * X.ld(), X.ld()};
  }
  if (d == 0) {  // rows [b, e) of every column, stacked: ld = count
    pack_row_runs(X.data(), X.ld(), runs, X.local_cols(), buf);
    return {buf, std::max<index_t>(count, 1)};
  }
  pack_col_runs(X.data(), X.ld(), runs, X.local_rows(), buf);  // whole columns: ld = rows
  return {buf, std::max<index_t>(X.local_rows(), 1)};
}

// The global runs of `runs` (taken in local order) that hold local indices [lo, hi).
Runs sub_runs(const Runs& runs, index_t lo, index_t hi) {
  Runs out;
  index_t off = 0;
  for (auto [b, e] : runs) {
    const index_t s = std::max(lo, off), f = std::min(hi, off + e - b);
    if (s < f) out.emplace_back(b + s - off, b + f - off);
    off += e - b;
  }
  return out;
}

// The ReduceScatter form's local product for C's block b, its local rows (cd 0) or columns
// (cd 1) [lo, lo + cw), and C's unsplit columns (rows) [o0, o0 + ow): alpha * op(A)[those rows,
// k_r] * op(B)[k_r, those columns] (or op(A)[those rows, k_r] * op(B)[k_r, those columns] with
// the roles swapped) into `out` (ld ldo) with beta. A scattered chunk's slice of op(A) (op(B))
// is packed into `pack` first. The unsplit dimension is whole in op(B) (op(A)): local = global.
template <Scalar T>
void block_product(const Operands<T>& x, int cd, const DimMap& cmap, int b, index_t lo, index_t cw,
                   index_t o0, index_t ow, T* pack, T beta, T* out, index_t ldo) {
  const index_t kl = x.opA == Op::N ? x.A.local_cols() : x.A.local_rows();
  const auto runs = sub_runs(cmap.owned_ranges(b), lo, lo + cw);
  if (cd == 0) {
    const auto [a, lda] = op_slice(x.A, x.opA, 0, runs, cw, pack);
    const T* bo = x.opB == Op::N ? x.B.data() + o0 * x.B.ld() : x.B.data() + o0;
    blas::gemm(x.opA, x.opB, cw, ow, kl, x.alpha, a, lda, bo, x.B.ld(), beta, out, ldo);
  } else {
    const auto [bp, ldb] = op_slice(x.B, x.opB, 1, runs, cw, pack);
    const T* ao = x.opA == Op::N ? x.A.data() + o0 : x.A.data() + o0 * x.A.ld();
    blas::gemm(x.opA, x.opB, ow, cw, kl, x.alpha, ao, x.A.ld(), bp, ldb, beta, out, ldo);
  }
}

// ReduceScatter at p = 2: each rank computes the peer's block of partial sums in chunks of
// w of the block's rows or columns (cd) and sends chunk j while it multiplies chunk j of its
// own block straight into C (with beta) and adds the peer's chunk j, arriving meanwhile.
// Buffers: two outgoing chunks, one incoming, and a scattered chunk's packed slice.
template <Scalar T>
void reduce_scatter_swap(const Ring& ring, const Operands<T>& x, int cd, index_t w,
                         const Options& o, Timers& t) {
  const DimMap& cmap = x.C.layout().map(cd);
  const int peer = ring.at(1), tag = 9;
  const index_t other = cd == 0 ? x.C.cols() : x.C.rows();
  const index_t kl = x.opA == Op::N ? x.A.local_cols() : x.A.local_rows();
  const index_t mine = cmap.local_extent(ring.r), theirs = cmap.local_extent(peer);
  const index_t chunks = (std::max(mine, theirs) + w - 1) / w;
  T *out[2] = {}, *in = nullptr, *pack = nullptr;
  prologue(x.C.mesh().comm(), [&] {
    out[0] = memory::get<T>(memory::Slot::Panel0, std::min(w, theirs) * other);
    if (chunks > 1) out[1] = memory::get<T>(memory::Slot::Panel1, std::min(w, theirs) * other);
    in = memory::get<T>(memory::Slot::Panel2, std::min(w, mine) * other);
    if (scattered(cmap)) pack = memory::get<T>(memory::Slot::Partial, w * kl);
  });
  auto width = [&](index_t ext, index_t j) { return std::clamp<index_t>(ext - j * w, 0, w); };
  comm::Requests sent[2];
  for (index_t j = 0; j < chunks; ++j) {
    const index_t cp = width(theirs, j), cm = width(mine, j), lo = j * w;
    t.timed(&Timers::comm, "wait", j, [&] { sent[j % 2].wait(); });  // out[j % 2] left 2 chunks ago
    t.timed(&Timers::gemm, "gemm", j, [&] {
      const Polling polling(x.C.mesh(), o.overlap, {&sent[0], &sent[1]});
      if (cp > 0)
        block_product(x, cd, cmap, peer, lo, cp, 0, other, pack, T(0), out[j % 2],
                      cd == 0 ? cp : std::max<index_t>(other, 1));
    });
    comm::isend(out[j % 2], cp * other, peer, tag, ring.comm, sent[j % 2]);
    comm::Requests recv;
    comm::irecv(in, cm * other, peer, tag, ring.comm, recv);
    if (!o.overlap) recv.wait();
    T* cj = cd == 0 ? x.C.data() + lo : x.C.data() + lo * x.C.ld();
    t.timed(&Timers::gemm, "gemm", j, [&] {
      const Polling polling(x.C.mesh(), o.overlap, {&recv, &sent[0], &sent[1]});
      if (cm > 0) block_product(x, cd, cmap, ring.r, lo, cm, 0, other, pack, x.beta, cj, x.C.ld());
    });
    t.timed(&Timers::comm, "wait", j, [&] { recv.wait(); });
    const index_t rows = cd == 0 ? cm : other, cols = cd == 0 ? other : cm;
    add_block(in, rows, rows, cols, cj, x.C.ld());  // the peer's sums for this chunk (ld = rows)
  }
  sent[0].wait();
  sent[1].wait();
}

// One pass of the p > 2 ring over C's unsplit columns (rows when cd = 1) [o0, o0 + ow): at
// step s the partial of block (r+1+s) mod p is added to the running sum arriving from r+1 and
// sent to r-1; the last step is the own block, its GEMM straight into C with beta and the
// arriving sum added there. `work` (two outgoing sums), `incoming` and `pack` hold a pass's
// buffers; `sent` carries the outgoing sums over to the next pass, which waits for them.
template <Scalar T>
void reduce_scatter_pass(const Ring& ring, const Operands<T>& x, int cd, index_t o0, index_t ow,
                         index_t pass, T* const work[2], T* incoming, T* pack,
                         comm::Requests (&sent)[2], const Options& o, Timers& t) {
  const DimMap& cmap = x.C.layout().map(cd);
  for (int s = 0; s < ring.p; ++s) {
    const int b = ring.at(1 + s), w = s % 2;
    const index_t step = pass * ring.p + s;
    const bool last = s + 1 == ring.p;  // b == r: into C
    const index_t cb = cmap.local_extent(b);
    const index_t rows = cd == 0 ? cb : ow, cols = cd == 0 ? ow : cb;  // the sum, ld = rows
    T* out = last ? (cd == 0 ? x.C.data() + o0 * x.C.ld() : x.C.data() + o0) : work[w];
    const index_t ldo = last ? x.C.ld() : std::max<index_t>(rows, 1);
    comm::Requests recv;
    t.timed(&Timers::comm, "wait", step, [&] {
      if (!last) sent[w].wait();  // work[w] went out two steps ago
      if (s > 0) comm::irecv(incoming, rows * cols, ring.at(1), 9, ring.comm, recv);
      if (!o.overlap) recv.wait();
    });
    t.timed(&Timers::gemm, "gemm", step, [&] {
      const Polling polling(x.C.mesh(), o.overlap, {&recv, &sent[1 - w]});
      block_product(x, cd, cmap, b, 0, cb, o0, ow, pack, last ? x.beta : T(0), out, ldo);
    });
    t.timed(&Timers::comm, "wait", step, [&] { recv.wait(); });
    if (s > 0) add_block(incoming, rows, rows, cols, out, ldo);  // the running sum from r+1
    if (!last) comm::isend(work[w], rows * cols, ring.at(-1), 9, ring.comm, sent[w]);
  }
}

}  // namespace

// ReduceScatter form: C is split along X by rows or by columns (dim cd, any map). p = 2 swaps
// the sums in chunks of the split dimension (reduce_scatter_swap). p > 2 runs the ring in
// passes over C's unsplit dimension, `w` columns (rows) at a time (Options::ring_chunk, else
// rs_pass_width from global extents: whole tiles when their buffers fit), so its buffers hold
// two outgoing sums, one incoming and a packed slice of a pass, with the words of whole tiles.
template <Scalar T>
void reduce_scatter_ring(const Ring& ring, const Operands<T>& x, const Options& o, Timers& t) {
  const comm::WireScope sums(Wire::F32);  // partial sums of C travel as stored
  const int cd = splitting(x.C.layout(), 0).empty() ? 1 : 0;
  const DimMap& cmap = x.C.layout().map(cd);
  const index_t other = cd == 0 ? x.C.cols() : x.C.rows();
  const index_t kl = x.opA == Op::N ? x.A.local_cols() : x.A.local_rows();
  if (ring.p == 2) {  // chunked (Options::ring_chunk wide, else rs_chunk_width from global extents)
    const double k_widest = double(widest(x.A.layout().map(x.opA == Op::N ? 1 : 0)));
    const index_t w = o.ring_chunk > 0
                          ? o.ring_chunk
                          : blocking::rs_chunk_width(double(other), k_widest, abc_share(x, 2));
    return reduce_scatter_swap(ring, x, cd, w, o, t);
  }
  const index_t k = x.opA == Op::N ? x.A.cols() : x.A.rows();
  const index_t w = rs_pass(x.C.layout(), cd, k, ring.p, o.ring_chunk);
  T* work[2] = {};
  T *incoming = nullptr, *pack = nullptr;
  prologue(x.C.mesh().comm(), [&] {
    const memory::Slot slots[2] = {memory::Slot::Panel0, memory::Slot::Panel1};
    const index_t tile = widest(cmap) * w;
    for (int i = 0; i < std::min(ring.p - 1, 2); ++i) work[i] = memory::get<T>(slots[i], tile);
    if (ring.p > 1) incoming = memory::get<T>(memory::Slot::Panel2, tile);
    if (scattered(cmap)) pack = memory::get<T>(memory::Slot::Partial, widest(cmap) * kl);
  });
  comm::Requests sent[2];
  for (index_t o0 = 0, pass = 0; o0 < other; o0 += w, ++pass)
    reduce_scatter_pass(ring, x, cd, o0, std::min(w, other - o0), pass, work, incoming, pack, sent,
                        o, t);
  sent[0].wait();
  sent[1].wait();
}

#define SHARDMM_INSTANTIATE(T) \
  template void reduce_scatter_ring<T>(const Ring&, const Operands<T>&, const Options&, Timers&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo::ring_detail
