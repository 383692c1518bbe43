// SUMMA, C-stationary (van de Geijn & Watts), on a p x q process grid.
//
// Grid: C's rows are distributed over the axis group R (p processes), its columns over the
// group Q (q processes); R and Q together cover every mesh axis. op(A) shares C's row map and
// distributes k over Q with any block-cyclic map; op(B) distributes k over R and shares C's
// column map. ScaLAPACK layouts (any MB/NB/RSRC/CSRC) are used as they are.
//
// Data flow, per k-panel (k-blocks with one owning process column for A and one owning
// process row for B, w indices in all):
//   the process column owning op(A)'s panel broadcasts its m_loc x w piece along its process
//   row (axis_comm(Q)); the process row owning op(B)'s panel broadcasts its w x n_loc piece
//   along its process column (axis_comm(R)); every rank then does
//   C_loc += alpha * A_panel * B_panel (beta goes into the first update).
// In place: the owner reads its panel where it lies, without packing, when nobody else needs
//   it (a broadcast over one process: a 2x1 grid's A, a 1x2 grid's B) or when the panel is
//   one contiguous run of its local columns, which the broadcast then sends from there.
// Panels: k-blocks owned by the same process column (A) and process row (B) are merged up to
//   the panel width, so ScaLAPACK layouts with small blocks still give wide local GEMMs. The
//   default width (core/blocking.hpp): the widest of 4, 2 or 1 x OpenBLAS's k block (384) whose
//   receive buffers fit in a fifth of the rank's A + B + C, else 256 if its buffers fit in a
//   quarter, else 128.
// Overlap: the broadcasts of panel s+1 (comm::ibcast, double-buffered: on 3 or more ranks a
//   pipelined chain of chunks, comm/chain_bcast.cpp, for a panel of two chunks or more, else
//   MPI_Ibcast) are in flight while
//   panel s multiplies; the GEMM runs in pieces of one BLAS k block (no piece repacks what
//   another packed) with MPI_Testall in between so the broadcasts progress; over a network
//   each piece's GEMM also runs in blocks with MPI_Testall between them (blas::Progress), on
//   one node a one-piece panel runs in two column halves. Words received per rank: sum
//   over panels not owned locally of m_loc*w (A) and w*n_loc (B).
#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "algo/algo.hpp"
#include "algo/pack.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "comm/mpi_check.hpp"
#include "core/blocking.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"

