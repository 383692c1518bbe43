// Search of the sharding-rule plan (sharded_plan.hpp): every combination of row, contraction
// and column groups (I', K', J') built from the operands' and C's groups, priced with the
// redistribution patterns' exact words, the busiest rank's local flops and the memory the run
// takes (sharded.cpp: gathered operands stream piece by piece past the product when one
// gather can, a ReduceScatter runs fused with the product, block by block).
#include "algo/sharded_plan.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include "algo/sharded_steps.hpp"
#include "matrix/redistribute_plan.hpp"
#include "shardmm/error.hpp"

namespace shardmm::algo::sharded {
namespace {

// Cost weights of the search, from the default machine profile (f64: 4e9 B/s, 30 GFLOP/s;
// f32 halves both the bytes and the time per flop, so the ratio holds). Words and flops
// only: the guide's rule (move the smaller of operand and result) also for small matrices;
// messages break ties after memory.
constexpr double kSecondsPerWord = 8.0 / 4e9, kSecondsPerFlop = 1 / 30e9;

using Axes = std::vector<int>;

// The dimension spec `d` of L with its axes `keep` (a contiguous run of L's group) and block
// size `nb` (0: replicated).
DimSpec dim_spec(const Layout& L, int d, const Axes& keep, index_t nb) {
  DimSpec s;
  s.label = L.spec().dims[d].label;
  if (keep.empty()) return s;
  s.kind = DimSpec::Kind::BlockCyclic;
  s.nb = std::max<index_t>(nb, 1);
  for (int a : keep) s.axes.push_back(L.mesh().names[a]);
  return s;
}

// Dimension d of L as it is and with axes gathered away: a suffix (the kept axes' blocks
// merge: nb grows by the dropped axes' size) or a prefix (the kept axes keep their blocks).
std::vector<DimSpec> variants(const Layout& L, int d) {
  std::vector<DimSpec> out{L.spec().dims[d]};
  const Axes& g = L.dim_axes(d);
  const index_t nb = L.map(d).nb;
  index_t merged = nb;
  for (std::size_t s = 1; s <= g.size(); ++s) {
    merged *= L.mesh().sizes[g[g.size() - s]];
    out.push_back(
        dim_spec(L, d, Axes(g.begin(), g.end() - static_cast<std::ptrdiff_t>(s)), merged));
  }
  for (std::size_t s = 1; s < g.size(); ++s)
    out.push_back(dim_spec(L, d, Axes(g.begin() + static_cast<std::ptrdiff_t>(s), g.end()), nb));
  return out;
}

Axes axes_of(const MeshShape& mesh, const DimSpec& s) {
  Axes out;
  for (const auto& n : s.axes) out.push_back(mesh.axis_index(n));
  return out;
}

bool disjoint(const Axes& a, const Axes& b) {
  return std::none_of(a.begin(), a.end(),
                      [&](int x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

// One move priced: words per rank, the busiest rank's messages, and the memory it takes.
struct Move {
  matrix::RedistPlan plan;
  std::vector<double> words;
  double tile = 0;  // largest destination tile
};

Move price(const Layout& from, const Layout& to) {
  Move m;
  m.plan = matrix::plan_redistribution(from, to);
  m.words = matrix::received_words(from, to, m.plan);
  m.tile = largest_tile(to);
  return m;
}

std::string describe(const char* name, const Move& m, const Layout& from, const Layout& to) {
  std::string s = std::string(name) + ": ";
  if (from.same_distribution(to)) return s + "stays";
  const bool slice = m.plan.pattern == matrix::Pattern::Local;
  return s + (slice ? "slice" : m.plan.to_string(to.mesh())) + " -> " + to.spec().to_string();
}

struct Scored {
  Plan plan;
  double seconds = 0;
};

// Prices one choice of (I', K', J'); false when the axes collide.
bool score(const Problem& p, const DimSpec& I, const DimSpec& K, const DimSpec& J, Scored& out) {
  const MeshShape& mesh = p.mesh;
  const Axes ia = axes_of(mesh, I), ka = axes_of(mesh, K), ja = axes_of(mesh, J);
  if (!disjoint(ia, ka) || !disjoint(ia, ja) || !disjoint(ka, ja)) return false;
  ShardingSpec sa = p.A.spec(), sb = p.B.spec(), sp;
  sa.unreduced.clear(), sb.unreduced.clear();
  const int da = stored_dim(p.opA, 1), db = stored_dim(p.opB, 0);
  auto labelled = [](DimSpec s, const DimSpec& as) {
    s.label = as.label;
    return s;
  };
  sa.dims[1 - da] = labelled(I, sa.dims[1 - da]), sa.dims[da] = labelled(K, sa.dims[da]);
  sb.dims[db] = labelled(K, sb.dims[db]), sb.dims[1 - db] = labelled(J, sb.dims[1 - db]);
  sp.name = p.C.spec().name;
  sp.dims = {I, J};
  sp.dims[0].label = p.C.spec().dims[0].label, sp.dims[1].label = p.C.spec().dims[1].label;
  sp.unreduced = K.axes;
  Plan& plan = out.plan;
  plan.A = Layout(mesh, p.A.rows(), p.A.cols(), sa);
  plan.B = Layout(mesh, p.B.rows(), p.B.cols(), sb);
  plan.P = Layout(mesh, p.m, p.n, sp);
  const Move ma = price(p.A, plan.A), mb = price(p.B, plan.B), mp = price(plan.P, p.C);
  plan.words = 0;
  for (std::size_t r = 0; r < ma.words.size(); ++r)
    plan.words = std::max(plan.words, ma.words[r] + mb.words[r] + mp.words[r]);
  plan.messages = matrix::messages(ma.plan) + matrix::messages(mb.plan) + matrix::messages(mp.plan);
  // The busiest rank's product: its P tile (only C's part of it when C's tile is a slice of
  // P's or P is all-reduced) times its share of k.
  plan.flops = 0;
  const DimMap& kmap = plan.A.map(da);
  const bool part =
      mp.plan.pattern == matrix::Pattern::Local || mp.plan.pattern == matrix::Pattern::AllReduce;
  const Layout& computed = part ? p.C : plan.P;
  for (int r = 0; r < mesh.size(); ++r) {
    const auto c = mesh.coords_of(r);
    const double kl = double(kmap.local_extent(plan.A.dim_coord(da, c)));
    plan.flops = std::max(plan.flops,
                          2 * double(computed.local_rows(c)) * double(computed.local_cols(c)) * kl);
  }
  // Memory (sharded.cpp): a slice is a view; a gathered operand takes its gathered tile, or
  // two pieces when it streams (the larger gathered one, unless P reduce-scatters into C); a
  // product that is not C takes its tile (a fused ReduceScatter: two of C's widest blocks);
  // any other move its destination plus the exchange's buffers.
  using matrix::Pattern;
  const bool fused = mp.plan.pattern == Pattern::ReduceScatter;
  auto gathered = [](const Move& m) { return m.plan.pattern == Pattern::AllGather; };
  const bool stream_a = !fused && gathered(ma) && (!gathered(mb) || ma.tile >= mb.tile);
  const bool stream_b = !fused && gathered(mb) && !stream_a;
  auto held = [](const Move& m, bool streams, double from) {
    switch (m.plan.pattern) {
      case Pattern::Local: return 0.0;
      case Pattern::AllGather: return streams ? 2 * from : m.tile;  // the widest piece twice
      default: return m.tile + from + m.tile;                       // destination, Pack, Unpack
    }
  };
  // The product: nothing when it is C; two blocks for a fused ReduceScatter; its tile,
  // summed in place, for an AllReduce; else its tile and the exchange's buffers.
  const double pt = largest_tile(plan.P);
  const double product = plan.P.same_distribution(p.C)           ? 0.0
                         : fused                                 ? 2 * largest_tile(p.C)
                         : mp.plan.pattern == Pattern::AllReduce ? pt
                                                                 : pt + pt + mp.tile;
  plan.memory =
      held(ma, stream_a, largest_tile(p.A)) + held(mb, stream_b, largest_tile(p.B)) + product;
  const std::vector<double>* streamed = stream_a ? &ma.words : stream_b ? &mb.words : nullptr;
  plan.streamed = streamed == nullptr || streamed->empty()
                      ? 0.0
                      : *std::max_element(streamed->begin(), streamed->end());
  plan.detail = "sharding rules: " + describe("A", ma, p.A, plan.A) + "; " +
                describe("B", mb, p.B, plan.B) + "; product " + plan.P.spec().to_string() +
                (plan.P.same_distribution(p.C) ? " = C" : ", " + describe("to C", mp, plan.P, p.C));
  out.seconds = plan.words * kSecondsPerWord + plan.flops * kSecondsPerFlop;
  return true;
}

bool better(const Scored& a, const Scored& b) {
  const double tol = 1e-12 * std::max(a.seconds, b.seconds);
  if (a.seconds < b.seconds - tol) return true;
  if (a.seconds > b.seconds + tol) return false;
  if (a.plan.memory != b.plan.memory) return a.plan.memory < b.plan.memory;
  return a.plan.messages < b.plan.messages;
}

Plan search(const Problem& p) {
  const int da = stored_dim(p.opA, 1), db = stored_dim(p.opB, 0);
  auto rows = variants(p.A, 1 - da), cols = variants(p.B, 1 - db);
  rows.push_back(p.C.spec().dims[0]);
  cols.push_back(p.C.spec().dims[1]);
  auto ks = variants(p.A, da);
  for (const DimSpec& s : variants(p.B, db)) ks.push_back(s);
  ks.emplace_back();  // k whole on every rank
  std::optional<Scored> best;
  for (const DimSpec& I : rows)
    for (const DimSpec& J : cols)
      for (const DimSpec& K : ks) {
        Scored s;
        if (score(p, I, K, J, s) && (!best || better(s, *best))) best = std::move(s);
      }
  // I', J' and K' all replicated always fit, so some candidate scored.
  if (!best) throw Error("sharded plan: no layout fits the product");
  return best->plan;
}

std::string key(const Problem& p) {
  return to_string(p.opA) + to_string(p.opB) + p.A.to_string() + "|" + p.B.to_string() + "|" +
         p.C.to_string() + "|" + p.mesh.to_string();
}

}  // namespace

Layout as_block(const Layout& L) {
  ShardingSpec s = L.spec();
  for (int d = 0; d < 2; ++d) {
    auto& dim = s.dims[d];
    if (dim.kind == DimSpec::Kind::Replicated) continue;
    dim = DimSpec{dim.label, DimSpec::Kind::Block, {}, 0, 0};
    for (int a : L.dim_axes(d)) dim.axes.push_back(L.mesh().names[a]);
  }
  s.unreduced.clear();
  for (int a : L.unreduced_axes()) s.unreduced.push_back(L.mesh().names[a]);
  return Layout(L.mesh(), L.rows(), L.cols(), s);
}

Plan plan_product(const Problem& caller) {
  Problem p = caller;
  p.A = as_block(caller.A), p.B = as_block(caller.B), p.C = as_block(caller.C);
  static std::mutex lock;
  static std::map<std::string, Plan> cache;
  const std::scoped_lock hold(lock);
  const std::string k = key(p);
  auto it = cache.find(k);
  if (it != cache.end()) return it->second;
  if (cache.size() > 256) cache.clear();
  return cache.emplace(k, search(p)).first->second;
}

}  // namespace shardmm::algo::sharded
