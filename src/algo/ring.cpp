// 1D ring ("collective matmul", Wang et al. ASPLOS'23) over one mesh axis X of size p.
// Other mesh axes replicate: every slice along them runs the same ring.
//
// AllGatherA    op(A) = [I_X, K], op(B) = [K, J_X] -> C = [I, J_X]
//   A's row blocks travel left around the ring; at step s rank r holds block (r+s) mod p and
//   computes C_loc[rows of that block, :] while the next block is in flight.
//   Words received per rank: all of A except its own block.
// AllGatherB    op(A) = [I_X, K], op(B) = [K, J_X] -> C = [I_X, J]
//   The same with B's column blocks; C_loc[:, cols of block (r+s) mod p].
// ReduceScatter op(A) = [I, K_X], op(B) = [K_X, J] -> C = [I_X, J] (or [I, J_X])
//   Partial sums travel: at step s rank r computes alpha * A[rows of block (r+1+s), k_r] *
//   B[k_r, :], adds the accumulator received from r+1 and passes it to r-1; after p steps
//   rank r holds block r complete. Words received per rank: (p-1) blocks of C rows. With C
//   split by columns the same runs on op(B)'s column blocks.
// The split along X may be block, cyclic or block-cyclic: ring_setup keeps the caller's own
//   split (a ScaLAPACK 1 x P or P x 1 layout runs without redistribution). A block owning
//   several runs of C's rows (AG-A) or columns (AG-B) is multiplied into scratch, then added
//   into those runs; the own tile is sent and multiplied from the caller's storage.
// Every shift is MPI_Isend/Irecv on axis_comm(X), double-buffered, overlapped with one GEMM.
// p = 2 swaps in chunks instead of whole tiles, for memory: the AllGather forms' tiles in
//   k-chunks (swap_in_chunks), the ReduceScatter form's sums in chunks of C's split dimension
//   (reduce_scatter_swap). An AllGather form there also takes the other operand split along
//   k as the caller holds it (op(B) [K_X, J] for AG-A): its rows for each rank's C columns
//   travel with the chunks (SplitStream) instead of it being re-split first.
// Bidirectional (Options::bidirectional, AllGather forms): the tiles are split along k; the
// first half travels left and the second right, so both directions of every link carry half
// the volume (same words per rank, half the per-link time on full-duplex links).
#include <algorithm>
#include <optional>

#include "algo/algo.hpp"
#include "algo/panel_width.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"