namespace shardmm::algo {
namespace {

// C's layout if SUMMA can run on it as is (both dims sharded, no replica/unreduced axes).
bool c_fits(const Layout& C) {
  return !C.is_unreduced() && !C.dim_axes(0).empty() && !C.dim_axes(1).empty() &&
         C.replica_axes().empty();
}

// op(X) must share C's map along C-dim `cdim` and spread k over the other grid axis group.
bool operand_fits(const Layout& X, Op op, const Layout& C, int cdim) {
  const int xd = stored_dim(op, cdim == 0 ? 0 : 1);  // X's dim matching C's dim
  const int kd = 1 - xd;
  return !X.is_unreduced() && X.dim_axes(xd) == C.dim_axes(cdim) && X.map(xd) == C.map(cdim) &&
         X.dim_axes(kd) == C.dim_axes(1 - cdim);
}

// C = [I_R, J_Q] with R = the first mesh axis, Q = the others; block unless a block size is
// asked for.
Layout default_c(const Problem& p, const Options& o) {
  std::vector<std::string> Q(p.mesh.names.begin() + 1, p.mesh.names.end());
  const auto kind = o.block > 0 ? DimSpec::Kind::BlockCyclic : DimSpec::Kind::Block;
  ShardingSpec c;
  c.dims[0] = DimSpec{"I", kind, {p.mesh.names[0]}, o.block, 0};
  c.dims[1] = DimSpec{"J", kind, Q, o.block, 0};
  return Layout(p.mesh, p.m, p.n, c);
}

}  // namespace

Setup summa_setup(const Problem& p, const Options& o) {
  if (p.mesh.ndims() < 2)
    throw NotSupported("SUMMA needs a mesh with at least 2 axes, got " + p.mesh.to_string() +
                       "; use the ring algorithm on a 1D mesh");
  Setup setup;
  setup.algorithm = Algorithm::Summa;
  setup.C = c_fits(p.C) ? p.C : default_c(p, o);
  const auto R = axis_names(p.mesh, setup.C.dim_axes(0));
  const auto Q = axis_names(p.mesh, setup.C.dim_axes(1));
  // k: block layout (long panel runs per owner) unless a block size is asked for.
  const auto kind = o.block > 0 ? DimSpec::Kind::BlockCyclic : DimSpec::Kind::Block;
  ShardingSpec a, b;
  a.dims[0] = setup.C.spec().dims[0];
  a.dims[1] = DimSpec{"K", kind, Q, o.block, 0};
  b.dims[0] = DimSpec{"K", kind, R, o.block, 0};
  b.dims[1] = setup.C.spec().dims[1];
  setup.A = operand_fits(p.A, p.opA, setup.C, 0) ? p.A : stored_layout(p.opA, p.mesh, p.m, p.k, a);
  setup.B = operand_fits(p.B, p.opB, setup.C, 1) ? p.B : stored_layout(p.opB, p.mesh, p.k, p.n, b);
  const int pr = setup.C.row_map().nprocs, pc = setup.C.col_map().nprocs;
  setup.grid = std::to_string(pr) + "x" + std::to_string(pc);
  // The front end resolves Stationary::Auto with the planner (front/resolve.cpp); a setup
  // asked for its layouts alone (Auto) describes the C-stationary variant.
  SummaSetup own;
  own.stationary = o.stationary == Stationary::Auto ? Stationary::C : o.stationary;
  if (own.stationary != Stationary::C) own.chunk = stationary_chunk(p, o, setup, own.stationary);
  setup.own = own;
  setup.detail =
      own.stationary == Stationary::C ? "C-stationary, panel broadcasts along rows and columns"
      : own.stationary == Stationary::A
          ? "A-stationary: B streamed to A's k split, partial C reduce-scattered along rows"
          : "B-stationary: A streamed to B's k split, partial C reduce-scattered along columns";
  return setup;
}

namespace {

using blocking::kKBlock;
using blocking::kMinPanel;
using blocking::SideBuffers;
using blocking::summa_panel_width;

// A run of k indices [kl, kl+w) in the owners' local numbering (A's and B's).
struct Segment {
  index_t kl_a = 0, kl_b = 0, w = 0;
  // Whether this segment starts where `prev` ends in A's (a_side) or B's local k.
  [[nodiscard]] bool follows(const Segment& prev, bool a_side) const {
    return a_side ? prev.kl_a + prev.w == kl_a : prev.kl_b + prev.w == kl_b;
  }
};

// One panel of the pipeline: k segments with the same owners, merged up to the panel width
// (ScaLAPACK layouts hand each owner every q-th block; merging its blocks gives wide panels).
struct Panel {
  std::vector<Segment> segs;
  index_t k0 = 0, w = 0;         // first global k index, total width
  int owner_a = 0, owner_b = 0;  // coordinate along Q (for A) / R (for B)
};

// Packs a panel of X (op(A) when a_side, else op(B)) in X's stored orientation: the segments'
// columns one after another when k runs along X's columns (ld = other), else their rows
// (ld = panel width).
template <Scalar T>
void pack_panel(const DistMatrix<T>& X, bool k_is_col, const Panel& p, bool a_side, index_t other,
                T* out) {
  index_t off = 0;
  for (const Segment& sg : p.segs) {
    const index_t kl = a_side ? sg.kl_a : sg.kl_b;
    if (k_is_col) copy_block(X.data() + kl * X.ld(), X.ld(), other, sg.w, out + off * other, other);
    else copy_block(X.data() + kl, X.ld(), sg.w, other, out + off, p.w);
    off += sg.w;
  }
}

// k cut at A's and B's block boundaries and at the width; consecutive pieces with the same
// owners are merged up to the width; panels are ordered by their first k index, so the
// owners take turns as in plain SUMMA.
std::vector<Panel> panels(const DimMap& ka, const DimMap& kb, index_t k, index_t width) {
  std::map<std::pair<int, int>, std::vector<Panel>> groups;
  for (index_t k0 = 0; k0 < k;) {
    const index_t end =
        std::min({k, (k0 / ka.nb + 1) * ka.nb, (k0 / kb.nb + 1) * kb.nb, k0 + width});
    auto& g = groups[{ka.owner(k0), kb.owner(k0)}];
    if (g.empty() || g.back().w + (end - k0) > width) {
      g.emplace_back();
      g.back().k0 = k0;
      g.back().owner_a = ka.owner(k0);
      g.back().owner_b = kb.owner(k0);
    }
    g.back().segs.push_back({ka.to_local(k0), kb.to_local(k0), end - k0});
    g.back().w += end - k0;
    k0 = end;
  }
  std::vector<Panel> out;
  for (auto& [owners, list] : groups) out.insert(out.end(), list.begin(), list.end());
  std::sort(out.begin(), out.end(), [](const Panel& a, const Panel& b) { return a.k0 < b.k0; });
  return out;
}

// Default panel width (core/blocking.hpp) from the largest tiles (widest: the largest local
// extent of a dimension over its processes), equal on every rank.
index_t default_width(const DimMap& rows, const DimMap& cols, const DimMap& ka, const DimMap& kb,
                      SideBuffers a_bufs, SideBuffers b_bufs) {
  return summa_panel_width(double(widest(rows)), double(widest(cols)), double(widest(ka)),
                           double(widest(kb)), a_bufs, b_bufs);
}

// Panel buffers a side needs: two when broadcast (one filling while one multiplies); one when
// its panels are only packed locally, which happens when the other operand's k blocks, owned
// by turns, cut them into pieces narrower than kMinPanel; none when read in place. A pair
// broadcasting from the owners' storage (k along the stored columns) with the other
// operand's k whole takes turns panel by panel at widths that are multiples of its k block
// (SideBuffers::pair_nb). From the layouts only, so every rank picks the same width.
SideBuffers buffers(int size, bool k_is_col, const DimMap& own_k, const DimMap& other_k,
                    index_t narrowest_block) {
  if (size > 1) return {2, size == 2 && k_is_col && other_k.nprocs == 1 ? own_k.nb : 0};
  return other_k.nprocs > 1 && narrowest_block < kMinPanel ? 1 : 0;
}

// Where one operand's panel is on this rank: in the owner's own storage (base = X's data,
// k indexed by the owner's local k) or in a packed buffer (k indexed from the panel's start).
template <class T>
struct View {
  const T* base = nullptr;
  index_t ld = 1;
  bool in_place = false;
  bool deferred = false;  // not broadcast and not in place: packed just before its GEMM
};

// One operand's side of the pipeline: where its panels come from and go to on this rank.
template <Scalar T>
struct Side {
  const DistMatrix<T>& X;
  bool k_is_col = true;  // k runs along X's stored columns
  bool a_side = true;
  index_t other = 0;              // the panel's other extent: m_loc (A) or n_loc (B)
  MPI_Comm comm = MPI_COMM_NULL;  // the broadcast runs along it
  int size = 1, me = 0;
  T* buf[2] = {};

