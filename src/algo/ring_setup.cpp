// The ring's layouts (ring_setup): which axis X it runs along, which form (AllGatherA,
// AllGatherB, ReduceScatter) and the stored layouts of A, B and C. Pure: nothing moves.
// The split along X may be block, cyclic or block-cyclic: ring_setup keeps the caller's own
//   split (a ScaLAPACK 1 x P or P x 1 layout runs without redistribution).
// p = 2, AllGather forms: the other operand split along k is taken as the caller holds it
//   (op(B) [K_X, J] for AG-A) when its k split is X's: its rows for each rank's C columns
//   travel with the chunks (SplitStream, ring_swap.cpp) instead of it being re-split first.
#include <optional>

#include "algo/ring.hpp"

namespace shardmm::algo {
namespace {

using ring_detail::ag_pass, ring_detail::rs_pass, ring_detail::splitting;

DimSpec over(const std::string& label, const std::string& axis) {
  return DimSpec{label, DimSpec::Kind::Block, {axis}, 0, 0};
}
DimSpec whole(const std::string& label) {
  return DimSpec{label, DimSpec::Kind::Replicated, {}, 0, 0};
}

// The caller's own spec for op(X)'s dim `op_dim` when it is split over axis X alone (any block
// size: block, cyclic, block-cyclic) and op(X)'s other dim is whole; else nothing.
std::optional<DimSpec> caller_split(const Layout& L, Op op, int op_dim, int axis,
                                    const std::string& label) {
  const int d = stored_dim(op, op_dim);
  if (L.is_unreduced() || splitting(L, d) != std::vector<int>{axis} || !splitting(L, 1 - d).empty())
    return std::nullopt;
  DimSpec s = L.spec().dims[d];
  s.label = label;
  s.axes = {L.mesh().names[axis]};  // size-1 axes dropped: same map, same coordinate
  return s;
}

// The axis to run along: Options::ring_axis, else the only mesh axis longer than 1 (a 1 x P
// grid is a line), else the first axis of a 1D mesh or of a one-rank mesh. On a mesh with
// several axes longer than 1 and no axis asked: the longest (the most ranks share the work;
// the other axes hold replicas), the first of equals. From the shape alone: every rank agrees.
std::string ring_axis(const MeshShape& mesh, const std::string& asked) {
  if (!asked.empty()) return mesh.names[mesh.axis_index(asked)];
  const std::vector<int> long_axes = mesh.long_axes();
  if (long_axes.empty()) return mesh.names[0];
  int best = long_axes[0];
  for (int a : long_axes)
    if (mesh.sizes[a] > mesh.sizes[best]) best = a;
  return mesh.names[best];
}

// Why this axis, for Setup::detail: said only where the ring chose among several long axes.
std::string axis_note(const MeshShape& mesh, const std::string& asked, const std::string& axis) {
  if (!asked.empty() || mesh.long_axes().size() < 2) return "";
  return "; axis " + axis + " chosen as the longest of mesh " + mesh.to_string() +
         " (set Options::ring_axis / --ring-axis to choose), replicated over the others";
}

// The passes a ring longer than 2 runs in, for Setup::detail ("" when one): over C's unsplit
// columns (rows) for the reduce-scatter form's sums (rs_pass), over k for the AllGather forms'
// tiles (ag_pass). From global extents: every rank says the same.
std::string passes_note(const Problem& p, const Setup& setup, RingForm form, int size,
                        index_t ring_chunk) {
  if (size <= 2) return "";
  auto note = [](index_t all, index_t w, const char* of) {
    return w >= all ? std::string()
                    : " in " + std::to_string((all + w - 1) / w) + " passes of " +
                          std::to_string(w) + of;
  };
  if (form == RingForm::ReduceScatter) {
    const int cd = splitting(setup.C, 0).empty() ? 1 : 0;
    return note(cd == 0 ? p.n : p.m, rs_pass(setup.C, cd, p.k, size, ring_chunk),
                cd == 0 ? " columns" : " rows");
  }
  const bool ag_a = form == RingForm::AllGatherA;
  const bool k_col = ag_a ? p.opA == Op::N : p.opB != Op::N;
  const DimMap& map = (ag_a ? setup.A : setup.B).map(k_col ? 0 : 1);
  return note(p.k, ag_pass(map, p.m, p.n, p.k, size, ring_chunk), " of k");
}

// At p = 2 an AllGather form takes the non-circulating operand Y as the caller holds it when
// op(Y)'s k (logical dim `kd`) is split over X: its rows (AG-A) or columns (AG-B) travel with
// the circulating chunks (SplitStream in ring_swap.cpp) instead of Y being re-split first.
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
  RingSetup ring;
  ring.axis = ring_axis(p.mesh, o.ring_axis);
  const std::string& X = ring.axis;
  const int x = p.mesh.axis_index(X);
  ring.form = pick_form(p, o.ring_form);
  auto either = [&](const std::optional<DimSpec>& first, const std::optional<DimSpec>& second,
                    const std::string& label) {
    return first ? *first : second ? *second : over(label, X);
  };
  ShardingSpec a, b, c;
  if (ring.form == RingForm::ReduceScatter) {
    auto ka = caller_split(p.A, p.opA, 1, x, "K"), kb = caller_split(p.B, p.opB, 0, x, "K");
    const DimSpec K = p.m >= p.n ? either(ka, kb, "K") : either(kb, ka, "K");
    a.dims = {whole("I"), K};
    b.dims = {K, whole("J")};
    const auto ci = caller_split(p.C, Op::N, 0, x, "I"), cj = caller_split(p.C, Op::N, 1, x, "J");
    c.dims = ci   ? std::array<DimSpec, 2>{*ci, whole("J")}
             : cj ? std::array<DimSpec, 2>{whole("I"), *cj}
                  : std::array<DimSpec, 2>{over("I", X), whole("J")};
    setup.detail = "matmul-reducescatter: partial C blocks circulate";
  } else if (ring.form == RingForm::AllGatherA) {
    const DimSpec I = either(caller_split(p.A, p.opA, 0, x, "I"), std::nullopt, "I");
    auto jc = caller_split(p.C, Op::N, 1, x, "J"), jb = caller_split(p.B, p.opB, 1, x, "J");
    const DimSpec J = p.m >= p.k ? either(jc, jb, "J") : either(jb, jc, "J");
    a.dims = {I, whole("K")};
    b.dims = {whole("K"), J};
    c.dims = {whole("I"), J};
    setup.detail = "allgather-matmul: A row blocks circulate";
    if (auto kb = streamed(p, p.B, p.opB, 0, x); kb && !jb) {  // op(B) = [K_X, J] as it is
      b.dims = {*kb, whole("J")};
      ring.stream = true;
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
      ring.stream = true;
      setup.detail += ", op(A)'s columns streamed with them";
    }
  }
  setup.A = stored_layout(p.opA, p.mesh, p.m, p.k, a);
  setup.B = stored_layout(p.opB, p.mesh, p.k, p.n, b);
  setup.C = Layout(p.mesh, p.m, p.n, c);
  setup.detail += passes_note(p, setup, ring.form, p.mesh.sizes[x], o.ring_chunk);
  setup.detail += axis_note(p.mesh, o.ring_axis, X);
  setup.grid = "ring over " + X + " (" + std::to_string(p.mesh.sizes[x]) + ")";
  setup.own = std::move(ring);
  return setup;
}

}  // namespace shardmm::algo
