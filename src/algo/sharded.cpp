// Sharding-rule matmul (the JAX guide's four cases) on named mesh axes, block shardings.
//
// The setup plans (sharded_plan.cpp): op(A) = [I, K] and op(B) = [K, J] are multiplied as
// op(A') = [I', K'] and op(B') = [K', J'] into P = [I', J']{U_K'}, the cheapest choice by the
// redistribution patterns' exact words. The run:
//  1. Each operand reaches its layout: as it is; a slice of its own tile (a piece of it, no
//     copy); an AllGather over the axes it drops (MPI_Allgatherv on those axes' communicator,
//     pieces multiplied where they land; or streamed around the ring, each piece multiplied
//     while it travels on: the larger gathered operand streams unless P is reduce-scattered);
//     anything else one redistribution (AllToAll / Permute / exchange on the axes involved).
//  2. The local product, one GEMM per pair of pieces, and 3. P into C:
//     - P is C's distribution, or C's tile a slice of P's: the product goes straight into C
//       (only C's part of it is computed);
//     - ReduceScatter over K': fused with the product, block by block (sharded_reduce.hpp);
//     - AllReduce over K': the product of C's part, summed in place (MPI_Allreduce);
//     - otherwise P in a workspace tile, then one redistribution into C.
// Words: exactly the plan's (the patterns' formulas). Buffers come from the workspace pool:
// StagedA0/B0 (a gathered or moved operand), StagedA1/B1 (two streamed pieces), StagedC0/C1
// (the product or the fused reduction's two blocks).
#include <algorithm>
#include <optional>

#include "algo/algo.hpp"
#include "algo/pack.hpp"
#include "algo/sharded_plan.hpp"
#include "algo/sharded_reduce.hpp"
#include "algo/sharded_steps.hpp"
#include "comm/wire.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/error.hpp"
#include "shardmm/redistribute.hpp"

