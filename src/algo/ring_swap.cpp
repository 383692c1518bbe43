// The ring's AllGather forms at p = 2: the two ranks of axis_comm(X) swap their tiles of
// op(X) (A's rows for AG-A, B's columns for AG-B) in k-chunks (swap_in_chunks) instead of
// whole tiles, for memory: chunk j is multiplied while chunk j+1 travels (MPI_Isend/Irecv,
// two buffers each way), so a rank never holds the other rank's whole tile.
// The other operand Y split along k over X as the caller holds it (RingSetup::stream,
//   op(B) [K_X, J] for AG-A) is not re-split first: its rows for each rank's C columns
//   (columns for C rows, AG-B) travel with the chunks (SplitStream), one chunk ahead of the
//   GEMMs that read them, on the same communicator.
// Chunk width: Options::ring_chunk, else ring_chunk_width (core/blocking.hpp) from global extents,
//   so both ranks cut the same chunks.
#include <algorithm>
#include <array>
#include <optional>

#include "algo/ring.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "core/blocking.hpp"
#include "core/instantiate.hpp"
#include "memory/workspace.hpp"

namespace shardmm::algo::ring_detail {
namespace {

// Block b's k-chunk `src` (ld ldsrc, X's stored orientation) into its places in the chunk of
// the whole of op(X) `full` (ld ldf): rows of every column (k along columns) or whole columns.
template <Scalar T>
void place_runs(const T* src, index_t ldsrc, bool k_is_col, const Runs& runs, index_t kw, T* full,
                index_t ldf) {
  if (k_is_col) place_row_runs(src, ldsrc, runs, kw, full, ldf);
  else place_col_runs(src, ldsrc, runs, kw, full, ldf);
}

// p = 2, an AllGather form whose other operand Y (B for AG-A, A for AG-B) is split along k
// over X (RingSetup::stream). Per k-chunk [k0, k0 + kw) a rank needs Y's k indices of the
// chunk, its own and the peer's, restricted to its own C columns (AG-A) or rows (AG-B): its
// own are copied from its storage, the peer's arrive packed (the peer's k of the chunk x this
// rank's C runs). Both land in `chunk` in Y's stored orientation, k in global order, one
// chunk ahead of the GEMMs that read it. Buffers: the chunk, one incoming piece, two outgoing.
template <Scalar T>
class SplitStream {
 public:
  SplitStream(const Ring& ring, const DistMatrix<T>& Y, bool k_rows, const DimMap& kmap,
              const DimMap& cmap, index_t k, index_t w)
      : ring_(ring), Y_(Y), k_rows_(k_rows), kmap_(kmap), cmap_(cmap), k_(k), w_(w) {}

  // Buffers, sized for the largest chunk (inside the prologue).
  void take() {
    index_t own = 0, theirs = 0;
    for (index_t j = 0; j * w_ < k_; ++j) {
      own = std::max(own, count(k_in(ring_.r, j)));
      theirs = std::max(theirs, count(k_in(peer(), j)));
    }
    const index_t mine = cmap_.local_extent(ring_.r), yours = cmap_.local_extent(peer());
    chunk_ = memory::get<T>(memory::Slot::Stream, std::min(w_, k_) * mine);
    in_ = memory::get<T>(memory::Slot::StreamIn, theirs * mine);
    out_[0] = memory::get<T>(memory::Slot::StreamOut0, own * yours);
    out_[1] = memory::get<T>(memory::Slot::StreamOut1, own * yours);
  }

  // Chunk j's pieces start moving: the peer's rows of Y packed and sent, this rank's posted.
  void start(index_t j) {
    const Runs own = local(k_in(ring_.r, j));
    const Runs theirs = cmap_.owned_ranges(peer());  // Y's other dim is whole: global = local
    const index_t n_own = count(own), yours = cmap_.local_extent(peer());
    sent_[j % 2].wait();  // out_[j % 2] left two chunks ago
    if (k_rows_)
      pack_runs(Y_.data(), Y_.ld(), own, theirs, out_[j % 2], std::max<index_t>(n_own, 1));
    else pack_runs(Y_.data(), Y_.ld(), theirs, own, out_[j % 2], std::max<index_t>(yours, 1));
    comm::isend(out_[j % 2], n_own * yours, peer(), kTag, ring_.comm, sent_[j % 2]);
    comm::irecv(in_, count(k_in(peer(), j)) * cmap_.local_extent(ring_.r), peer(), kTag, ring_.comm,
                recv_);
  }

