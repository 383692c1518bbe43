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

// Send `send` (n_send elements) left and receive n_recv elements from the right.
template <class T>
void shift_left(const Ring& ring, const T* send, index_t n_send, T* recv, index_t n_recv,
                comm::Requests& out) {
  comm::irecv(recv, n_recv, ring.at(1), 7, ring.comm, out);
  comm::isend(send, n_send, ring.at(-1), 7, ring.comm, out);
}

template <Scalar T>
void pack(const DistMatrix<T>& X, T* out) {
  for (index_t j = 0; j < X.local_cols(); ++j)
    std::copy_n(&X.local(0, j), X.local_rows(), out + j * X.local_rows());
}

// AllGather forms: the circulating operand's tiles travel; `multiply(buf, block)` uses one.
template <Scalar T, class Multiply>
void circulate(const Ring& ring, const DistMatrix<T>& X, const DimMap& map, index_t other,
               const Options& o, Timers& t, Multiply&& multiply) {
  const index_t max_tile = map.local_extent(0) * other;
  T* buf[2] = {memory::get<T>(memory::Slot::Panel0, max_tile), memory::get<T>(memory::Slot::Panel1, max_tile)};
  pack(X, buf[0]);
  for (int s = 0; s < ring.p; ++s) {
    const int cur = s % 2;
    comm::Requests reqs;
    if (s + 1 < ring.p) {
      shift_left(ring, buf[cur], map.local_extent(ring.at(s)) * other, buf[1 - cur],
                 map.local_extent(ring.at(s + 1)) * other, reqs);
      if (!o.overlap) reqs.wait();
    }
    double t0 = now();
    multiply(buf[cur], ring.at(s));
    t.gemm += now() - t0;
    t0 = now();
    reqs.wait();
    t.comm += now() - t0;
  }
}

template <Scalar T>
void reduce_scatter_ring(const Ring& ring, const Operands<T>& x, const Options& o, Timers& t) {
  const DimMap& rows = x.C.layout().row_map();  // block over X
  const index_t n = x.C.cols(), max_tile = rows.local_extent(0) * n;
  T* work[2] = {memory::get<T>(memory::Slot::Panel0, max_tile), memory::get<T>(memory::Slot::Panel1, max_tile)};
  T* incoming = memory::get<T>(memory::Slot::Panel2, max_tile);
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
    t0 = now();
    recv.wait();
    t.comm += now() - t0;
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
  if (plan.ring_form == RingForm::AllGatherA) {
    const DimMap& rows = x.A.layout().map(x.opA == Op::N ? 0 : 1);
    circulate(ring, x.A, rows, k, o, t, [&](const T* a, int b) {
      const index_t mb = rows.local_extent(b), row0 = rows.to_global(0, b);
      const index_t lda = std::max<index_t>(x.opA == Op::N ? mb : k, 1);
      blas::gemm(x.opA, x.opB, mb, x.C.local_cols(), k, x.alpha, a, lda, x.B.data(), x.B.ld(),
                 x.beta, x.C.data() + row0, x.C.ld());
    });
    return;
  }
  const DimMap& cols = x.B.layout().map(x.opB == Op::N ? 1 : 0);
  circulate(ring, x.B, cols, k, o, t, [&](const T* b, int blk) {
    const index_t nb = cols.local_extent(blk), col0 = cols.to_global(0, blk);
    const index_t ldb = std::max<index_t>(x.opB == Op::N ? k : nb, 1);
    blas::gemm(x.opA, x.opB, x.C.local_rows(), nb, k, x.alpha, x.A.data(), x.A.ld(), b, ldb,
               x.beta, x.C.data() + col0 * x.C.ld(), x.C.ld());
  });
}

#define SHARDMM_INSTANTIATE(T) \
  template void ring_run<T>(const Operands<T>&, const Plan&, const Options&, Timers&);
SHARDMM_INSTANTIATE(float)
SHARDMM_INSTANTIATE(double)
SHARDMM_INSTANTIATE(std::complex<float>)
SHARDMM_INSTANTIATE(std::complex<double>)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
