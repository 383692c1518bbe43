// 1D ring ("collective matmul", Wang et al. ASPLOS'23) over one mesh axis X of size p.
// Other mesh axes replicate: every slice along them runs the same ring.
//
// AllGatherA    op(A) = [I_X, K], op(B) = [K, J_X] -> C = [I, J_X]
//   A's row blocks travel left around the ring; at step s rank r holds block (r+s) mod p and
//   computes C_loc[rows of that block, :] while the next block is in flight.
//   Words received per rank: all of A except its own block.
// AllGatherB    op(A) = [I_X, K], op(B) = [K, J_X] -> C = [I_X, J]
//   The same with B's column blocks; C_loc[:, cols of block (r+s) mod p].
// ReduceScatter op(A) = [I, K_X], op(B) = [K_X, J] -> C = [I_X, J]
//   Partial sums travel: at step s rank r computes alpha * A[rows of block (r+1+s), k_r] *
//   B[k_r, :], adds the accumulator received from r+1 and passes it to r-1; after p steps
//   rank r holds block r complete. Words received per rank: (p-1) blocks of C rows.
// Every shift is MPI_Isend/Irecv on axis_comm(X), double-buffered, overlapped with one GEMM.
// Bidirectional (Options::bidirectional, AllGather forms): the tiles are split along k; the
// first half travels left and the second right, so both directions of every link carry half
// the volume (same words per rank, half the per-link time on full-duplex links).
#include <algorithm>

#include "algo/algo.hpp"
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

RingForm pick_form(const Problem& p, RingForm asked) {
  if (asked != RingForm::Auto) return asked;
  const double a = double(p.m) * double(p.k), b = double(p.k) * double(p.n),
               c = double(p.m) * double(p.n);
  if (c < a && c < b) return RingForm::ReduceScatter;
  return a <= b ? RingForm::AllGatherA : RingForm::AllGatherB;
}

}  // namespace

Plan ring_plan(const Problem& p, const Options& o) {
  std::string X = o.ring_axis;
  if (X.empty()) {
    if (p.mesh.ndims() != 1)
      throw NotSupported("ring on mesh " + p.mesh.to_string() +
                         " needs an axis: set Options::ring_axis (--ring-axis) to one of its axes");
    X = p.mesh.names[0];
  }
  X = p.mesh.names[p.mesh.axis_index(X)];
  Plan plan;
  plan.algorithm = Algorithm::Ring;
  plan.ring_axis = X;
  plan.ring_form = pick_form(p, o.ring_form);
  ShardingSpec a, b, c;
  if (plan.ring_form == RingForm::ReduceScatter) {
    a.dims = {whole("I"), over("K", X)};
    b.dims = {over("K", X), whole("J")};
    c.dims = {over("I", X), whole("J")};
    plan.detail = "matmul-reducescatter: partial C blocks circulate";
  } else {
    a.dims = {over("I", X), whole("K")};
    b.dims = {whole("K"), over("J", X)};
    const bool ga = plan.ring_form == RingForm::AllGatherA;
    c.dims = ga ? std::array<DimSpec, 2>{whole("I"), over("J", X)}
                : std::array<DimSpec, 2>{over("I", X), whole("J")};
    plan.detail = ga ? "allgather-matmul: A row blocks circulate" : "allgather-matmul: B column blocks circulate";
  }
  plan.A = stored_layout(p.opA, p.mesh, p.m, p.k, a);
  plan.B = stored_layout(p.opB, p.mesh, p.k, p.n, b);
  plan.C = Layout(p.mesh, p.m, p.n, c);
  plan.grid = "ring over " + X + " (" + std::to_string(p.mesh.sizes[p.mesh.axis_index(X)]) + ")";
  return plan;
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

// AllGather forms: X's tiles travel round the ring, split along k into one stream (left) or
// two (bidirectional: first half left, second half right). At step s a stream moving in
// direction d holds the tile of ring position r - d*s; multiply(buf, block, k0, kw) uses it.
template <Scalar T, class Multiply>
void circulate(const Ring& ring, const DistMatrix<T>& X, bool k_is_col, const DimMap& map,
               index_t k, const Options& o, Timers& t, Multiply&& multiply) {
  std::vector<Stream> streams = {{0, k, -1}};
  if (o.bidirectional && ring.p > 2) streams = {{0, k / 2, -1}, {k / 2, k - k / 2, +1}};
  const memory::Slot slots[2][2] = {{memory::Slot::Panel0, memory::Slot::Panel1},
                                    {memory::Slot::Panel2, memory::Slot::Panel3}};
  T* buf[2][2] = {};
  prologue(X.mesh().comm(), [&] {
    for (std::size_t h = 0; h < streams.size() && h < 2; ++h) {  // one or two streams
      const index_t max_tile = map.local_extent(0) * streams[h].kw;
      buf[h][0] = memory::get<T>(slots[h][0], max_tile);
      buf[h][1] = memory::get<T>(slots[h][1], max_tile);
    }
  });
  for (std::size_t h = 0; h < streams.size(); ++h)
    pack_k(X, k_is_col, streams[h].k0, streams[h].kw, buf[h][0]);
  for (int s = 0; s < ring.p; ++s) {
    const int cur = s % 2;
    comm::Requests reqs;
    for (std::size_t h = 0; s + 1 < ring.p && h < streams.size(); ++h) {
      const Stream& st = streams[h];
      const int tag = 7 + static_cast<int>(h);
      comm::irecv(buf[h][1 - cur], map.local_extent(ring.at(-st.dir * (s + 1))) * st.kw,
                  ring.at(-st.dir), tag, ring.comm, reqs);
      comm::isend(buf[h][cur], map.local_extent(ring.at(-st.dir * s)) * st.kw, ring.at(st.dir),
                  tag, ring.comm, reqs);
    }
    if (!o.overlap) reqs.wait();
    double t0 = now();
    for (std::size_t h = 0; h < streams.size(); ++h)
      multiply(buf[h][cur], ring.at(-streams[h].dir * s), streams[h].k0, streams[h].kw);
    t.gemm += now() - t0;
    t.record("gemm", t0, now(), s);
    t0 = now();
    reqs.wait();
    t.comm += now() - t0;
    t.record("wait", t0, now(), s);
  }
}

template <Scalar T>
void reduce_scatter_ring(const Ring& ring, const Operands<T>& x, const Options& o, Timers& t) {
  const DimMap& rows = x.C.layout().row_map();  // block over X
  const index_t n = x.C.cols(), max_tile = rows.local_extent(0) * n;
  T* work[2] = {};
  T* incoming = nullptr;
  prologue(x.C.mesh().comm(), [&] {
    work[0] = memory::get<T>(memory::Slot::Panel0, max_tile);
    work[1] = memory::get<T>(memory::Slot::Panel1, max_tile);
    incoming = memory::get<T>(memory::Slot::Panel2, max_tile);
  });
  comm::Requests sent[2];
  for (int s = 0; s < ring.p; ++s) {
    const int b = ring.at(1 + s), w = s % 2;
    const index_t mb = rows.local_extent(b), row0 = rows.to_global(0, b);
    double t0 = now();
    sent[w].wait();  // work[w] went out two steps ago
    comm::Requests recv;
    if (s > 0) comm::irecv(incoming, mb * n, ring.at(1), 9, ring.comm, recv);
    if (!o.overlap) recv.wait();
    t.comm += now() - t0;
    t0 = now();
    const T* a = x.opA == Op::N ? x.A.data() + row0 : x.A.data() + row0 * x.A.ld();
    blas::gemm(x.opA, x.opB, mb, n, x.opA == Op::N ? x.A.local_cols() : x.A.local_rows(),
               x.alpha, a, x.A.ld(), x.B.data(), x.B.ld(), T(0), work[w], std::max<index_t>(mb, 1));
    t.gemm += now() - t0;
    t.record("gemm", t0, now(), s);
    t0 = now();
    recv.wait();
    t.comm += now() - t0;
    t.record("wait", t0, now(), s);
    if (s > 0)
      for (index_t e = 0; e < mb * n; ++e) work[w][e] += incoming[e];
    if (s + 1 < ring.p) comm::isend(work[w], mb * n, ring.at(-1), 9, ring.comm, sent[w]);
  }
  // Own block complete in work[(p-1)%2]: C_loc = that + beta * C_loc.
  const T* done = work[(ring.p - 1) % 2];
  const index_t mr = x.C.local_rows();
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < mr; ++i)
      x.C.local(i, j) = done[i + j * mr] + (x.beta == T(0) ? T(0) : x.beta * x.C.local(i, j));
  sent[0].wait();
  sent[1].wait();
}

}  // namespace