  // Chunk j of Y complete in `chunk` (own rows copied, then the peer's placed once they
  // arrive), and g pointed at it.
  void assemble(TileGemm<T>& g, index_t j) {
    const index_t k0 = j * w_, kw = std::min(w_, k_ - k0), mine = cmap_.local_extent(ring_.r);
    const index_t ld = std::max<index_t>(k_rows_ ? kw : mine, 1);
    const Runs c_runs = cmap_.owned_ranges(ring_.r);
    for (auto [b, e] : k_in(ring_.r, j)) {  // own k rows, straight into their places
      const Runs k_run = {{kmap_.to_local(b), kmap_.to_local(b) + e - b}};
      if (k_rows_) pack_runs(Y_.data(), Y_.ld(), k_run, c_runs, chunk_ + (b - k0), ld);
      else pack_runs(Y_.data(), Y_.ld(), c_runs, k_run, chunk_ + (b - k0) * ld, ld);
    }
    recv_.wait();
    Runs theirs = k_in(peer(), j);
    for (auto& [b, e] : theirs) b -= k0, e -= k0;
    const index_t ldin = std::max<index_t>(k_rows_ ? count(theirs) : mine, 1);
    place_runs(in_, ldin, k_rows_, theirs, mine, chunk_, ld);
    g.y = chunk_, g.ldy = ld, g.y_k0 = k0;
  }

  void finish() {
    sent_[0].wait();
    sent_[1].wait();
  }
  bool test() { return comm::test_each(std::array{&sent_[0], &sent_[1], &recv_}); }

 private:
  static constexpr int kTag = 11;
  [[nodiscard]] int peer() const { return ring_.at(1); }
  // Rank q's k indices (global runs) in chunk j.
  [[nodiscard]] Runs k_in(int q, index_t j) const {
    const index_t k0 = j * w_, k1 = std::min(k_, k0 + w_);
    Runs out;
    for (auto [b, e] : kmap_.owned_ranges(q))
      if (std::max(b, k0) < std::min(e, k1)) out.emplace_back(std::max(b, k0), std::min(e, k1));
    return out;
  }
  [[nodiscard]] Runs local(Runs runs) const {
    for (auto& [b, e] : runs) e = kmap_.to_local(b) + e - b, b = kmap_.to_local(b);
    return runs;
  }

  const Ring& ring_;
  const DistMatrix<T>& Y_;
  bool k_rows_;
  const DimMap &kmap_, &cmap_;
  index_t k_, w_;
  T *chunk_ = nullptr, *in_ = nullptr, *out_[2] = {};
  comm::Requests sent_[2], recv_;
};

// p = 2: the two ranks swap their tiles of op(X) in k-chunks of width w; chunk j is
// multiplied while chunk j+1 travels, so a rank holds two chunk buffers, not the other
// rank's tile. Own chunks contiguous in X (k along its columns) all leave from the caller's
// storage up front; rows of X are packed one chunk ahead into two more buffers. With a
// cyclic split both blocks' chunks are first placed into one chunk of the whole op(X)
// (`full`), so one GEMM per chunk covers all of C's rows (AG-A) or columns (AG-B): no
// product scratch. Direct (a cyclic split with k along X's rows, blocks of at least
// kDirectBytes per chunk): the chunks of the whole op(X) are double-buffered, each block's
// rows land there as whole columns, one message per block: the own ones packed from X once
// and sent from there, the peer's received into their places. One copy of the own chunk
// instead of three (pack, place) and none of the peer's besides MPI's.
template <Scalar T>
class ChunkSwap {
 public:
  ChunkSwap(const Ring& ring, const DistMatrix<T>& X, bool k_is_col, const DimMap& map, index_t k,
            index_t w)
      : ring_(ring),
        X_(X),
        k_is_col_(k_is_col),
        map_(map),
        k_(k),
        w_(w),
        mine_(map.local_extent(ring.r)),
        theirs_(map.local_extent(ring.at(1))),
        chunks_(k == 0 ? 0 : (k + w - 1) / w),
        wmax_(std::min(w, k)),
        own_runs_(map.owned_ranges(ring.r)),
        peer_runs_(map.owned_ranges(ring.at(1))) {
    const bool dense = X.ld() == X.local_rows() || X.local_cols() <= 1;
    direct_ = !k_is_col && scattered(map) && chunks_ > 0 &&
              map.nb * wmax_ * index_t(sizeof(T)) >= kDirectBytes &&
              std::max(own_runs_.size(), peer_runs_.size()) <= kDirectRuns;
    in_place_ = !direct_ && (k_is_col ? dense : dense && chunks_ <= 1);
  }
  [[nodiscard]] index_t chunks() const { return chunks_; }

