// The ring's AllGather forms at p > 2 (circulate), over mesh axis X of size p.
// AllGatherA: op(A)'s row tiles travel left around the ring (to r-1 on axis_comm(X)); at step
//   s rank r holds block (r+s) mod p and computes C_loc[rows of that block, :] while the next
//   block is in flight. Words received per rank: all of A except its own block.
// AllGatherB: the same with op(B)'s column tiles; C_loc[:, cols of block (r+s) mod p].
// Every shift is MPI_Isend/Irecv on axis_comm(X), double-buffered, overlapped with one GEMM.
// A block owning several runs of C's rows (AG-A) or columns (AG-B) is multiplied into
//   scratch, then added into those runs; the own tile is sent and multiplied from the
//   caller's storage.
// Bidirectional (Options::bidirectional): the tiles are split along k; the first half
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

}  // namespace

// X's tiles travel round the ring, split along k into one stream (left) or two
// (bidirectional: first half left, second half right). At step s a stream moving in
// direction d holds the tile of ring position r - d*s and multiplies it into C
// (multiply_block; scratch for a scattered block's product). One stream over a contiguous
// local tile is sent from the caller's storage and multiplied in place. (p = 2 swaps in
// k-chunks instead: swap_tiles, ring_swap.cpp.)
template <Scalar T>
void circulate(const Ring& ring, const DistMatrix<T>& X, bool k_is_col, const DimMap& map,
               index_t k, const TileGemm<T>& g, const Options& o, Timers& t) {
  std::vector<Stream> streams = {{0, k, -1}};
  if (o.bidirectional && ring.p > 2) streams = {{0, k / 2, -1}, {k / 2, k - k / 2, +1}};
  const bool in_place = streams.size() == 1 && (X.ld() == X.local_rows() || X.local_cols() <= 1);
  const memory::Slot slots[2][2] = {{memory::Slot::Panel0, memory::Slot::Panel1},
                                    {memory::Slot::Panel2, memory::Slot::Panel3}};
  T* buf[2][2] = {};
  T* scratch = nullptr;
  const T* own[2] = {X.data(), X.data()};
  prologue(X.mesh().comm(), [&] {
    for (std::size_t h = 0; h < streams.size() && h < 2; ++h) {  // one or two streams
      const index_t max_tile = widest(map) * streams[h].kw;
      buf[h][0] = memory::get<T>(slots[h][0], max_tile);
      if (ring.p > 2 || !in_place) buf[h][1] = memory::get<T>(slots[h][1], max_tile);
    }
    if (scattered(map)) scratch = memory::get<T>(memory::Slot::Partial, widest(map) * g.other());
  });
  for (std::size_t h = 0; h < streams.size() && h < 2 && !in_place; ++h) {
    pack_k(X, k_is_col, streams[h].k0, streams[h].kw, buf[h][1]);
    own[h] = buf[h][1];
  }
  // Step s multiplies the tile that arrived at step s-1 (own at s = 0) and receives into
  // buf[s % 2]: the buffer multiplied and forwarded at step s-1, whose send has completed.
  for (int s = 0; s < ring.p; ++s) {
    comm::Requests reqs;
    auto tile = [&](std::size_t h) { return s == 0 ? own[h] : buf[h][(s - 1) % 2]; };
    for (std::size_t h = 0; s + 1 < ring.p && h < streams.size(); ++h) {
      const Stream& st = streams[h];
      const int tag = 7 + static_cast<int>(h);
      comm::irecv(buf[h][s % 2], map.local_extent(ring.at(-st.dir * (s + 1))) * st.kw,
                  ring.at(-st.dir), tag, ring.comm, reqs);
      comm::isend(tile(h), map.local_extent(ring.at(-st.dir * s)) * st.kw, ring.at(st.dir), tag,
                  ring.comm, reqs);
    }
    if (!o.overlap) reqs.wait();
    t.timed(&Timers::gemm, "gemm", s, [&] {
      const Polling polling(X.mesh(), o.overlap, {&reqs});  // the shift moves meanwhile
      for (std::size_t h = 0; h < streams.size(); ++h) {
        const int b = ring.at(-streams[h].dir * s);
        multiply_block(g, tile(h), packed_ld(k_is_col, map.local_extent(b), streams[h].kw), map, b,
                       streams[h].k0, streams[h].kw, scratch);
      }
    });
    t.timed(&Timers::comm, "wait", s, [&] { reqs.wait(); });
  }
}

#define SHARDMM_INSTANTIATE(T)                                                                \
  template void circulate<T>(const Ring&, const DistMatrix<T>&, bool, const DimMap&, index_t, \
                             const TileGemm<T>&, const Options&, Timers&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo::ring_detail
