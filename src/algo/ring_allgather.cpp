// The ring's AllGather forms at p > 2 (circulate), over mesh axis X of size p.
// AllGatherA: op(A)'s row tiles travel left around the ring (to r-1 on axis_comm(X)); at step
//   s rank r holds block (r+s) mod p and computes C_loc[rows of that block, :] while the next
//   block is in flight. Words received per rank: all of A except its own block.
// AllGatherB: the same with op(B)'s column tiles; C_loc[:, cols of block (r+s) mod p].
// Every shift is MPI_Isend/Irecv on axis_comm(X), double-buffered, overlapped with one GEMM.
// A block owning several runs of C's rows (AG-A) or columns (AG-B) is multiplied into
//   scratch, then added into those runs; the own tile is sent and multiplied from the
//   caller's storage when its k-range is contiguous there, else packed.
// Passes: where two arriving whole tiles would not fit in half the rank's share of A + B + C,
//   the ring runs once per k-range of the tiles (ag_pass: Options::ring_chunk, else
//   blocking::ag_pass_width), each pass adding its k-range's product into C. The same words;
//   p - 1 messages a pass; buffers of two tiles of a pass.
// Bidirectional (Options::bidirectional): each pass's k-range is split in two; the first half
//   travels left and the second right, so both directions of every link carry half the
//   volume (same words per rank, half the per-link time on full-duplex links).
#include <vector>

#include "algo/ring.hpp"
#include "comm/collectives.hpp"
#include "core/instantiate.hpp"
#include "memory/workspace.hpp"

namespace shardmm::algo::ring_detail {
namespace {

// A k-range of the circulating tiles travelling one way round the ring (dir -1: to r-1).
struct Stream {
  index_t k0, kw;
  int dir;
};

// The streams of the pass over k-range [k0, k0 + kw): one left, or two (bidirectional).
std::vector<Stream> pass_streams(index_t k0, index_t kw, bool two) {
  if (!two) return {{k0, kw, -1}};
  return {{k0, kw / 2, -1}, {k0 + kw / 2, kw - kw / 2, +1}};
}

// The buffers of a pass: per stream (at most two) two arriving tiles, the second also holding
// the packed own tile at step 0; scratch for a scattered block's product.
template <Scalar T>
struct TileBuffers {
  T* buf[2][2] = {};
  T* scratch = nullptr;
};

// One pass: at step s a stream moving in direction d holds the tile of ring position r - d*s
// and multiplies it into C (multiply_block) while the next tile arrives into buf[s % 2] (the
// buffer multiplied and forwarded at step s - 1, whose send has completed). The own tile
// (step 0) is X's storage when `in_place`, else packed into buf[1].
template <Scalar T>
void circulate_pass(const Ring& ring, const DistMatrix<T>& X, bool k_is_col, const DimMap& map,
                    const std::vector<Stream>& streams, bool in_place, index_t pass,
                    const TileBuffers<T>& b, const TileGemm<T>& g, const Options& o, Timers& t) {
  const T* own[2] = {};
  for (std::size_t h = 0; h < streams.size(); ++h) {
    if (in_place) {
      own[h] = k_is_col ? X.data() + streams[h].k0 * X.ld() : X.data() + streams[h].k0;
      continue;
    }
    pack_k(X, k_is_col, streams[h].k0, streams[h].kw, b.buf[h][1]);
    own[h] = b.buf[h][1];
  }
  for (int s = 0; s < ring.p; ++s) {
    comm::Requests reqs;
    const index_t step = pass * ring.p + s;
    auto tile = [&](std::size_t h) { return s == 0 ? own[h] : b.buf[h][(s - 1) % 2]; };
    for (std::size_t h = 0; s + 1 < ring.p && h < streams.size(); ++h) {
      const Stream& st = streams[h];
      const int tag = 7 + static_cast<int>(h);
      comm::irecv(b.buf[h][s % 2], map.local_extent(ring.at(-st.dir * (s + 1))) * st.kw,
                  ring.at(-st.dir), tag, ring.comm, reqs);
      comm::isend(tile(h), map.local_extent(ring.at(-st.dir * s)) * st.kw, ring.at(st.dir), tag,
                  ring.comm, reqs);
    }
    if (!o.overlap) reqs.wait();
    t.timed(&Timers::gemm, "gemm", step, [&] {
      const Polling polling(X.mesh(), o.overlap, {&reqs});  // the shift moves meanwhile
      for (std::size_t h = 0; h < streams.size(); ++h) {
        const int blk = ring.at(-streams[h].dir * s);
        multiply_block(g, tile(h), packed_ld(k_is_col, map.local_extent(blk), streams[h].kw), map,
                       blk, streams[h].k0, streams[h].kw, b.scratch);
      }
    });
    t.timed(&Timers::comm, "wait", step, [&] { reqs.wait(); });
  }
}

}  // namespace

// X's tiles travel round the ring in passes over k (ag_pass wide), each split into one stream
// (left) or two (bidirectional). A pass's own tile is sent and multiplied from X's storage
// when its k-range is contiguous there (one stream, X's tile stored densely, k along its
// columns or the whole of k), else packed. (p = 2 swaps in k-chunks instead: swap_tiles,
// ring_swap.cpp.)
template <Scalar T>
void circulate(const Ring& ring, const DistMatrix<T>& X, bool k_is_col, const DimMap& map,
               index_t k, const TileGemm<T>& g, const Options& o, Timers& t) {
  const index_t u = ag_pass(map, g.x.C.rows(), g.x.C.cols(), k, ring.p, o.ring_chunk);
  const bool two = o.bidirectional && ring.p > 2;
  const bool dense = X.ld() == X.local_rows() || X.local_cols() <= 1;
  const bool in_place = !two && dense && (k_is_col || u >= k || X.local_cols() <= 1);
  const std::vector<Stream> widest_pass = pass_streams(0, u, two);
  TileBuffers<T> b;
  prologue(X.mesh().comm(), [&] {
    const memory::Slot slots[2][2] = {{memory::Slot::Panel0, memory::Slot::Panel1},
                                      {memory::Slot::Panel2, memory::Slot::Panel3}};
    for (std::size_t h = 0; h < widest_pass.size(); ++h) {
      const index_t max_tile = widest(map) * widest_pass[h].kw;
      b.buf[h][0] = memory::get<T>(slots[h][0], max_tile);
      if (ring.p > 2 || !in_place) b.buf[h][1] = memory::get<T>(slots[h][1], max_tile);
    }
    if (scattered(map)) b.scratch = memory::get<T>(memory::Slot::Partial, widest(map) * g.other());
  });
  for (index_t k0 = 0, pass = 0; k0 < k || pass == 0; k0 += u, ++pass)
    circulate_pass(ring, X, k_is_col, map, pass_streams(k0, std::min(u, k - k0), two), in_place,
                   pass, b, g, o, t);
}

#define SHARDMM_INSTANTIATE(T)                                                                \
  template void circulate<T>(const Ring&, const DistMatrix<T>&, bool, const DimMap&, index_t, \
                             const TileGemm<T>&, const Options&, Timers&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo::ring_detail