  // Buffers (inside the prologue): two incoming chunks, two packed outgoing ones unless sent
  // in place, and the whole op(X)'s chunk for a scattered split.
  void take() {
    const memory::Slot in[2] = {memory::Slot::Panel0, memory::Slot::Panel1},
                       out[2] = {memory::Slot::Panel2, memory::Slot::Panel3};
    if (direct_) {  // two chunks of the whole op(X)
      for (index_t j = 0; j < std::min<index_t>(chunks_, 2); ++j)
        buf_[j] = memory::get<T>(in[j], map_.extent * wmax_);
      return;
    }
    for (index_t j = 0; j < std::min<index_t>(chunks_, 2); ++j) {
      buf_[j] = memory::get<T>(in[j], theirs_ * wmax_);
      if (!in_place_) pack_[j] = memory::get<T>(out[j], mine_ * wmax_);
    }
    if (scattered(map_) && chunks_ > 0)
      full_ = memory::get<T>(memory::Slot::Partial, map_.extent * wmax_);
  }
  // The first sends: every chunk when they leave in place, else chunk 0.
  void start() {
    for (index_t j = 0; j < (in_place_ ? chunks_ : std::min<index_t>(chunks_, 1)); ++j) send(j);
  }
  // Chunk j+1 leaves now unless it already has (in place).
  void send_next(index_t j) {
    if (j + 1 < chunks_ && !in_place_) send(j + 1);
  }
  void post(index_t j) {
    if (direct_) {  // the peer's blocks, each into its columns of the whole chunk (ld width(j))
      for (auto [b, e] : peer_runs_)
        comm::irecv(buf_[j % 2] + b * width(j), (e - b) * width(j), peer(), kTag, ring_.comm,
                    recv_[j % 2]);
      return;
    }
    comm::irecv(buf_[j % 2], theirs_ * width(j), peer(), kTag, ring_.comm, recv_[j % 2]);
  }
  void wait(index_t j) { recv_[j % 2].wait(); }
  // The own chunk j: multiplied into C (C's own rows or columns, `beta` times themselves
  // plus the product), or placed into `full` for a scattered split. A block is one run here
  // (not scattered), so no product scratch.
  void multiply_own(const TileGemm<T>& g, index_t j, T beta) {
    if (direct_) return;  // packed into its places when it left (send)
    const auto [p, ld] = own(j);
    if (full_) place_runs(p, ld, k_is_col_, own_runs_, width(j), full_, ldf());
    else multiply_block(g, p, ld, map_, ring_.r, j * w_, width(j), static_cast<T*>(nullptr), beta);
  }
  // The peer's chunk j (arrived): multiplied, or placed and then the whole chunk multiplied.
  void multiply_peer(const TileGemm<T>& g, index_t j, T beta) {
    if (direct_)
      return g(buf_[j % 2], std::max<index_t>(width(j), 1), map_.extent, j * w_, width(j), g.at(0),
               g.x.C.ld(), beta);
    const index_t ldp = packed_ld(k_is_col_, theirs_, width(j));
    if (!full_)
      return multiply_block(g, buf_[j % 2], ldp, map_, peer(), j * w_, width(j),
                            static_cast<T*>(nullptr), beta);
    place_runs(buf_[j % 2], ldp, k_is_col_, peer_runs_, width(j), full_, ldf());
    g(full_, ldf(), map_.extent, j * w_, width(j), g.at(0), g.x.C.ld(), beta);
  }
  void finish() {
    sent_[0].wait();
    sent_[1].wait();
  }
  bool test() { return comm::test_each(std::array{&sent_[0], &sent_[1], &recv_[0], &recv_[1]}); }

 private:
  static constexpr int kTag = 7;
  // Direct mode's floor: blocks of at least 64 KiB per chunk, at most 64 of them per rank.
  static constexpr index_t kDirectBytes = index_t(64) << 10;
  static constexpr std::size_t kDirectRuns = 64;
  [[nodiscard]] int peer() const { return ring_.at(1); }
  [[nodiscard]] index_t width(index_t j) const { return std::min(w_, k_ - j * w_); }
  [[nodiscard]] index_t ldf() const { return packed_ld(k_is_col_, map_.extent, wmax_); }
  // Own chunk j, X's columns or rows [j w, j w + width(j)): in X itself, or packed.
  [[nodiscard]] std::pair<const T*, index_t> own(index_t j) const {
    if (!in_place_) return {pack_[j % 2], packed_ld(k_is_col_, mine_, width(j))};
    return {k_is_col_ ? X_.data() + j * w_ * X_.ld() : X_.data() + j * w_,
            std::max<index_t>(X_.ld(), 1)};
  }
  void send(index_t j) {
    if (direct_) {  // own rows of chunk j into their columns of the whole chunk, sent from there
      const index_t kw = width(j);
      sent_[j % 2].wait();  // chunk j-2 has left this buffer
      place_col_runs(X_.data() + j * w_, X_.ld(), own_runs_, kw, buf_[j % 2], kw);
      for (auto [b, e] : own_runs_)
        comm::isend(buf_[j % 2] + b * kw, (e - b) * kw, peer(), kTag, ring_.comm, sent_[j % 2]);
      return;
    }
    if (!in_place_) {
      sent_[j % 2].wait();  // chunk j-2 has left this buffer
      pack_k(X_, k_is_col_, j * w_, width(j), pack_[j % 2]);
    }
    comm::isend(own(j).first, mine_ * width(j), peer(), kTag, ring_.comm, sent_[j % 2]);
  }

