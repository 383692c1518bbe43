// SUMMA, C-stationary (van de Geijn & Watts), on a p x q process grid.
//
// Grid: C's rows are distributed over the axis group R (p processes), its columns over the
// group Q (q processes); R and Q together cover every mesh axis. op(A) shares C's row map and
// distributes k over Q with any block-cyclic map; op(B) distributes k over R and shares C's
// column map. ScaLAPACK layouts (any MB/NB/RSRC/CSRC) are used as they are.
//
// Data flow, per k-panel (k-blocks with one owning process column for A and one owning
// process row for B, w indices in all):
//   the process column owning op(A)'s panel packs its m_loc x w piece and broadcasts it along
//   its process row (axis_comm(Q)); the process row owning op(B)'s panel broadcasts its
//   w x n_loc piece along its process column (axis_comm(R)); every rank then does
//   C_loc += alpha * A_panel * B_panel with one BLAS call.
// Panels: k-blocks owned by the same process column (A) and process row (B) are merged up to
// the panel width, so ScaLAPACK layouts with small blocks still give wide local GEMMs.
// Overlap: the broadcasts of panel s+1 (MPI_Ibcast, double-buffered) are in flight while
// panel s multiplies; the GEMM is cut into column chunks with MPI_Testall in between so the
// broadcasts progress. Words received per rank: sum over panels not owned locally of
// m_loc*w (A) and w*n_loc (B).
#include <algorithm>
#include <map>

#include "algo/algo.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"

