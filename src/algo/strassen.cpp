// Strassen (Algorithm::Strassen, opt-in: Options::allow_fast for Auto): each rank's share of
// the product as local Strassen-Winograd recursions (strassen_winograd.cpp). C is the
// caller's when it shards every mesh axis longer than 1 and holds no partial sums, else rows
// over every axis but the last, columns over the last. Then, by C's split:
// - rows whole (1 x P), the line form, strassen_ring.cpp: op(A)'s k pieces travel;
// - columns whole (P x 1), the column form, strassen_ring.cpp: op(B)'s k pieces travel;
// - both split (a 2-D grid), the grid form, strassen_grid.cpp: op(A)'s pieces broadcast
//   along the rows of ranks, op(B)'s along the columns;
// - neither (one rank): one recursion on the local m x n x k, here.
// On 7 Q ranks, when the smallest side reaches the crossover (or Options::strassen_step is
// BreadthFirst), one breadth-first step first (CAPS, strassen_caps.cpp): the seven half-size
// products on seven groups of Q ranks at once, each by the column form there; DepthFirst
// turns it off.
// Every form keeps the operands in the caller's layouts when their maps fit (any block-cyclic
// split of k), so nothing is gathered whole; products are halved per level while the smallest
// of their sides is at least the crossover (Options::fast_crossover, else the machine
// profile's, measured by `shardmm calibrate`). Scratch: slot Partial, winograd::scratch()
// elements, taken in the prologue. Works for any rank count, mesh, shape, op, alpha and beta.
#include <algorithm>

#include "algo/pack.hpp"
#include "algo/strassen.hpp"
#include "algo/strassen_winograd.hpp"
#include "core/winograd.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"