  const Ring& ring_;
  const DistMatrix<T>& X_;
  bool k_is_col_;
  const DimMap& map_;
  index_t k_, w_, mine_, theirs_, chunks_, wmax_;
  Runs own_runs_, peer_runs_;  // global indices of op(X)'s split dimension
  bool in_place_ = false, direct_ = false;
  T *buf_[2] = {}, *pack_[2] = {}, *full_ = nullptr;
  comm::Requests sent_[2], recv_[2];
};

// The p = 2 swap's schedule: chunk j+1 leaves and is posted while chunk j is multiplied, the
// own chunk first (while the peer's arrives). A streamed other operand (`ys`) moves
// alongside, one chunk ahead, its chunk j complete before chunk j's GEMMs. Without overlap
// every receive is posted just before it is waited for.
template <Scalar T>
void swap_in_chunks(ChunkSwap<T>& xs, const TileGemm<T>& g, SplitStream<T>* ys, const Options& o,
                    Timers& t) {
  const index_t n = xs.chunks();
  if (n == 0)
    blas::scale(g.x.C.local_rows(), g.x.C.local_cols(), g.x.beta, g.x.C.data(), g.x.C.ld());
  prologue(g.x.C.mesh().comm(), [&] {
    xs.take();
    if (ys) ys->take();
  });
  xs.start();
  if (n > 0 && o.overlap) {
    xs.post(0);
    if (ys) ys->start(0);
  }
  for (index_t j = 0; j < n; ++j) {
    xs.send_next(j);
    if (o.overlap && j + 1 < n) xs.post(j + 1);  // into the buffer chunk j-1 was multiplied from
    if (!o.overlap) xs.post(j);
    TileGemm<T> gj = g;
    if (ys)
      t.timed(&Timers::comm, "wait", j, [&] {
        if (!o.overlap) ys->start(j);
        ys->assemble(gj, j);
        if (o.overlap && j + 1 < n) ys->start(j + 1);
      });
    const T beta = j == 0 ? g.x.beta : T(1);  // C's beta goes into chunk 0's GEMMs
    const blas::Progress progress(
        [&] {  // the chunks in flight move during the GEMMs
          const bool ys_done = ys == nullptr || ys->test();
          return xs.test() && ys_done;
        },
        polls(g.x.C.mesh(), o.overlap));
    t.timed(&Timers::gemm, "gemm", j, [&] { xs.multiply_own(gj, j, beta); });
    t.timed(&Timers::comm, "wait", j, [&] { xs.wait(j); });
    t.timed(&Timers::gemm, "gemm", j, [&] { xs.multiply_peer(gj, j, beta); });
  }
  t.timed(&Timers::comm, "wait", n, [&] {
    xs.finish();
    if (ys) ys->finish();
  });
}

}  // namespace

template <Scalar T>
void swap_tiles(const Ring& ring, const DistMatrix<T>& X, bool k_is_col, const DimMap& map,
                index_t k, const TileGemm<T>& g, bool stream, const Options& o, Timers& t) {
  // The other operand Y is streamed when it is split along k (RingSetup::stream): its k
  // split and C's split of its other dimension say which rows go where.
  const Operands<T>& x = g.x;
  const DistMatrix<T>& Y = g.y_matrix();
  const bool y_k_rows = g.y_k_rows();
  const DimMap& cmap = x.C.layout().map(g.ag_a ? 1 : 0);
  const double y_per_k = stream ? 2.5 * double(widest(cmap)) : 0.0;
  const index_t chunk =
      o.ring_chunk > 0 ? o.ring_chunk
                       : blocking::ring_chunk_width(double(widest(map)), abc_share(x, 2), y_per_k);
  std::optional<SplitStream<T>> ys;
  if (stream) ys.emplace(ring, Y, y_k_rows, Y.layout().map(y_k_rows ? 0 : 1), cmap, k, chunk);
  ChunkSwap<T> xs(ring, X, k_is_col, map, k, chunk);
  swap_in_chunks(xs, g, ys ? &*ys : nullptr, o, t);
}

#define SHARDMM_INSTANTIATE(T)                                                                 \
  template void swap_tiles<T>(const Ring&, const DistMatrix<T>&, bool, const DimMap&, index_t, \
                              const TileGemm<T>&, bool, const Options&, Timers&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo::ring_detail
