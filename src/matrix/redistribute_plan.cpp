// Classification of a redistribution by the roles of the mesh axes (redistribute_plan.hpp),
// and its words per rank, from the per-dimension overlap of the two layouts' maps.
#include "matrix/redistribute_plan.hpp"

#include <algorithm>
#include <array>

namespace shardmm::matrix {
namespace {

enum class Role { Rows, Cols, Unreduced, Replica };

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

Role role(const Layout& L, int a) {
  if (contains(L.dim_axes(0), a)) return Role::Rows;
  if (contains(L.dim_axes(1), a)) return Role::Cols;
  if (contains(L.unreduced_axes(), a)) return Role::Unreduced;
  return Role::Replica;
}

// Coordinate along axis `a` of the cell whose coordinate along dimension d's axes is c.
int axis_coord(const Layout& L, int d, int c, int a) {
  const auto& axes = L.dim_axes(d);
  for (std::size_t i = axes.size(); i-- > 0;) {  // minor axis first
    const int size = L.mesh().sizes[axes[i]];
    if (axes[i] == a) return c % size;
    c /= size;
  }
  return 0;
}

// Index ranges [begin, end) of one dimension on which both maps keep one owner each.
struct Segment {
  index_t begin, end;
  int s, t;  // source and destination coordinates along the dimension
};

std::vector<Segment> joint(const DimMap& s, const DimMap& t) {
  std::vector<index_t> cuts{0, s.extent};
  for (const DimMap* m : {&s, &t})
    for (int p = 0; p < m->nprocs; ++p)
      for (auto [b, e] : m->owned_ranges(p)) cuts.push_back(b), cuts.push_back(e);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<Segment> out;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
    if (cuts[i] < cuts[i + 1] && cuts[i + 1] <= s.extent)
      out.push_back({cuts[i], cuts[i + 1], s.owner(cuts[i]), t.owner(cuts[i])});
  return out;
}

// Axis a (a row or column axis of dimension d in both layouts) gives every index the same
// coordinate in both.
bool same_coords(const Layout& src, const Layout& dst, int d, int a,
                 const std::vector<Segment>& segments) {
  return std::all_of(segments.begin(), segments.end(), [&](const Segment& g) {
    return axis_coord(src, d, g.s, a) == axis_coord(dst, d, g.t, a);
  });
}

// The overlap of every source tile with every destination tile: a count matrix per dimension
// (indices owned by source coordinate s and destination coordinate t).
class Flow {
 public:
  Flow(const Layout& src, const Layout& dst) : src_(src), dst_(dst) {
    for (int d = 0; d < 2; ++d) {
      tn_[d] = dst.map(d).nprocs;
      cnt_[d].assign(static_cast<std::size_t>(src.map(d).nprocs) * tn_[d], 0.0);
      for (const Segment& g : joint(src.map(d), dst.map(d)))
        cnt_[d][static_cast<std::size_t>(g.s) * tn_[d] + g.t] += double(g.end - g.begin);
    }
    const int P = src.mesh().size();
    for (int r = 0; r < P; ++r) {
      const auto cs = src.mesh().coords_of(r), cd = dst.mesh().coords_of(r);
      sc_.push_back({src.dim_coord(0, cs), src.dim_coord(1, cs)});
      dc_.push_back({dst.dim_coord(0, cd), dst.dim_coord(1, cd)});
    }
  }
  // Elements of rank r's source tile that rank q's destination tile holds.
  [[nodiscard]] double overlap(int r, int q) const {
    double o = 1;
    for (int d = 0; d < 2; ++d)
      o *= cnt_[d][static_cast<std::size_t>(sc_[r][d]) * tn_[d] + dc_[q][d]];
    return o;
  }
  [[nodiscard]] double dst_tile(int q) const {
    const auto c = dst_.mesh().coords_of(q);
    return double(dst_.local_rows(c)) * double(dst_.local_cols(c));
  }