  [[nodiscard]] int owner(const Panel& p) const { return a_side ? p.owner_a : p.owner_b; }
  // The owner reads its panel in place when nobody else needs it (a size-1 broadcast) and
  // its k indices are one local run or runs of at least 256 (narrower pieces would slow the
  // GEMM more than packing costs), or when they are one run contiguous in memory (k along
  // columns, ld == other), so the broadcast can send it from there.
  [[nodiscard]] bool in_place(const Panel& p) const {
    if (me != owner(p) || other == 0) return false;
    bool run = true, wide = true;  // one local run; every segment a GEMM of its own worth
    for (std::size_t i = 0; i < p.segs.size(); ++i) {
      wide = wide && p.segs[i].w >= kMinPanel;
      if (i > 0 && !p.segs[i].follows(p.segs[i - 1], a_side)) run = false;
    }
    if (size == 1) return run || wide;
    return run && k_is_col && X.ld() == other;
  }
  // Panel p for buffer b: in place at the owner when it can be, else packed there by the
  // owner; the broadcast along `comm` carries other x w elements from the owner to the rest.
  View<T> post(const Panel& p, int b, comm::Requests& reqs) const {
    if (in_place(p)) {
      const index_t k0 = a_side ? p.segs.front().kl_a : p.segs.front().kl_b;
      T* data = const_cast<T*>(X.data()) +
                (k_is_col ? k0 * X.ld() : k0);  // NOLINT: the root's buffer is only read
      if (size > 1) comm::ibcast(data, other * p.w, owner(p), comm, reqs);
      return {X.data(), X.ld(), true};
    }
    if (size == 1) return {nullptr, 1, false, true};  // packed by pack_now, one buffer
    if (me == owner(p)) pack_panel(X, k_is_col, p, a_side, other, buf[b]);
    comm::ibcast(buf[b], other * p.w, owner(p), comm, reqs);
    return packed(p, b);
  }
  // A deferred panel (nothing in flight uses it), packed into the side's single buffer once
  // the previous panel's GEMM is done with it.
  View<T> pack_now(const Panel& p) const {
    pack_panel(X, k_is_col, p, a_side, other, buf[0]);
    return packed(p, 0);
  }
  // Panel p as pack_panel lays it out in buffer b.
  [[nodiscard]] View<T> packed(const Panel& p, int b) const {
    return {buf[b], std::max<index_t>(k_is_col ? other : p.w, 1), false};
  }
  // Start of k index `kk` of the panel (segment sg at panel offset off) in view v.
  [[nodiscard]] const T* at(const View<T>& v, const Segment& sg, index_t off, index_t kk) const {
    const index_t i = v.in_place ? (a_side ? sg.kl_a : sg.kl_b) + kk : off + kk;
    return v.base + (k_is_col ? i * v.ld : i);
  }
};

// Pieces of a panel's GEMM: at most one BLAS k block each, and never across a gap in an
// in-place operand's local k (a size-1 broadcast's owner reads merged blocks where they are).
struct Piece {
  std::size_t seg = 0;
  index_t off = 0, kk = 0, w = 0;  // panel offset of the segment, offset into it, width
};

std::vector<Piece> pieces(const Panel& p, bool a_in_place, bool b_in_place) {
  std::vector<Piece> out;
  index_t off = 0;
  for (std::size_t i = 0; i < p.segs.size(); ++i) {
    const Segment& sg = p.segs[i];
    const bool joins = !out.empty() && out.back().w < kKBlock &&
                       (!a_in_place || sg.follows(p.segs[i - 1], true)) &&
                       (!b_in_place || sg.follows(p.segs[i - 1], false));
    index_t kk = 0;
    if (joins) {  // extend the previous piece (it continues in memory on both sides)
      kk = std::min(kKBlock - out.back().w, sg.w);
      out.back().w += kk;
    }
    for (; kk < sg.w; kk += kKBlock) out.push_back({i, off, kk, std::min(kKBlock, sg.w - kk)});
    off += sg.w;
  }
  return out;
}

// C_loc = alpha * op(A_panel) * op(B_panel) + beta * C_loc for one panel, piece by piece,
// testing `next` (the next panel's broadcasts) between pieces so they progress. Where messages
// cross a network (`polls`) each piece's GEMM also runs in blocks polling `next`
// (blas::Progress); elsewhere a one-piece panel goes in two column halves.
template <Scalar T>
void panel_gemm(const Operands<T>& x, const Side<T>& A, const Side<T>& B, const View<T>& va,
                const View<T>& vb, const Panel& p, T beta, comm::Requests* next, bool polls) {
  const index_t m = x.C.local_rows(), n = x.C.local_cols();
  bool done = next == nullptr;
  std::optional<blas::Progress> progress;
  if (!done && polls) progress.emplace([next] { return next->test(); });
  const auto list = pieces(p, va.in_place, vb.in_place);
  const index_t halves = list.size() == 1 && !done && !polls && n >= 512 ? 2 : 1;
  for (const Piece& pc : list) {
    const T* a = A.at(va, p.segs[pc.seg], pc.off, pc.kk);
    const T* b = B.at(vb, p.segs[pc.seg], pc.off, pc.kk);
    for (index_t h = 0; h < halves; ++h) {
      const index_t j0 = n * h / halves, nj = n * (h + 1) / halves - j0;
      const T* bj = B.k_is_col ? b + j0 : b + j0 * vb.ld;
      const T b0 = &pc == &list.front() ? beta : T(1);  // C's beta goes into its first update
      blas::gemm(x.opA, x.opB, m, nj, pc.w, x.alpha, a, va.ld, bj, vb.ld, b0,
                 x.C.data() + j0 * x.C.ld(), x.C.ld());
      if (!done) done = next->test();
    }
  }
}

// The panel loop: panel s+1's broadcasts (double-buffered) are in flight while panel s
// multiplies. Trace: step spans "wait" and "gemm"; the broadcasts in flight from posting to
// observed completion (comm::Requests).
template <Scalar T>
void summa_pipeline(const Operands<T>& x, const std::vector<Panel>& steps, const Side<T>& A,
                    const Side<T>& B, const Options& o, Timers& t) {
  comm::Requests inflight[2];
  View<T> va[2], vb[2];
  auto start = [&](std::size_t s) {
    const int b = static_cast<int>(s % 2);
    va[b] = A.post(steps[s], b, inflight[b]);
    vb[b] = B.post(steps[s], b, inflight[b]);
    if (!o.overlap) t.timed(&Timers::comm, [&] { inflight[b].wait(); });
  };
  if (!steps.empty()) start(0);
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const int b = static_cast<int>(s % 2);
    const bool more = s + 1 < steps.size();
    if (more) start(s + 1);
    t.timed(&Timers::comm, "wait", s, [&] { inflight[b].wait(); });
    if (va[b].deferred) va[b] = A.pack_now(steps[s]);  // local packing, as the owners' in start()
    if (vb[b].deferred) vb[b] = B.pack_now(steps[s]);
    t.timed(&Timers::gemm, "gemm", s, [&] {
      panel_gemm(x, A, B, va[b], vb[b], steps[s], s == 0 ? x.beta : T(1),
                 more && o.overlap ? &inflight[1 - b] : nullptr, polls(x.C.mesh()));
    });
  }
}

}  // namespace