namespace shardmm::algo {
namespace {

constexpr index_t kDefaultPanel = 256;

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

// Words per rank of each variant (leading terms): C moves panels of A and B; A-stationary
// moves B (k/q x n) and reduces C (m/p x n); B-stationary the mirror image.
Stationary cheapest_variant(const Problem& p, int pr, int pc) {
  const double m = double(p.m), n = double(p.n), k = double(p.k), P = pr, Q = pc;
  const double c = m / P * k * (1 - 1 / Q) + n / Q * k * (1 - 1 / P);
  const double a = k / Q * n * (1 - 1 / P) + m / P * n * (1 - 1 / Q);
  const double b = k / P * m * (1 - 1 / Q) + n / Q * m * (1 - 1 / P);
  if (a < 0.8 * c && a <= b) return Stationary::A;
  if (b < 0.8 * c) return Stationary::B;
  return Stationary::C;
}

}  // namespace

Plan summa_plan(const Problem& p, const Options& o) {
  if (p.mesh.ndims() < 2)
    throw NotSupported("SUMMA needs a mesh with at least 2 axes, got " + p.mesh.to_string() +
                       "; use the ring algorithm on a 1D mesh");
  Plan plan;
  plan.algorithm = Algorithm::Summa;
  plan.C = c_fits(p.C) ? p.C : default_c(p, o);
  const auto R = axis_names(p.mesh, plan.C.dim_axes(0));
  const auto Q = axis_names(p.mesh, plan.C.dim_axes(1));
  // k: block layout (long panel runs per owner) unless a block size is asked for.
  const auto kind = o.block > 0 ? DimSpec::Kind::BlockCyclic : DimSpec::Kind::Block;
  ShardingSpec a, b;
  a.dims[0] = plan.C.spec().dims[0];
  a.dims[1] = DimSpec{"K", kind, Q, o.block, 0};
  b.dims[0] = DimSpec{"K", kind, R, o.block, 0};
  b.dims[1] = plan.C.spec().dims[1];
  plan.A = operand_fits(p.A, p.opA, plan.C, 0) ? p.A : stored_layout(p.opA, p.mesh, p.m, p.k, a);
  plan.B = operand_fits(p.B, p.opB, plan.C, 1) ? p.B : stored_layout(p.opB, p.mesh, p.k, p.n, b);
  const int pr = plan.C.row_map().nprocs, pc = plan.C.col_map().nprocs;
  plan.grid = std::to_string(pr) + "x" + std::to_string(pc);
  plan.stationary = o.stationary == Stationary::Auto ? cheapest_variant(p, pr, pc) : o.stationary;
  plan.detail = plan.stationary == Stationary::C
                    ? "C-stationary, panel broadcasts along rows and columns"
                    : plan.stationary == Stationary::A
                          ? "A-stationary: B gathered to A's k split, partial C reduce-scattered along rows"
                          : "B-stationary: A gathered to B's k split, partial C reduce-scattered along columns";
  return plan;
}

namespace {

// A run of k indices [kl, kl+w) in the owners' local numbering (A's and B's).
struct Segment {
  index_t kl_a = 0, kl_b = 0, w = 0;
};

// One panel of the pipeline: k segments with the same owners, merged up to the panel width
// (ScaLAPACK layouts hand each owner every q-th block; merging its blocks gives wide panels).
struct Panel {
  std::vector<Segment> segs;
  index_t k0 = 0, w = 0;         // first global k index, total width
  int owner_a = 0, owner_b = 0;  // coordinate along Q (for A) / R (for B)
  index_t lda = 1, ldb = 1;
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
    if (k_is_col) {
      for (index_t j = 0; j < sg.w; ++j) std::copy_n(&X.local(0, kl + j), other, out + (off + j) * other);
    } else {
      for (index_t j = 0; j < other; ++j) std::copy_n(&X.local(kl, j), sg.w, out + j * p.w + off);
    }
    off += sg.w;
  }
}

// k cut at A's and B's block boundaries and at the width; consecutive pieces with the same
// owners are merged up to the width; panels are ordered by their first k index, so the
// owners take turns as in plain SUMMA.
std::vector<Panel> panels(const DimMap& ka, const DimMap& kb, index_t k, index_t width) {
  std::map<std::pair<int, int>, std::vector<Panel>> groups;
  for (index_t k0 = 0; k0 < k;) {
    const index_t end = std::min({k, (k0 / ka.nb + 1) * ka.nb, (k0 / kb.nb + 1) * kb.nb, k0 + width});
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

}  // namespace

template <Scalar T>
void summa_run(const Operands<T>& x, const Plan& plan, const Options& o, Timers& t) {
  if (plan.stationary != Stationary::C) return summa_stationary_run(x, plan, t);
  const Mesh& mesh = x.C.mesh();
  const MeshShape& shape = mesh.shape();
  const Layout& LC = x.C.layout();
  const MPI_Comm row_comm = mesh.axis_comm(axis_names(shape, LC.dim_axes(1)));  // along Q
  const MPI_Comm col_comm = mesh.axis_comm(axis_names(shape, LC.dim_axes(0)));  // along R
  const int my_q = LC.dim_coord(1, mesh.coords()), my_r = LC.dim_coord(0, mesh.coords());
  const index_t m_loc = x.C.local_rows(), n_loc = x.C.local_cols();
  const bool a_k_col = x.opA == Op::N, b_k_col = x.opB != Op::N;
  const DimMap& ka = x.A.layout().map(a_k_col ? 1 : 0);
  const DimMap& kb = x.B.layout().map(b_k_col ? 1 : 0);
  const index_t k = ka.extent;
  const index_t width = o.panel > 0 ? o.panel : kDefaultPanel;

  std::vector<Panel> steps;
  T* abuf[2] = {};
  T* bbuf[2] = {};
  prologue(mesh.comm(), [&] {
    steps = panels(ka, kb, k, width);
    abuf[0] = memory::get<T>(memory::Slot::Panel0, m_loc * width);
    abuf[1] = memory::get<T>(memory::Slot::Panel1, m_loc * width);
    bbuf[0] = memory::get<T>(memory::Slot::Panel2, width * n_loc);
    bbuf[1] = memory::get<T>(memory::Slot::Panel3, width * n_loc);
  });
  blas::scale(m_loc, n_loc, x.beta, x.C.data(), x.C.ld());
  comm::Requests inflight[2];
  double posted[2] = {0, 0};  // when each buffer's broadcasts were posted (timeline)
  bool done[2] = {true, true};
  auto completed = [&](std::size_t s) {  // panel s's broadcasts observed complete
    const int b = static_cast<int>(s % 2);
    if (!done[b]) t.record("bcast", posted[b], now(), static_cast<int>(s));
    done[b] = true;
  };

  auto start = [&](std::size_t s) {  // pack at the owners and post both broadcasts
    Panel& p = steps[s];
    const int b = static_cast<int>(s % 2);
    p.lda = a_k_col ? std::max<index_t>(m_loc, 1) : std::max<index_t>(p.w, 1);
    p.ldb = b_k_col ? std::max<index_t>(n_loc, 1) : std::max<index_t>(p.w, 1);
    if (my_q == p.owner_a) pack_panel(x.A, a_k_col, p, true, m_loc, abuf[b]);
    if (my_r == p.owner_b) pack_panel(x.B, b_k_col, p, false, n_loc, bbuf[b]);
    posted[b] = now(), done[b] = false;
    comm::ibcast(abuf[b], m_loc * p.w, p.owner_a, row_comm, inflight[b]);
    comm::ibcast(bbuf[b], p.w * n_loc, p.owner_b, col_comm, inflight[b]);
    if (!o.overlap) {
      const double t0 = now();
      inflight[b].wait();
      t.comm += now() - t0;
    }
  };

  if (!steps.empty()) start(0);
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const int b = static_cast<int>(s % 2);
    if (s + 1 < steps.size()) start(s + 1);  // next panel's broadcasts in flight
    double t0 = now();
    inflight[b].wait();
    t.comm += now() - t0;
    t.record("wait", t0, now(), static_cast<int>(s));
    completed(s);
    t0 = now();
    // C_loc += alpha * op(A_panel) * op(B_panel), in column chunks to drive the next panel's
    // broadcasts; the last panel has nothing in flight and goes in one call.
    const Panel& p = steps[s];
    const index_t chunk = s + 1 < steps.size() ? std::max<index_t>(256, (n_loc + 3) / 4) : std::max<index_t>(n_loc, 1);
    for (index_t j0 = 0; j0 < n_loc; j0 += chunk) {
      const index_t nj = std::min(chunk, n_loc - j0);
      const T* bj = b_k_col ? bbuf[b] + j0 : bbuf[b] + j0 * p.ldb;
      blas::gemm(x.opA, x.opB, m_loc, nj, p.w, x.alpha, abuf[b], p.lda, bj, p.ldb, T(1),
                 x.C.data() + j0 * x.C.ld(), x.C.ld());
      if (s + 1 < steps.size() && inflight[1 - b].test()) completed(s + 1);
    }
    t.gemm += now() - t0;
    t.record("gemm", t0, now(), static_cast<int>(s));
  }
}

SHARDMM_INSTANTIATE_RUN(summa_run)

}  // namespace shardmm::algo