namespace shardmm::algo {
namespace {

// True when C's layout gives every rank its own tile: no partial sums, no replication over
// an axis longer than 1.
bool tiles_every_rank(const Layout& C) {
  if (C.is_unreduced()) return false;
  for (int a : C.replica_axes())
    if (C.mesh().sizes[a] > 1) return false;
  return true;
}

// C's default sharding: rows block-split over every mesh axis but the last, columns over the
// last (a line: rows over it).
ShardingSpec default_spec(const MeshShape& mesh) {
  ShardingSpec s;
  s.name = "C";
  s.dims[0].label = "I", s.dims[1].label = "J";
  const int d = mesh.ndims();
  for (int a = 0; a < d; ++a) {
    DimSpec& dim = s.dims[d > 1 && a == d - 1 ? 1 : 0];
    dim.kind = DimSpec::Kind::Block;
    dim.axes.push_back(mesh.names[a]);
  }
  return s;
}

// The operand whose pieces travel: op(A) in the line form (rows whole, k split over C's column
// axes), op(B) in the column form (columns whole, k split over C's row axes). The caller's when
// it is already so (any block-cyclic map of k), else that dimension whole and k block-split.
Layout travelling(const Problem& p, const Layout& C, bool is_a) {
  const Layout& X = is_a ? p.A : p.B;
  const Op op = is_a ? p.opA : p.opB;
  const int kpos = is_a ? 1 : 0, whole = 1 - kpos;  // k's position in op(X), the other's
  const int k = stored_dim(op, kpos), kept = stored_dim(op, whole);
  if (X.map(kept).nprocs == 1 && !X.is_unreduced() && X.dim_axes(k) == C.dim_axes(kpos)) return X;
  ShardingSpec xs;
  xs.name = is_a ? "A" : "B";
  xs.dims[whole].label = is_a ? "I" : "J", xs.dims[kpos] = C.spec().dims[kpos];
  xs.dims[kpos].label = "K";
  xs.dims[kpos].kind = DimSpec::Kind::Block;
  return is_a ? stored_layout(op, p.mesh, p.m, p.k, xs) : stored_layout(op, p.mesh, p.k, p.n, xs);
}

// The grid form's operands: the caller's when its rows (op(A)) or columns (op(B)) are mapped as
// C's and its k is split over C's other axes (any block-cyclic map), else those rows or
// columns with k block-split over the other axes.
Layout grid_operand(const Problem& p, const Layout& C, bool is_a) {
  const Layout& X = is_a ? p.A : p.B;
  const Op op = is_a ? p.opA : p.opB;
  const int kd = is_a ? 1 : 0;  // op(X)'s k dimension
  const int k = stored_dim(op, kd), other = stored_dim(op, 1 - kd);
  if (!X.is_unreduced() && X.map(other) == C.map(1 - kd) && X.dim_axes(k) == C.dim_axes(kd))
    return X;
  const ShardingSpec& cs = C.spec();
  ShardingSpec xs;
  xs.name = is_a ? "A" : "B";
  xs.dims[1 - kd] = cs.dims[1 - kd];
  xs.dims[kd] = cs.dims[kd];
  xs.dims[kd].label = "K";
  xs.dims[kd].kind = DimSpec::Kind::Block;
  return is_a ? stored_layout(op, p.mesh, p.m, p.k, xs) : stored_layout(op, p.mesh, p.k, p.n, xs);
}

// The grid form's largest piece of k (pieces_of: what strassen_grid.cpp runs) and their count.
std::pair<index_t, int> grid_pieces(const Problem& p, const Setup& s) {
  const std::vector<Piece> pieces =
      pieces_of(s.A.map(stored_dim(p.opA, 1)), s.B.map(stored_dim(p.opB, 0)), p.k);
  index_t most = 0;
  for (const Piece& piece : pieces) most = std::max(most, piece.k);
  return {most, static_cast<int>(pieces.size())};
}

// Strassen's breadth-first step (strassen_caps.cpp): asked for (StrassenStep::BreadthFirst),
// or left open (Auto) on 7 Q ranks for a product whose smallest side reaches the crossover.
bool caps_step(const Problem& p, const Options& o) {
  const bool fits = winograd::caps_fits(p.mesh.size(), p.m, p.n, p.k);
  if (o.strassen_step == StrassenStep::BreadthFirst && !fits)
    throw NotSupported("strassen: the breadth-first step needs a multiple of 7 ranks, "
                       "m and n at least twice the ranks and k at least 2; got " +
                       std::to_string(p.mesh.size()) + " ranks for " + std::to_string(p.m) + "x" +
                       std::to_string(p.n) + "x" + std::to_string(p.k));
  if (o.strassen_step == StrassenStep::BreadthFirst) return true;
  return o.strassen_step == StrassenStep::Auto &&
         winograd::caps_by_rule(p.mesh.size(), p.m, p.n, p.k, strassen_crossover(o));
}

// The breadth-first step takes the caller's operands as they are and puts alpha op(A) op(B) +
// beta C into C's layout itself (C's default one when C holds partial sums).
Setup caps_setup(const Problem& p, const Options& o) {
  Setup s;
  s.algorithm = Algorithm::Strassen;
  s.A = p.A, s.B = p.B;
  s.C = p.C.is_unreduced() ? Layout(p.mesh, p.m, p.n, default_spec(p.mesh)) : p.C;
  const int Q = p.mesh.size() / winograd::kCapsGroups;
  s.own = StrassenSetup{StrassenSetup::Form::BreadthFirst, 1, Q};
  s.grid = "1x" + std::to_string(Q) + "x7";
  // The first step's groups' products, transposed: n1 x m1 x k1, m1 and n1 padded to
  // multiples of P; further steps by the default rule; the last groups of q ranks run the
  // column form there (local products of n/q x m x k/q), one rank one recursion.
  int q = Q;
  index_t m = winograd::caps_half(p.n, p.mesh.size()), n = winograd::caps_half(p.m, p.mesh.size()),
          k = (p.k + 1) / 2;
  const index_t crossover = strassen_crossover(o);
  int steps = 1;
  while (winograd::caps_by_rule(q, m, n, k, crossover)) {  // each step transposes again
    const index_t m_next = winograd::caps_half(n, q), n_next = winograd::caps_half(m, q);
    m = m_next, n = n_next, k = (k + 1) / 2, q /= winograd::kCapsGroups, ++steps;
  }
  const index_t m_local = (m + q - 1) / q, k_local = (k + q - 1) / q;
  const auto dims = [](index_t a, index_t b, index_t c) {
    return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c);
  };
  s.detail =
      std::to_string(steps) + "+" +
      std::to_string(winograd::levels(m_local, n, k_local, crossover)) +
      " Winograd level(s): " + std::to_string(steps) +
      " breadth-first step(s) (CAPS), then products of " + dims(m, n, k) + " on " +
      std::to_string(p.mesh.size() / q) + " groups of " + std::to_string(q) + " rank(s), each " +
      (q > 1 ? "Strassen's column form there (local products " + dims(m_local, n, k_local) + ")"
             : std::string("one local recursion")) +
      " (crossover " + std::to_string(crossover) + "), C " + s.C.spec().to_string();
  return s;
}

}  // namespace

index_t strassen_crossover(const Options& o) {
  return o.fast_crossover > 0 ? o.fast_crossover : winograd::kDefaultCrossover;
}