namespace shardmm::algo {
namespace {

using matrix::Pattern;

// One operand on its way to the layout it is multiplied in.
template <Scalar T>
struct Operand {
  enum class How { Piece, Gathered, Streamed, Moved } how = How::Piece;
  const DistMatrix<T>* X = nullptr;
  Layout to;
  sharded::Gather<T> gather;
  std::optional<DistMatrix<T>> moved;
  sharded::Pieces<T> pieces;
  T* buf = nullptr;
};

// How X reaches `to`: itself or a slice of it (one piece), a gather, or a redistribution.
template <Scalar T>
Operand<T> classify(const DistMatrix<T>& X, const Layout& to) {
  Operand<T> o;
  o.X = &X, o.to = to;
  const auto plan = matrix::plan_redistribution(X.layout(), to);
  if (plan.pattern == Pattern::Local) {
    const auto c = X.mesh().coords();
    const auto b = matrix::detail::overlap(X.layout(), c, to, c);
    if (b.rows.size() <= 1 && b.cols.size() <= 1) {
      const index_t r = b.rows.empty() ? 0 : b.rows[0].from,
                    k = b.cols.empty() ? 0 : b.cols[0].from;
      o.pieces = {{0, b.nrows, 0, b.ncols, X.data() + r + k * X.ld(), X.ld()}};
      return o;
    }
  } else if (sharded::plan_gather(X, to, plan, o.gather)) {
    o.how = Operand<T>::How::Gathered;
    return o;
  }
  o.how = Operand<T>::How::Moved;
  return o;
}

// How the product reaches C.
enum class Out { Into, Fused, AllReduce, Exchange };

template <Scalar T>
Out output(const DistMatrix<T>& C, const Layout& P, sharded::Reduction& red) {
  const auto plan = matrix::plan_redistribution(P, C.layout());
  const auto c = C.mesh().coords();
  const auto pu = P.unreduced_axes();
  for (int u : C.layout().unreduced_axes())  // zero partials along C's own unreduced axes
    if (std::find(pu.begin(), pu.end(), u) == pu.end()) return Out::Exchange;
  if (plan.pattern == Pattern::Local &&
      sharded::region(P, c, C.layout(), c, red.blocks.emplace_back()))
    return Out::Into;
  if (plan.pattern == Pattern::ReduceScatter &&
      sharded::plan_reduction(C.mesh(), P, C.layout(), plan, red))
    return Out::Fused;
  if (plan.pattern == Pattern::AllReduce &&
      sharded::plan_reduction(C.mesh(), P, C.layout(), plan, red))
    return Out::AllReduce;
  return Out::Exchange;
}

// Takes every buffer of the run (the prologue: rank-local, failures agreed before any message).
template <Scalar T>
void take(Operand<T>& o, memory::Slot whole, memory::Slot pieces) {
  using How = typename Operand<T>::How;
  if (o.how == How::Moved) o.moved.emplace(matrix::pooled<T>(o.X->mesh(), o.to, whole));
  if (o.how == How::Gathered) o.buf = memory::get<T>(whole, o.gather.total);
  if (o.how == How::Streamed) o.buf = memory::get<T>(pieces, 2 * o.gather.widest);
}

// The operand's pieces once it has arrived (gathered or moved); streamed ones arrive later.
template <Scalar T>
void arrive(Operand<T>& o, Timers& t) {
  using How = typename Operand<T>::How;
  if (o.how == How::Moved) {
    t.timed(&Timers::comm, [&] {
      const comm::OperandMoves operand;  // A or B: may travel in a 16-bit wire format
      redistribute(*o.X, *o.moved);
    });
    o.pieces = {sharded::whole(*o.moved)};
  } else if (o.how == How::Gathered) {
    t.timed(&Timers::comm, [&] { o.pieces = sharded::gather_all(*o.X, o.to, o.gather, o.buf); });
  }
}

}  // namespace

Setup sharded_setup(const Problem& p, const Options&) {
  Setup setup;
  setup.algorithm = Algorithm::Sharded;
  setup.A = sharded::as_block(p.A);
  setup.B = sharded::as_block(p.B);
  setup.C = sharded::as_block(p.C);
  setup.grid = p.mesh.to_string();
  const sharded::Plan plan = sharded::plan_product(p);
  setup.own = ShardedSetup{{plan.A, plan.B, plan.P}};
  setup.detail = plan.detail;
  return setup;
}

template <Scalar T>
void sharded_run(const Operands<T>& x, const Setup& setup, const Options&, Timers& t) {
  using How = typename Operand<T>::How;
  const std::vector<Layout>& staged = setup.as<ShardedSetup>().staged;
  Operand<T> a = classify(x.A, staged[0]), b = classify(x.B, staged[1]);
  const Layout& LP = staged[2];
  sharded::Reduction red;
  const Out out = output(x.C, LP, red);
  // The larger gathered operand streams past the product, unless the product is computed
  // block by block for a fused ReduceScatter (it would stream once per block).
  // (Decided from global sizes: every rank streams the same operand.)
  if (out != Out::Fused && (a.how == How::Gathered || b.how == How::Gathered)) {
    const bool by_a =
        a.how == How::Gathered &&
        (b.how != How::Gathered || sharded::largest_tile(a.to) >= sharded::largest_tile(b.to));
    (by_a ? a : b).how = How::Streamed;
  }
  std::optional<DistMatrix<T>> P;
  T* pbuf = nullptr;
  prologue(x.C.mesh().comm(), [&] {
    take(a, memory::Slot::StagedA0, memory::Slot::StagedA1);
    take(b, memory::Slot::StagedB0, memory::Slot::StagedB1);
    if (out == Out::Exchange) P.emplace(matrix::pooled<T>(x.C.mesh(), LP, memory::Slot::StagedC0));
    if (out == Out::Fused) pbuf = memory::get<T>(memory::Slot::StagedC0, 2 * red.widest);
    if (out == Out::AllReduce && !sharded::reduce_in_place(x.C, red, x.beta))
      pbuf = memory::get<T>(memory::Slot::StagedC0, red.blocks[red.group.me].size());
  });
  arrive(a, t);
  arrive(b, t);
  // product(region, out, ld, beta): alpha op(A') op(B') over that region of P.
  auto product = [&](index_t i0, index_t i1, index_t j0, index_t j1, T* o, index_t ld, T beta) {
    sharded::Started started;
    auto with = [&](const sharded::Pieces<T>& pa, const sharded::Pieces<T>& pb) {
      t.timed(&Timers::gemm, [&] {
        sharded::multiply(x.opA, x.opB, x.alpha, pa, pb, beta, i0, i1, j0, j1, o, ld, started);
      });
    };
    if (a.how == How::Streamed)
      sharded::stream(x.A, a.to, a.gather, a.buf, t,
                      [&](const sharded::Piece<T>& p) { with({p}, b.pieces); });
    else if (b.how == How::Streamed)
      sharded::stream(x.B, b.to, b.gather, b.buf, t,
                      [&](const sharded::Piece<T>& p) { with(a.pieces, {p}); });
    else with(a.pieces, b.pieces);
  };
  switch (out) {
    case Out::Into: {
      const sharded::Region& r = red.blocks.front();
      product(r.i0, r.i1, r.j0, r.j1, x.C.data() + r.ci + r.cj * x.C.ld(), x.C.ld(), x.beta);
      return;
    }
    case Out::Fused: return sharded::fused_reduce_scatter(x.C, red, x.beta, pbuf, t, product);
    case Out::AllReduce: return sharded::all_reduce(x.C, red, x.beta, pbuf, t, product);
    case Out::Exchange:
      product(0, P->local_rows(), 0, P->local_cols(), P->data(), P->ld(), T(0));
      t.timed(&Timers::comm, [&] { redistribute(*P, x.C, T(1), x.beta); });
  }
}

SHARDMM_INSTANTIATE_RUN(sharded_run)

}  // namespace shardmm::algo