template <Scalar T>
void summa_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t) {
  if (setup.as<SummaSetup>().stationary != Stationary::C)
    return summa_stationary_run(x, setup, o.overlap, t);
  const Mesh& mesh = x.C.mesh();
  const MeshShape& shape = mesh.shape();
  const Layout& LC = x.C.layout();
  const MPI_Comm row_comm = mesh.axis_comm(axis_names(shape, LC.dim_axes(1)));  // along Q
  const MPI_Comm col_comm = mesh.axis_comm(axis_names(shape, LC.dim_axes(0)));  // along R
  const index_t m_loc = x.C.local_rows(), n_loc = x.C.local_cols();
  Side<T> A{x.A,
            x.opA == Op::N,
            true,
            m_loc,
            row_comm,
            comm::comm_size(row_comm),
            LC.dim_coord(1, mesh.coords())};
  Side<T> B{x.B,
            x.opB != Op::N,
            false,
            n_loc,
            col_comm,
            comm::comm_size(col_comm),
            LC.dim_coord(0, mesh.coords())};
  const DimMap& ka = x.A.layout().map(A.k_is_col ? 1 : 0);
  const DimMap& kb = x.B.layout().map(B.k_is_col ? 1 : 0);
  const index_t narrowest = std::min(ka.nb, kb.nb);
  const index_t width = o.panel > 0 ? o.panel
                                    : default_width(LC.row_map(), LC.col_map(), ka, kb,
                                                    buffers(A.size, A.k_is_col, ka, kb, narrowest),
                                                    buffers(B.size, B.k_is_col, kb, ka, narrowest));

  std::vector<Panel> steps;
  prologue(mesh.comm(), [&] {  // a side that is not broadcast packs into its first buffer only
    steps = panels(ka, kb, ka.extent, width);
    index_t w = 0;  // the widest panel (k may be narrower than the width)
    for (const Panel& s : steps) w = std::max(w, s.w);
    A.buf[0] = memory::get<T>(memory::Slot::Panel0, m_loc * w);
    B.buf[0] = memory::get<T>(memory::Slot::Panel2, w * n_loc);
    if (A.size > 1) A.buf[1] = memory::get<T>(memory::Slot::Panel1, m_loc * w);
    if (B.size > 1) B.buf[1] = memory::get<T>(memory::Slot::Panel3, w * n_loc);
  });
  if (steps.empty()) blas::scale(m_loc, n_loc, x.beta, x.C.data(), x.C.ld());  // k = 0
  summa_pipeline(x, steps, A, B, o, t);
}

SHARDMM_INSTANTIATE_RUN(summa_run)

}  // namespace shardmm::algo