Setup strassen_setup(const Problem& p, const Options& o) {
  if (caps_step(p, o)) return caps_setup(p, o);
  Setup s;
  s.algorithm = Algorithm::Strassen;
  const ShardingSpec cs = tiles_every_rank(p.C) ? p.C.spec() : default_spec(p.mesh);
  s.C = Layout(p.mesh, p.m, p.n, cs);
  ShardingSpec as, bs;
  as.name = "A", bs.name = "B";
  as.dims[0] = cs.dims[0], as.dims[1].label = "K";  // k whole (replicated)
  bs.dims[1] = cs.dims[1], bs.dims[0].label = "K";
  s.A = stored_layout(p.opA, p.mesh, p.m, p.k, as);
  s.B = stored_layout(p.opB, p.mesh, p.k, p.n, bs);
  const int pm = s.C.row_map().nprocs, pn = s.C.col_map().nprocs;
  const bool line = pm == 1 && pn > 1, column = pn == 1 && pm > 1;
  const bool grid = pm > 1 && pn > 1;
  using Form = StrassenSetup::Form;
  s.own = StrassenSetup{line     ? Form::Line
                        : column ? Form::Column
                        : grid   ? Form::Grid
                                 : Form::Local,
                        pm, pn};
  if (line) s.A = travelling(p, s.C, true);     // op(A)'s pieces travel
  if (column) s.B = travelling(p, s.C, false);  // op(B)'s pieces
  if (grid) s.A = grid_operand(p, s.C, true), s.B = grid_operand(p, s.C, false);
  const index_t crossover = strassen_crossover(o);
  const index_t ml = widest(s.C.row_map()), nl = widest(s.C.col_map());
  const DimMap& kmap = column ? s.B.map(stored_dim(p.opB, 0)) : s.A.map(stored_dim(p.opA, 1));
  const auto [kg, pieces] = grid ? grid_pieces(p, s) : std::pair<index_t, int>{p.k, 1};
  const index_t kl = line || column ? widest(kmap) : kg;
  // Two ranks with equal pieces: one product over both (what the largest tile does).
  const int pair = line && pn == 2 ? winograd::pair_levels(ml, nl, kmap.local_extent(0),
                                                           kmap.local_extent(1), crossover)
                                   : 0;
  const int products = line ? pn : column ? pm : pieces;
  s.grid = std::to_string(pm) + "x" + std::to_string(pn);
  s.detail = std::to_string(pair ? pair : winograd::levels(ml, nl, kl, crossover)) +
             " Winograd level(s) on " +
             (pair            ? std::string("one local product over both pieces ")
              : products == 1 ? std::string("the local product ")
                              : std::to_string(products) + " local products ") +
             std::to_string(ml) + "x" + std::to_string(nl) + "x" + std::to_string(pair ? p.k : kl) +
             " (crossover " + std::to_string(crossover) +
             (line     ? "), op(A)'s pieces sent round the line"
              : column ? "), op(B)'s pieces sent down the column"
              : grid   ? "), op(A)'s and op(B)'s pieces broadcast along the grid"
                       : ")") +
             ", C " + s.C.spec().to_string();
  return s;
}

template <Scalar T>
void strassen_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t,
                  SubProduct<T> group_product) {
  switch (setup.as<StrassenSetup>().form) {
    case StrassenSetup::Form::BreadthFirst: return strassen_caps_run(x, o, t, group_product);
    case StrassenSetup::Form::Line: return strassen_ring_run(x, RingForm::AllGatherA, o, t);
    case StrassenSetup::Form::Column: return strassen_ring_run(x, RingForm::AllGatherB, o, t);
    case StrassenSetup::Form::Grid: return strassen_grid_run(x, o, t);
    case StrassenSetup::Form::Local: break;  // one rank's recursion, below
  }
  const index_t m = x.C.local_rows(), n = x.C.local_cols();
  const index_t k = x.opA == Op::N ? x.A.cols() : x.A.rows();
  const int L = winograd::levels(m, n, k, strassen_crossover(o));
  T* work = nullptr;
  prologue(x.C.mesh().comm(),
           [&] { work = memory::get<T>(memory::Slot::Partial, winograd::scratch(m, n, k, L)); });
  t.timed(&Timers::gemm, "gemm", 0, [&] {
    winograd_gemm(x.opA, x.opB, m, n, k, x.alpha, x.A.data(), x.A.ld(), x.B.data(), x.B.ld(),
                  x.beta, x.C.data(), x.C.ld(), L, work);
  });
}

#define SHARDMM_INSTANTIATE(T)                                                             \
  template void strassen_run<T>(const Operands<T>&, const Setup&, const Options&, Timers&, \
                                SubProduct<T>);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