namespace shardmm::algo {
namespace {

DimSpec over(const std::string& label, const std::string& axis) {
  return DimSpec{label, DimSpec::Kind::Block, {axis}, 0, 0};
}
DimSpec whole(const std::string& label) { return DimSpec{label, DimSpec::Kind::Replicated, {}, 0, 0}; }

// Mesh axes of L's dim d that split it (axes of size 1 dropped).
std::vector<int> splitting(const Layout& L, int d) { return L.mesh().long_axes(L.dim_axes(d)); }

// The caller's own spec for op(X)'s dim `op_dim` when it is split over axis X alone (any block
// size: block, cyclic, block-cyclic) and op(X)'s other dim is whole; else nothing.
std::optional<DimSpec> caller_split(const Layout& L, Op op, int op_dim, int axis, const std::string& label) {
  const int d = stored_dim(op, op_dim);
  if (L.is_unreduced() || splitting(L, d) != std::vector<int>{axis} || !splitting(L, 1 - d).empty())
    return std::nullopt;
  DimSpec s = L.spec().dims[d];
  s.label = label;
  s.axes = {L.mesh().names[axis]};  // size-1 axes dropped: same map, same coordinate
  return s;
}

// The axis to run along: Options::ring_axis, else the only mesh axis longer than 1 (a 1 x P
// grid is a line), else the first axis of a 1D mesh or of a one-rank mesh.
std::string ring_axis(const MeshShape& mesh, const std::string& asked) {
  if (!asked.empty()) return mesh.names[mesh.axis_index(asked)];
  const std::vector<int> long_axes = mesh.long_axes();
  if (long_axes.size() == 1) return mesh.names[long_axes[0]];
  if (mesh.ndims() != 1 && !long_axes.empty())
    throw NotSupported("ring on mesh " + mesh.to_string() +
                       " needs an axis: set Options::ring_axis (--ring-axis) to one of its axes");
  return mesh.names[0];
}

// At p = 2 an AllGather form takes the non-circulating operand Y as the caller holds it when
// op(Y)'s k (logical dim `kd`) is split over X: its rows (AG-A) or columns (AG-B) travel with
// the circulating chunks (SplitStream in ring.cpp) instead of Y being re-split first.
std::optional<DimSpec> streamed(const Problem& p, const Layout& Y, Op op, int kd, int axis) {
  if (p.mesh.sizes[axis] != 2) return std::nullopt;
  return caller_split(Y, op, kd, axis, "K");
}

RingForm pick_form(const Problem& p, RingForm asked) {
  if (asked != RingForm::Auto) return asked;
  const double a = double(p.m) * double(p.k), b = double(p.k) * double(p.n),
               c = double(p.m) * double(p.n);
  if (c < a && c < b) return RingForm::ReduceScatter;
  return a <= b ? RingForm::AllGatherA : RingForm::AllGatherB;
}

}  // namespace

// Layouts: the caller's own split of each dimension along X is kept where the form allows it
// (so a ScaLAPACK 1 x P layout runs as it is), else a block split over X. Where two operands
// must share a split and hold different ones, the larger operand's is kept.
//   AG-A: op(A) rows any split, C's and op(B)'s columns one shared split;
//   AG-B: the mirror image; RS: op(A)'s and op(B)'s k one shared split, C's rows or columns.
Setup ring_setup(const Problem& p, const Options& o) {
  Setup setup;
  setup.algorithm = Algorithm::Ring;
  setup.ring_axis = ring_axis(p.mesh, o.ring_axis);
  const std::string& X = setup.ring_axis;
  const int x = p.mesh.axis_index(X);
  setup.ring_form = pick_form(p, o.ring_form);
  auto either = [&](const std::optional<DimSpec>& first, const std::optional<DimSpec>& second,
                    const std::string& label) {
    return first ? *first : second ? *second : over(label, X);
  };
  ShardingSpec a, b, c;
  if (setup.ring_form == RingForm::ReduceScatter) {
    auto ka = caller_split(p.A, p.opA, 1, x, "K"), kb = caller_split(p.B, p.opB, 0, x, "K");
    const DimSpec K = p.m >= p.n ? either(ka, kb, "K") : either(kb, ka, "K");
    a.dims = {whole("I"), K};
    b.dims = {K, whole("J")};
    const auto ci = caller_split(p.C, Op::N, 0, x, "I"), cj = caller_split(p.C, Op::N, 1, x, "J");
    c.dims = ci ? std::array<DimSpec, 2>{*ci, whole("J")}
           : cj ? std::array<DimSpec, 2>{whole("I"), *cj}
                : std::array<DimSpec, 2>{over("I", X), whole("J")};
    setup.detail = "matmul-reducescatter: partial C blocks circulate";
  } else if (setup.ring_form == RingForm::AllGatherA) {
    const DimSpec I = either(caller_split(p.A, p.opA, 0, x, "I"), std::nullopt, "I");
    auto jc = caller_split(p.C, Op::N, 1, x, "J"), jb = caller_split(p.B, p.opB, 1, x, "J");
    const DimSpec J = p.m >= p.k ? either(jc, jb, "J") : either(jb, jc, "J");
    a.dims = {I, whole("K")};
    b.dims = {whole("K"), J};
    c.dims = {whole("I"), J};
    setup.detail = "allgather-matmul: A row blocks circulate";
    if (auto kb = streamed(p, p.B, p.opB, 0, x); kb && !jb) {  // op(B) = [K_X, J] as it is
      b.dims = {*kb, whole("J")};
      setup.ring_stream = true;
      setup.detail += ", op(B)'s rows streamed with them";
    }
  } else {
    const DimSpec J = either(caller_split(p.B, p.opB, 1, x, "J"), std::nullopt, "J");
    auto ic = caller_split(p.C, Op::N, 0, x, "I"), ia = caller_split(p.A, p.opA, 0, x, "I");
    const DimSpec I = p.n >= p.k ? either(ic, ia, "I") : either(ia, ic, "I");
    a.dims = {I, whole("K")};
    b.dims = {whole("K"), J};
    c.dims = {I, whole("J")};
    setup.detail = "allgather-matmul: B column blocks circulate";
    if (auto ka = streamed(p, p.A, p.opA, 1, x); ka && !ia) {  // op(A) = [I, K_X] as it is
      a.dims = {whole("I"), *ka};
      setup.ring_stream = true;
      setup.detail += ", op(A)'s columns streamed with them";
    }
  }
  setup.A = stored_layout(p.opA, p.mesh, p.m, p.k, a);
  setup.B = stored_layout(p.opB, p.mesh, p.k, p.n, b);
  setup.C = Layout(p.mesh, p.m, p.n, c);
  setup.grid = "ring over " + X + " (" + std::to_string(p.mesh.sizes[x]) + ")";
  return setup;
}

namespace {

struct Ring {
  MPI_Comm comm;
  int p, r;
  [[nodiscard]] int at(int d) const { return ((r + d) % p + p) % p; }
};

// A k-range of the circulating tiles travelling one way round the ring (dir -1: to r-1).
struct Stream {
  index_t k0, kw;
  int dir;
};

// Packs rows or columns [k0, k0+kw) along X's k dimension into `out` (ld = extent packed).
template <Scalar T>
void pack_k(const DistMatrix<T>& X, bool k_is_col, index_t k0, index_t kw, T* out) {
  const index_t other = k_is_col ? X.local_rows() : X.local_cols();
  for (index_t j = 0; j < (k_is_col ? kw : other); ++j) {
    const T* col = k_is_col ? &X.local(0, k0 + j) : &X.local(k0, j);
    std::copy_n(col, k_is_col ? other : kw, out + j * (k_is_col ? other : kw));
  }
}

// The most any coordinate owns along `map`, and whether some coordinate owns more than one
// run of indices (a cyclic split: its rows or columns of C are not one contiguous range).
index_t widest(const DimMap& map) {
  index_t w = 0;
  for (int c = 0; c < map.nprocs; ++c) w = std::max(w, map.local_extent(c));
  return w;
}
bool scattered(const DimMap& map) { return (map.extent + map.nb - 1) / map.nb > map.nprocs; }

// C's rows (along_rows) or columns in `runs` += the consecutive rows or columns of tmp (ld
// = ld, `other` columns or rows): a cyclic block's product lands in its places in C.
template <Scalar T>
void add_runs(const T* tmp, index_t ld, const std::vector<std::pair<index_t, index_t>>& runs,
              bool along_rows, index_t other, DistMatrix<T>& C) {
  if (along_rows) {
    for (index_t j = 0; j < other; ++j) {
      const T* src = tmp + j * ld;
      for (auto [b, e] : runs) {
        T* dst = &C.local(b, j);
        for (index_t i = 0; i < e - b; ++i) dst[i] += src[i];
        src += e - b;
      }
    }
    return;
  }
  index_t off = 0;
  for (auto [b, e] : runs)
    for (index_t j = b; j < e; ++j, ++off) {
      const T* src = tmp + off * ld;
      T* dst = &C.local(0, j);
      for (index_t i = 0; i < other; ++i) dst[i] += src[i];
    }
}

// The leading dimension of a tile that arrived packed: `extent` x kw when k is X's columns,
// kw x `extent` when it is X's rows.
inline index_t packed_ld(bool k_is_col, index_t extent, index_t kw) {
  return std::max<index_t>(k_is_col ? extent : kw, 1);
}

// The AllGather forms' local product. AG-A: a tile of op(A)'s rows (`ext` of them) times
// op(B)[k0 : k0+kw, :]; AG-B: op(A)[:, k0 : k0+kw] times a tile of op(B)'s columns. Into
// `out` (ld ldo) with beta; at(i) is C's local row (AG-A) or column (AG-B) i. The other
// operand Y (op(B) for AG-A, op(A) for AG-B) is read from the caller's storage, or, when it
// is streamed (SplitStream), from `y`: its k-chunk starting at k index y_k0 (ld ldy).
template <Scalar T>
struct TileGemm {
  const Operands<T>& x;
  bool ag_a = true;
  const T* y = nullptr;
  index_t ldy = 0, y_k0 = 0;
  void operator()(const T* tile, index_t ld, index_t ext, index_t k0, index_t kw, T* out, index_t ldo,
                  T beta) const {
    const auto [yk, ldk] = other_at(k0);
    if (ag_a)
      blas::gemm(x.opA, x.opB, ext, x.C.local_cols(), kw, x.alpha, tile, ld, yk, ldk, beta, out, ldo);
    else
      blas::gemm(x.opA, x.opB, x.C.local_rows(), ext, kw, x.alpha, yk, ldk, tile, ld, beta, out, ldo);
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

// Block b's tile over k-range [k0, k0+kw) into C: straight into its rows (AG-A) or columns
// (AG-B) when they are one run, else into scratch `tmp` and then added into each run.
template <Scalar T>
void multiply_block(const TileGemm<T>& g, const T* tile, index_t ld, const DimMap& map, int b,
                    index_t k0, index_t kw, T* tmp) {
  const index_t ext = map.local_extent(b);
  const auto runs = map.owned_ranges(b);
  if (runs.size() <= 1) return g(tile, ld, ext, k0, kw, g.at(runs.empty() ? 0 : runs[0].first), g.x.C.ld(), T(1));
  const index_t ldt = std::max<index_t>(g.ag_a ? ext : g.other(), 1);  // tmp: ext x other or other x ext
  g(tile, ld, ext, k0, kw, tmp, ldt, T(0));
  add_runs(tmp, ldt, runs, g.ag_a, g.other(), g.x.C);
}

// Block b's k-chunk `src` (ld ldsrc, X's stored orientation) into its places in the chunk of
// the whole of op(X) `full` (ld ldf): rows of every column (k along columns) or whole columns.
template <Scalar T>
void place_runs(const T* src, index_t ldsrc, bool k_is_col, const std::vector<std::pair<index_t, index_t>>& runs,
                index_t kw, T* full, index_t ldf) {
  index_t off = 0;
  for (auto [b, e] : runs) {
    if (k_is_col)
      for (index_t j = 0; j < kw; ++j) std::copy_n(src + off + j * ldsrc, e - b, full + b + j * ldf);
    else
      for (index_t c = b; c < e; ++c) std::copy_n(src + (off + c - b) * ldsrc, kw, full + c * ldf);
    off += e - b;
  }
}

using Runs = std::vector<std::pair<index_t, index_t>>;

// Y's local rows `rows` x columns `cols` (runs of local indices), column by column into
// `out` (ld ldo).
template <Scalar T>
void pack_runs(const DistMatrix<T>& Y, const Runs& rows, const Runs& cols, T* out, index_t ldo) {
  for (auto [cb, ce] : cols)
    for (index_t j = cb; j < ce; ++j, out += ldo) {
      T* o = out;
      for (auto [rb, re] : rows) o = std::copy_n(&Y.local(rb, j), re - rb, o);
    }
}

index_t count(const Runs& runs) {
  index_t n = 0;
  for (auto [b, e] : runs) n += e - b;
  return n;
}

// p = 2, an AllGather form whose other operand Y (B for AG-A, A for AG-B) is split along k
// over X (Setup::ring_stream). Per k-chunk [k0, k0 + kw) a rank needs Y's k indices of the
// chunk, its own and the peer's, restricted to its own C columns (AG-A) or rows (AG-B): its
// own are copied from its storage, the peer's arrive packed (the peer's k of the chunk x this
// rank's C runs). Both land in `chunk` in Y's stored orientation, k in global order, one
// chunk ahead of the GEMMs that read it. Buffers: the chunk, one incoming piece, two outgoing.
template <Scalar T>
class SplitStream {
 public:
  SplitStream(const Ring& ring, const DistMatrix<T>& Y, bool k_rows, const DimMap& kmap, const DimMap& cmap,
              index_t k, index_t w)
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
    if (k_rows_) pack_runs(Y_, own, theirs, out_[j % 2], std::max<index_t>(n_own, 1));
    else pack_runs(Y_, theirs, own, out_[j % 2], std::max<index_t>(yours, 1));
    comm::isend(out_[j % 2], n_own * yours, peer(), kTag, ring_.comm, sent_[j % 2]);
    comm::irecv(in_, count(k_in(peer(), j)) * cmap_.local_extent(ring_.r), peer(), kTag, ring_.comm, recv_);
  }

  // Chunk j of Y complete in `chunk` (own rows copied, then the peer's placed once they
  // arrive), and g pointed at it.
  void assemble(TileGemm<T>& g, index_t j) {
    const index_t k0 = j * w_, kw = std::min(w_, k_ - k0), mine = cmap_.local_extent(ring_.r);
    const index_t ld = std::max<index_t>(k_rows_ ? kw : mine, 1);
    const Runs c_runs = cmap_.owned_ranges(ring_.r);
    for (auto [b, e] : k_in(ring_.r, j)) {  // own k rows, straight into their places
      const Runs k_run = {{kmap_.to_local(b), kmap_.to_local(b) + e - b}};
      if (k_rows_) pack_runs(Y_, k_run, c_runs, chunk_ + (b - k0), ld);
      else pack_runs(Y_, c_runs, k_run, chunk_ + (b - k0) * ld, ld);
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

// f() timed into the timer member `acc`, and recorded as `what` of step j.
template <class F>
void timed(Timers& t, double Timers::*acc, const char* what, index_t j, F&& f) {
  const double t0 = now();
  f();
  t.*acc += now() - t0;
  t.record(what, t0, now(), static_cast<int>(j));
}

// p = 2: the two ranks swap their tiles of op(X) in k-chunks of width w; chunk j is
// multiplied while chunk j+1 travels, so a rank holds two chunk buffers, not the other
// rank's tile. Own chunks contiguous in X (k along its columns) all leave from the caller's
// storage up front; rows of X are packed one chunk ahead into two more buffers. With a
// cyclic split both blocks' chunks are first placed into one chunk of the whole op(X)
// (`full`), so one GEMM per chunk covers all of C's rows (AG-A) or columns (AG-B): no
// product scratch.
template <Scalar T>
class ChunkSwap {
 public:
  ChunkSwap(const Ring& ring, const DistMatrix<T>& X, bool k_is_col, const DimMap& map, index_t k, index_t w)
      : ring_(ring), X_(X), k_is_col_(k_is_col), map_(map), k_(k), w_(w), mine_(map.local_extent(ring.r)),
        theirs_(map.local_extent(ring.at(1))), chunks_(k == 0 ? 0 : (k + w - 1) / w), wmax_(std::min(w, k)) {
    const bool dense = X.ld() == X.local_rows() || X.local_cols() <= 1;
    in_place_ = k_is_col ? dense : dense && chunks_ <= 1;
  }
  [[nodiscard]] index_t chunks() const { return chunks_; }

  // Buffers (inside the prologue): two incoming chunks, two packed outgoing ones unless sent
  // in place, and the whole op(X)'s chunk for a scattered split.
  void take() {
    const memory::Slot in[2] = {memory::Slot::Panel0, memory::Slot::Panel1},
                       out[2] = {memory::Slot::Panel2, memory::Slot::Panel3};
    for (index_t j = 0; j < std::min<index_t>(chunks_, 2); ++j) {
      buf_[j] = memory::get<T>(in[j], theirs_ * wmax_);
      if (!in_place_) pack_[j] = memory::get<T>(out[j], mine_ * wmax_);
    }
    if (scattered(map_) && chunks_ > 0) full_ = memory::get<T>(memory::Slot::Partial, map_.extent * wmax_);
  }
  // The first sends: every chunk when they leave in place, else chunk 0.
  void start() {
    for (index_t j = 0; j < (in_place_ ? chunks_ : std::min<index_t>(chunks_, 1)); ++j) send(j);
  }
  // Chunk j+1 leaves now unless it already has (in place).
  void send_next(index_t j) {
    if (j + 1 < chunks_ && !in_place_) send(j + 1);
  }
  void post(index_t j) { comm::irecv(buf_[j % 2], theirs_ * width(j), peer(), kTag, ring_.comm, recv_[j % 2]); }
  void wait(index_t j) { recv_[j % 2].wait(); }
  // The own chunk j: multiplied into C, or placed into `full` for a scattered split.
  void multiply_own(const TileGemm<T>& g, index_t j) {
    const auto [p, ld] = own(j);
    if (full_) place_runs(p, ld, k_is_col_, map_.owned_ranges(ring_.r), width(j), full_, ldf());
    else multiply_block(g, p, ld, map_, ring_.r, j * w_, width(j), static_cast<T*>(nullptr));
  }
  // The peer's chunk j (arrived): multiplied, or placed and then the whole chunk multiplied.
  void multiply_peer(const TileGemm<T>& g, index_t j) {
    const index_t ldp = packed_ld(k_is_col_, theirs_, width(j));
    if (!full_) return multiply_block(g, buf_[j % 2], ldp, map_, peer(), j * w_, width(j), static_cast<T*>(nullptr));
    place_runs(buf_[j % 2], ldp, k_is_col_, map_.owned_ranges(peer()), width(j), full_, ldf());
    g(full_, ldf(), map_.extent, j * w_, width(j), g.at(0), g.x.C.ld(), T(1));
  }
  void finish() {
    sent_[0].wait();
    sent_[1].wait();
  }

 private:
  static constexpr int kTag = 7;
  [[nodiscard]] int peer() const { return ring_.at(1); }
  [[nodiscard]] index_t width(index_t j) const { return std::min(w_, k_ - j * w_); }
  [[nodiscard]] index_t ldf() const { return packed_ld(k_is_col_, map_.extent, wmax_); }
  // Own chunk j, X's columns or rows [j w, j w + width(j)): in X itself, or packed.
  [[nodiscard]] std::pair<const T*, index_t> own(index_t j) const {
    if (!in_place_) return {pack_[j % 2], packed_ld(k_is_col_, mine_, width(j))};
    return {k_is_col_ ? X_.data() + j * w_ * X_.ld() : X_.data() + j * w_, std::max<index_t>(X_.ld(), 1)};
  }
  void send(index_t j) {
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
  bool in_place_ = false;
  T *buf_[2] = {}, *pack_[2] = {}, *full_ = nullptr;
  comm::Requests sent_[2], recv_[2];
};

// The p = 2 swap's schedule: chunk j+1 leaves and is posted while chunk j is multiplied, the
// own chunk first (while the peer's arrives). A streamed other operand (`ys`) moves
// alongside, one chunk ahead, its chunk j complete before chunk j's GEMMs. Without overlap
// every receive is posted just before it is waited for.
template <Scalar T>
void swap_in_chunks(ChunkSwap<T>& xs, const TileGemm<T>& g, SplitStream<T>* ys, const Options& o, Timers& t) {
  const index_t n = xs.chunks();
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
      timed(t, &Timers::comm, "wait", j, [&] {
        if (!o.overlap) ys->start(j);
        ys->assemble(gj, j);
        if (o.overlap && j + 1 < n) ys->start(j + 1);
      });
    timed(t, &Timers::gemm, "gemm", j, [&] { xs.multiply_own(gj, j); });
    timed(t, &Timers::comm, "wait", j, [&] { xs.wait(j); });
    timed(t, &Timers::gemm, "gemm", j, [&] { xs.multiply_peer(gj, j); });
  }
  timed(t, &Timers::comm, "wait", n, [&] {
    xs.finish();
    if (ys) ys->finish();
  });
}

// AllGather forms: X's tiles travel round the ring, split along k into one stream (left) or
// two (bidirectional: first half left, second half right). At step s a stream moving in
// direction d holds the tile of ring position r - d*s and multiplies it into C
// (multiply_block; scratch for a scattered block's product). One stream over a contiguous
// local tile is sent from the caller's storage and multiplied in place. (p = 2 swaps in
// k-chunks instead: swap_in_chunks.)
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
  for (std::size_t h = 0; h < streams.size() && !in_place; ++h) {
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
    double t0 = now();
    for (std::size_t h = 0; h < streams.size(); ++h) {
      const int b = ring.at(-streams[h].dir * s);
      multiply_block(g, tile(h), packed_ld(k_is_col, map.local_extent(b), streams[h].kw), map, b,
                     streams[h].k0, streams[h].kw, scratch);
    }
    t.gemm += now() - t0;
    t.record("gemm", t0, now(), s);
    t0 = now();
    reqs.wait();
    t.comm += now() - t0;
    t.record("wait", t0, now(), s);
  }
}

// op(X)'s rows (op_dim 0) or columns (op_dim 1) listed in `runs` (`count` in all), as a
// pointer and ld for BLAS with `op`: into X itself when they are one run, else packed into
// `buf` in X's stored orientation. The listed dim must be whole in X (local = global index).
template <Scalar T>
std::pair<const T*, index_t> op_slice(const DistMatrix<T>& X, Op op, int op_dim,
                                      const std::vector<std::pair<index_t, index_t>>& runs,
                                      index_t count, T* buf) {
  const int d = stored_dim(op, op_dim);
  if (runs.size() <= 1) {
    const index_t g0 = runs.empty() ? 0 : runs[0].first;
    return {d == 0 ? X.data() + g0 : X.data() + g0 * X.ld(), X.ld()};
  }
  if (d == 0) {  // rows [b, e) of every column, stacked: ld = count
    for (index_t j = 0; j < X.local_cols(); ++j) {
      T* out = buf + j * count;
      for (auto [b, e] : runs) {
        const T* col = &X.local(b, j);
        out = std::copy(col, col + (e - b), out);
      }
    }
    return {buf, std::max<index_t>(count, 1)};
  }
  const index_t nr = X.local_rows();  // whole columns, one after another: ld = rows
  T* out = buf;
  for (auto [b, e] : runs)
    for (index_t j = b; j < e; ++j) out = std::copy_n(&X.local(0, j), nr, out);
  return {buf, std::max<index_t>(nr, 1)};
}

// A rank's share of A + B + C in elements, (m k + k n + m n) / p, from global extents (the
// same on every rank, so both sides of a swap cut the same chunks).
template <Scalar T>
double abc_share(const Operands<T>& x, int p) {
  const double m = double(x.C.rows()), n = double(x.C.cols());
  const double k = double(x.opA == Op::N ? x.A.cols() : x.A.rows());
  return (m * k + k * n + m * n) / p;
}

// The global runs of `runs` (taken in local order) that hold local indices [lo, hi).
std::vector<std::pair<index_t, index_t>> sub_runs(const std::vector<std::pair<index_t, index_t>>& runs,
                                                  index_t lo, index_t hi) {
  std::vector<std::pair<index_t, index_t>> out;
  index_t off = 0;
  for (auto [b, e] : runs) {
    const index_t s = std::max(lo, off), f = std::min(hi, off + e - b);
    if (s < f) out.emplace_back(b + s - off, b + f - off);
    off += e - b;
  }
  return out;
}

// The ReduceScatter form's local product for C's block b, its local rows (cd 0) or columns
// (cd 1) [lo, lo + cw): alpha * op(A)[those rows, k_r] * op(B)[k_r, :] (or op(A)[:, k_r] *
// op(B)[k_r, those columns]) into `out` (ld ldo) with beta. A scattered chunk's slice of
// op(A) (op(B)) is packed into `pack` first.
template <Scalar T>
void block_product(const Operands<T>& x, int cd, const DimMap& cmap, int b, index_t lo, index_t cw,
                   T* pack, T beta, T* out, index_t ldo) {
  const index_t kl = x.opA == Op::N ? x.A.local_cols() : x.A.local_rows();
  const index_t other = cd == 0 ? x.C.cols() : x.C.rows();
  const auto runs = sub_runs(cmap.owned_ranges(b), lo, lo + cw);
  if (cd == 0) {
    const auto [a, lda] = op_slice(x.A, x.opA, 0, runs, cw, pack);
    blas::gemm(x.opA, x.opB, cw, other, kl, x.alpha, a, lda, x.B.data(), x.B.ld(), beta, out, ldo);
  } else {
    const auto [bp, ldb] = op_slice(x.B, x.opB, 1, runs, cw, pack);
    blas::gemm(x.opA, x.opB, other, cw, kl, x.alpha, x.A.data(), x.A.ld(), bp, ldb, beta, out, ldo);
  }
}

// ReduceScatter at p = 2: each rank computes the peer's block of partial sums in chunks of
// w of the block's rows or columns (cd) and sends chunk j while it multiplies chunk j of its
// own block straight into C (with beta) and adds the peer's chunk j, arriving meanwhile.
// Buffers: two outgoing chunks, one incoming, and a scattered chunk's packed slice.
template <Scalar T>
void reduce_scatter_swap(const Ring& ring, const Operands<T>& x, int cd, index_t w, const Options& o,
                         Timers& t) {
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
    double t0 = now();
    sent[j % 2].wait();  // out[j % 2] left two chunks ago
    t.comm += now() - t0;
    t0 = now();
    if (cp > 0) block_product(x, cd, cmap, peer, lo, cp, pack, T(0), out[j % 2], cd == 0 ? cp : std::max<index_t>(other, 1));
    t.gemm += now() - t0;
    t.record("gemm", t0, now(), static_cast<int>(j));
    comm::isend(out[j % 2], cp * other, peer, tag, ring.comm, sent[j % 2]);
    comm::Requests recv;
    comm::irecv(in, cm * other, peer, tag, ring.comm, recv);
    if (!o.overlap) recv.wait();
    t0 = now();
    T* cj = cd == 0 ? x.C.data() + lo : x.C.data() + lo * x.C.ld();
    if (cm > 0) block_product(x, cd, cmap, ring.r, lo, cm, pack, x.beta, cj, x.C.ld());
    t.gemm += now() - t0;
    t.record("gemm", t0, now(), static_cast<int>(j));
    t0 = now();
    recv.wait();
    t.comm += now() - t0;
    t.record("wait", t0, now(), static_cast<int>(j));
    const index_t rows = cd == 0 ? cm : other, cols = cd == 0 ? other : cm;
    for (index_t jj = 0; jj < cols; ++jj)  // the peer's sums for this chunk (ld = rows)
      for (index_t i = 0; i < rows; ++i) cj[i + jj * x.C.ld()] += in[i + jj * rows];
  }
  sent[0].wait();
  sent[1].wait();
}

// ReduceScatter form: C is split along X by rows or by columns (dim cd, any map); at step s
// the partial of block (r+1+s) mod p -- alpha * op(A)[its rows, k_r] * op(B)[k_r, :], or
// op(A)[:, k_r] * op(B)[k_r, its columns] -- is added to the running sum arriving from r+1 and
// sent to r-1. The last step is the own block: its GEMM goes straight into C with beta, and
// the arriving sum is added there. p = 2 swaps the sums in chunks (reduce_scatter_swap).
template <Scalar T>
void reduce_scatter_ring(const Ring& ring, const Operands<T>& x, const Options& o, Timers& t) {
  const int cd = splitting(x.C.layout(), 0).empty() ? 1 : 0;
  const DimMap& cmap = x.C.layout().map(cd);
  const index_t other = cd == 0 ? x.C.cols() : x.C.rows(), max_tile = widest(cmap) * other;
  const index_t kl = x.opA == Op::N ? x.A.local_cols() : x.A.local_rows();
  if (ring.p == 2) {  // chunked (Options::panel wide, else rs_chunk_width from global extents)
    const double k_widest = double(widest(x.A.layout().map(x.opA == Op::N ? 1 : 0)));
    const index_t w = o.panel > 0 ? o.panel : rs_chunk_width(double(other), k_widest, abc_share(x, 2));
    return reduce_scatter_swap(ring, x, cd, w, o, t);
  }
  T* work[2] = {};
  T *incoming = nullptr, *pack = nullptr;
  prologue(x.C.mesh().comm(), [&] {
    const memory::Slot slots[2] = {memory::Slot::Panel0, memory::Slot::Panel1};
    for (int w = 0; w < std::min(ring.p - 1, 2); ++w) work[w] = memory::get<T>(slots[w], max_tile);
    if (ring.p > 1) incoming = memory::get<T>(memory::Slot::Panel2, max_tile);
    if (scattered(cmap)) pack = memory::get<T>(memory::Slot::Partial, widest(cmap) * kl);
  });
  comm::Requests sent[2];
  for (int s = 0; s < ring.p; ++s) {
    const int b = ring.at(1 + s), w = s % 2;
    const bool last = s + 1 == ring.p;  // b == r: into C
    const index_t cb = cmap.local_extent(b);
    T* out = last ? x.C.data() : work[w];
    const index_t ldo = last ? x.C.ld() : std::max<index_t>(cd == 0 ? cb : other, 1);
    double t0 = now();
    if (!last) sent[w].wait();  // work[w] went out two steps ago
    comm::Requests recv;
    if (s > 0) comm::irecv(incoming, cb * other, ring.at(1), 9, ring.comm, recv);
    if (!o.overlap) recv.wait();
    t.comm += now() - t0;
    t0 = now();
    block_product(x, cd, cmap, b, 0, cb, pack, last ? x.beta : T(0), out, ldo);
    t.gemm += now() - t0;
    t.record("gemm", t0, now(), s);
    t0 = now();
    recv.wait();
    t.comm += now() - t0;
    t.record("wait", t0, now(), s);
    const index_t rows = cd == 0 ? cb : other, cols = cd == 0 ? other : cb;
    if (s > 0)  // the running sum from r+1, in the block's local order (ld = rows)
      for (index_t j = 0; j < cols; ++j)
        for (index_t i = 0; i < rows; ++i) out[i + j * ldo] += incoming[i + j * rows];
    if (!last) comm::isend(work[w], cb * other, ring.at(-1), 9, ring.comm, sent[w]);
  }
  sent[0].wait();
  sent[1].wait();
}

}  // namespace

template <Scalar T>
void ring_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t) {
  const Mesh& mesh = x.C.mesh();
  const Ring ring{mesh.axis_comm(setup.ring_axis), mesh.axis_size(setup.ring_axis),
                  mesh.coord(setup.ring_axis)};
  const index_t k = x.opA == Op::N ? x.A.cols() : x.A.rows();
  if (setup.ring_form == RingForm::ReduceScatter) return reduce_scatter_ring(ring, x, o, t);
  // Each stream adds its k-range's contribution, so C is scaled by beta once up front.
  blas::scale(x.C.local_rows(), x.C.local_cols(), x.beta, x.C.data(), x.C.ld());
  // AG-A circulates op(A)'s row tiles, AG-B op(B)'s column tiles; p = 2 swaps them in
  // k-chunks (Options::panel wide, else ring_chunk_width from global extents).
  const bool ag_a = setup.ring_form == RingForm::AllGatherA;
  const DistMatrix<T>& X = ag_a ? x.A : x.B;
  const bool k_col = ag_a ? x.opA == Op::N : x.opB != Op::N;
  const DimMap& map = X.layout().map(k_col ? 0 : 1);  // op(X)'s split dimension
  const TileGemm<T> g{x, ag_a};
  if (ring.p != 2) return circulate(ring, X, k_col, map, k, g, o, t);
  // p = 2 swaps in chunks. The other operand Y is streamed when it is split along k (Setup::ring_stream): its
  // k split and C's split of its other dimension say which rows go where.
  const DistMatrix<T>& Y = g.y_matrix();
  const bool y_k_rows = g.y_k_rows();
  const DimMap& cmap = x.C.layout().map(ag_a ? 1 : 0);
  const double y_per_k = setup.ring_stream ? 2.5 * double(widest(cmap)) : 0.0;
  const index_t chunk = o.panel > 0 ? o.panel : ring_chunk_width(double(widest(map)), abc_share(x, 2), y_per_k);
  std::optional<SplitStream<T>> ys;
  if (setup.ring_stream) ys.emplace(ring, Y, y_k_rows, Y.layout().map(y_k_rows ? 0 : 1), cmap, k, chunk);
  ChunkSwap<T> xs(ring, X, k_col, map, k, chunk);
  swap_in_chunks(xs, g, ys ? &*ys : nullptr, o, t);
}

SHARDMM_INSTANTIATE_RUN(ring_run)

}  // namespace shardmm::algo