 private:
  const Layout& src_;
  const Layout& dst_;
  std::array<int, 2> tn_{};
  std::array<std::vector<double>, 2> cnt_;
  std::vector<std::array<int, 2>> sc_, dc_;
};

Pattern classify(const Layout& src, const Layout& dst, const std::vector<int>& axes) {
  auto split = [](Role r) { return r == Role::Rows || r == Role::Cols; };
  bool gather = true, all_to_all = true, scatter = true, reduce = true;
  for (int a : axes) {
    const Role from = role(src, a), to = role(dst, a);
    gather = gather && split(from) && to == Role::Replica;
    all_to_all = all_to_all && split(from) && split(to);
    scatter = scatter && from == Role::Unreduced && split(to);
    reduce = reduce && from == Role::Unreduced && to == Role::Replica;
  }
  return gather       ? Pattern::AllGather
         : all_to_all ? Pattern::AllToAll
         : scatter    ? Pattern::ReduceScatter
         : reduce     ? Pattern::AllReduce
                      : Pattern::General;
}

// An AllToAll that moves whole tiles: every rank's destination tile is its own or comes from
// one other rank, and every rank sends to at most one.
bool is_permutation(const Layout& src, const Layout& dst, const std::vector<int>& axes) {
  const Flow f(src, dst);
  const MeshShape& mesh = src.mesh();
  for (int q = 0; q < mesh.size(); ++q) {
    const double own = f.overlap(q, q);
    if (own != 0 && own != f.dst_tile(q)) return false;
    int from = 0, to = 0;
    for (int v : group_members(mesh, mesh.coords_of(q), axes)) {
      if (v == q) continue;
      from += f.overlap(v, q) > 0 ? 1 : 0;
      to += f.overlap(q, v) > 0 ? 1 : 0;
    }
    if (from > 1 || to > 1) return false;
  }
  return true;
}

bool same_on(const std::vector<int>& a, const std::vector<int>& b, const std::vector<int>& axes) {
  return std::all_of(axes.begin(), axes.end(), [&](int x) { return a[x] == b[x]; });
}

}  // namespace

std::string to_string(Pattern p) {
  switch (p) {
    case Pattern::Local: return "Local";
    case Pattern::AllGather: return "AllGather";
    case Pattern::AllToAll: return "AllToAll";
    case Pattern::Permute: return "Permute";
    case Pattern::ReduceScatter: return "ReduceScatter";
    case Pattern::AllReduce: return "AllReduce";
    case Pattern::General: break;
  }
  return "General";
}

std::string RedistPlan::to_string(const MeshShape& mesh) const {
  std::string s = matrix::to_string(pattern);
  if (across_meshes) return s + " across meshes";
  if (axes.empty()) return s;
  s += " over {";
  for (std::size_t i = 0; i < axes.size(); ++i) s += (i ? "," : "") + mesh.names[axes[i]];
  return s + "}";
}

std::vector<int> group_members(const MeshShape& mesh, const std::vector<int>& coords,
                               const std::vector<int>& axes) {
  std::vector<int> out{mesh.rank_of(coords)};
  std::vector<int> c = coords;
  for (int a : axes) {  // first axis major: each later axis refines every member so far
    std::vector<int> next;
    for (int r : out) {
      c = mesh.coords_of(r);
      for (int x = 0; x < mesh.sizes[a]; ++x) {
        c[a] = x;
        next.push_back(mesh.rank_of(c));
      }
    }
    out = std::move(next);
  }
  return out;
}

RedistPlan plan_redistribution(const Layout& src, const Layout& dst) {
  RedistPlan plan;
  const MeshShape& mesh = src.mesh();
  if (!(mesh == dst.mesh())) {
    plan.across_meshes = true;
    plan.group = mesh.size();
    for (int a = 0; a < mesh.ndims(); ++a) plan.axes.push_back(a);
    return plan;
  }
  std::array<std::vector<Segment>, 2> seg{joint(src.map(0), dst.map(0)),
                                          joint(src.map(1), dst.map(1))};
  bool new_unreduced =
      false;  // the destination holds partial sums along an axis the source does not
  for (int a : mesh.long_axes()) {
    const Role from = role(src, a), to = role(dst, a);
    new_unreduced = new_unreduced || (to == Role::Unreduced && from != Role::Unreduced);
    const int d = from == Role::Rows ? 0 : 1;
    const bool split = from == Role::Rows || from == Role::Cols;
    const bool stable = from == to && (!split || same_coords(src, dst, d, a, seg[d]));
    if (stable || from == Role::Replica) continue;  // stable, or a slice axis
    plan.axes.push_back(a);
    plan.group *= mesh.sizes[a];
  }
  if (plan.axes.empty()) {
    plan.pattern = Pattern::Local;
    return plan;
  }
  plan.pattern = new_unreduced ? Pattern::General : classify(src, dst, plan.axes);
  if (plan.pattern == Pattern::AllToAll && is_permutation(src, dst, plan.axes))
    plan.pattern = Pattern::Permute;
  return plan;
}

std::vector<double> received_words(const Layout& src, const Layout& dst, const RedistPlan& plan) {
  const MeshShape& ms = src.mesh();
  const int P = ms.size();
  std::vector<double> out(static_cast<std::size_t>(P), 0.0);
  if (plan.pattern == Pattern::Local) return out;
  const Flow f(src, dst);
  const auto replicas = src.replica_axes();
  std::vector<std::vector<int>> coords;  // of every rank, once: the loops below are P x group
  coords.reserve(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) coords.push_back(ms.coords_of(r));
  for (int q = 0; q < P; ++q) {
    const auto& cq = coords[static_cast<std::size_t>(q)];
    std::vector<int> members;
    if (plan.across_meshes)
      for (int r = 0; r < P; ++r) members.push_back(r);
    else members = group_members(ms, cq, plan.axes);
    double& w = out[static_cast<std::size_t>(q)];
    if (plan.pattern == Pattern::AllReduce) {
      w = 2 * f.dst_tile(q) * double(plan.group - 1) / double(plan.group);
      continue;
    }
    if (plan.pattern == Pattern::ReduceScatter) {  // a ring: every block but the predecessor's
      const auto me = std::find(members.begin(), members.end(), q) - members.begin();
      const auto g = static_cast<std::ptrdiff_t>(members.size());
      for (std::ptrdiff_t j = 0; j < g; ++j)
        if (j != (me + g - 1) % g) w += f.dst_tile(members[static_cast<std::size_t>(j)]);
      continue;
    }
    // Exchanges: from every designated holder in the group but this rank itself. Destination
    // cells with a nonzero coordinate along an axis where only the destination holds partial
    // sums receive nothing.
    const auto dq = dst.mesh().coords_of(q);
    bool receives = true;
    for (int a : dst.unreduced_axes())
      if (plan.across_meshes || !contains(src.unreduced_axes(), a))
        receives = receives && dq[a] == 0;
    if (!receives) continue;
    for (int v : members)
      if (v != q && same_on(coords[static_cast<std::size_t>(v)], cq, replicas))
        w += f.overlap(v, q);
  }
  return out;
}

std::vector<double> received_words(const Layout& src, const Layout& dst) {
  return received_words(src, dst, plan_redistribution(src, dst));
}

double max_received_words(const Layout& src, const Layout& dst) {
  const auto w = received_words(src, dst);
  return w.empty() ? 0.0 : *std::max_element(w.begin(), w.end());
}

double messages(const RedistPlan& plan) {
  const double g = plan.group;
  switch (plan.pattern) {
    case Pattern::Local: return 0;
    case Pattern::Permute: return 1;
    case Pattern::AllReduce: return 2 * (g - 1);
    default: return g - 1;
  }
}

}  // namespace shardmm::matrix