template <Scalar T>
void ring_run(const Operands<T>& x, const Plan& plan, const Options& o, Timers& t) {
  const Mesh& mesh = x.C.mesh();
  const Ring ring{mesh.axis_comm(plan.ring_axis), mesh.axis_size(plan.ring_axis),
                  mesh.coord(plan.ring_axis)};
  const index_t k = x.opA == Op::N ? x.A.cols() : x.A.rows();
  if (plan.ring_form == RingForm::ReduceScatter) return reduce_scatter_ring(ring, x, o, t);
  // Each stream adds its k-range's contribution, so C is scaled by beta once up front.
  blas::scale(x.C.local_rows(), x.C.local_cols(), x.beta, x.C.data(), x.C.ld());
  if (plan.ring_form == RingForm::AllGatherA) {
    const bool k_col = x.opA == Op::N;
    const DimMap& rows = x.A.layout().map(k_col ? 0 : 1);
    circulate(ring, x.A, k_col, rows, k, o, t, [&](const T* a, int b, index_t k0, index_t kw) {
      const index_t mb = rows.local_extent(b), row0 = mb > 0 ? rows.to_global(0, b) : 0;
      const T* bk = x.opB == Op::N ? x.B.data() + k0 : x.B.data() + k0 * x.B.ld();
      blas::gemm(x.opA, x.opB, mb, x.C.local_cols(), kw, x.alpha, a,
                 std::max<index_t>(k_col ? mb : kw, 1), bk, x.B.ld(), T(1), x.C.data() + row0,
                 x.C.ld());
    });
    return;
  }
  const bool k_col = x.opB != Op::N;
  const DimMap& cols = x.B.layout().map(k_col ? 0 : 1);
  circulate(ring, x.B, k_col, cols, k, o, t, [&](const T* b, int blk, index_t k0, index_t kw) {
    const index_t nb = cols.local_extent(blk), col0 = nb > 0 ? cols.to_global(0, blk) : 0;
    const T* ak = x.opA == Op::N ? x.A.data() + k0 * x.A.ld() : x.A.data() + k0;
    blas::gemm(x.opA, x.opB, x.C.local_rows(), nb, kw, x.alpha, ak, x.A.ld(), b,
               std::max<index_t>(k_col ? nb : kw, 1), T(1), x.C.data() + col0 * x.C.ld(), x.C.ld());
  });
}

SHARDMM_INSTANTIATE_RUN(ring_run)

}  // namespace shardmm::algo
