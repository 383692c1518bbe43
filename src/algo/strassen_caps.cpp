// Strassen's breadth-first step (CAPS, Ballard et al.; Algorithm::Strassen on P = 7 Q ranks):
// one Winograd level over the whole distributed product, its seven half-size products run at
// the same time, one per group of Q ranks, each with gemm's Strassen on its group (another
// breadth-first step when Q allows, else the column form, depth-first below). On the mesh
// {g: 7, q: Q} over the caller's ranks, what moves:
// 1. op(A) into rows block-cyclic(bm) over all P ranks, k whole, with m1 = bm P >= m / 2: row
//    i and row m1 + i of op(A) land on the same rank, so its quadrants line up tile by tile.
//    Each rank adds its rows of the seven left operands (A11, A12, S4, A22, S1, S2, S3),
//    stacked and transposed, and one exchange sends product g's to group g, k split over q.
//    Quadrants are zero-padded to m1 x k1 (k1 = ceil(k / 2)).
// 2. op(B) likewise by columns (bn, n1 = bn P): the right operands (B11, B21, B22, T4, T1, T2,
//    T3) as they are, columns split over q.
// 3. Group g multiplies its pair transposed, M_g^T = T_g^T S_g^T, on its Q ranks as a product
//    of its own, planned by the front end (SubProduct: rows of M_g^T split over q, the column
//    form's layouts, so nothing more moves in); a group of one rank runs one local recursion
//    that overwrites the pair (winograd_gemm_overwriting: its first level takes no scratch).
// 4. The seven products come back row-aligned as in 1; each rank adds its rows of C's
//    quadrants (C11 = M1 + M2, C12 = M1 + M6 + M5 + M3, C21 = M1 + M6 + M7 - M4,
//    C22 = M1 + M6 + M7 + M5) and one redistribution takes alpha times them, plus beta C, into
//    the caller's C.
// Memory: one buffer of three regions (winograd::caps_regions), each region reused by the
// step's phases; the redistributions' Pack and Unpack buffers are lent the regions free at the
// time (memory::Lend). At Q = 1 every exchange of stacked pieces reads and writes in place.
// The peak is the group's pair and product, 7/4 of a rank's share of A, B and C, plus what the
// alignment of B takes beyond a quadrant and the group's recursion below its first level. The
// outermost step takes the buffer from the pool (slot StagedA0), a step inside a group's product
// owns its own. Words per rank: moving A, B, C once each, and (mk + kn + mn) 7 / (4 P) for the
// stacks, plus the groups' own products.
#include <optional>
#include <vector>

#include "algo/algo.hpp"
#include "algo/strassen.hpp"
#include "algo/strassen_caps_forms.hpp"
#include "algo/strassen_winograd.hpp"
#include "comm/agree.hpp"
#include "comm/traffic.hpp"
#include "memory/workspace.hpp"
#include "shardmm/redistribute.hpp"

namespace shardmm::algo {
namespace {

using caps::Shape;
using Kind = DimSpec::Kind;
constexpr int kGroups = winograd::kCapsGroups;

DimSpec caps_dim(const char* label, Kind kind, std::vector<std::string> axes = {}, index_t nb = 0) {
  DimSpec d;
  d.label = label, d.kind = kind, d.axes = std::move(axes), d.nb = nb;
  return d;
}
DimSpec whole(const char* label) { return caps_dim(label, Kind::Replicated); }
DimSpec cyclic(const char* label, index_t nb) {  // blocks of nb dealt round all P ranks
  return caps_dim(label, Kind::BlockCyclic, {"g", "q"}, nb);
}
ShardingSpec caps_spec(const char* name, DimSpec rows, DimSpec cols) {
  ShardingSpec s;
  s.name = name, s.dims[0] = std::move(rows), s.dims[1] = std::move(cols);
  return s;
}

// Every layout of the step, on the mesh {g: 7, q: Q} and on a group's mesh {q: Q}. The left
// stack is S^T (k1 x 7 m1), the right one T (k1 x 7 n1), the products M^T (n1 x 7 m1).
struct Layouts {
  Layout a, b, c;                      // aligned op(A), op(B) (as stored), C
  Layout left, right, products;        // the stacks as formed (row- or column-aligned)
  Layout left_g, right_g, products_g;  // the stacks split among the groups
  Layout left_1, right_1, products_1;  // one group's pair and product on its own mesh
};

Layouts layouts_of(const MeshShape& mesh, const MeshShape& group, const Shape& s, Op opA, Op opB) {
  const index_t m7 = kGroups * s.m1, n7 = kGroups * s.n1;
  Layouts l;
  l.a = stored_layout(opA, mesh, s.m, s.k, caps_spec("A", cyclic("I", s.bm), whole("K")));
  l.b = stored_layout(opB, mesh, s.k, s.n, caps_spec("B", whole("K"), cyclic("J", s.bn)));
  l.c = Layout(mesh, s.m, s.n, caps_spec("C", cyclic("I", s.bm), whole("J")));
  l.left = Layout(mesh, s.k1, m7, caps_spec("S", whole("K"), cyclic("I", s.bm)));
  l.right = Layout(mesh, s.k1, n7, caps_spec("T", whole("K"), cyclic("J", s.bn)));
  l.products = Layout(mesh, s.n1, m7, caps_spec("M", whole("J"), cyclic("I", s.bm)));
  l.left_g = Layout(mesh, s.k1, m7, caps_spec("S", block_dim("K", {"q"}), block_dim("I", {"g"})));
  l.right_g = Layout(mesh, s.k1, n7, caps_spec("T", whole("K"), block_dim("J", {"g", "q"})));
  l.products_g =
      Layout(mesh, s.n1, m7, caps_spec("M", block_dim("J", {"q"}), block_dim("I", {"g"})));
  // A group of one rank holds its pair whole, as Strassen's one-rank form takes it.
  const bool split = s.Q > 1;
  const DimSpec k_q = split ? block_dim("K", {"q"}) : whole("K");
  const DimSpec j_q = split ? block_dim("J", {"q"}) : whole("J");
  l.left_1 = Layout(group, s.k1, s.m1, caps_spec("S", k_q, whole("I")));
  l.right_1 = Layout(group, s.k1, s.n1, caps_spec("T", whole("K"), j_q));
  l.products_1 = Layout(group, s.n1, s.m1, caps_spec("M", j_q, whole("I")));
  return l;
}

// Elements of this rank's tile of L as a view with ld = max(rows, 1) holds it.
index_t tile(const Mesh& mesh, const Layout& L) {
  const index_t rows = L.local_rows(mesh.coords());
  return std::max<index_t>(rows, 1) * L.local_cols(mesh.coords());
}

template <Scalar T>
index_t local_size(const DistMatrix<T>& X) {
  return X.local_rows() * X.local_cols();
}

// Breadth-first steps running on this thread: a group's product may take another step, on
// a buffer of its own (the outer step's is in the pool's slot).
thread_local int t_depth = 0;

// The step's buffer: three regions (winograd::caps_regions), in the pool at depth 0.
template <Scalar T>
struct Arena {
  std::vector<T> owned;
  T* base = nullptr;
  std::array<index_t, 3> size{};
  [[nodiscard]] T* region(int i) const {
    return base + (i > 0 ? size[0] : 0) + (i > 1 ? size[1] : 0);
  }
  // This rank's tile of L at the start of region i.
  [[nodiscard]] DistMatrix<T> at(const Mesh& mesh, const Layout& L, int i) const {
    return DistMatrix<T>::view(mesh, L, region(i),
                               std::max<index_t>(L.local_rows(mesh.coords()), 1));
  }
};

template <Scalar T>
void take(Arena<T>& arena, const Mesh& mesh, const Layouts& l, const Shape& s,
          const Operands<T>& x) {
  winograd::CapsTiles t;
  auto e = [](index_t v) { return double(v); };
  t.a = e(tile(mesh, l.a)), t.b = e(tile(mesh, l.b)), t.c = e(tile(mesh, l.c));
  t.left = e(tile(mesh, l.left)), t.left_g = e(tile(mesh, l.left_g));
  t.right = e(tile(mesh, l.right)), t.right_g = e(tile(mesh, l.right_g));
  t.products_g = e(tile(mesh, l.products_g)), t.products = e(tile(mesh, l.products));
  t.caller_a = e(local_size(x.A)), t.caller_b = e(local_size(x.B));
  t.caller_c = e(local_size(x.C));
  t.split = s.Q > 1;
  const std::array<double, 3> r = winograd::caps_regions(t);
  for (int i = 0; i < 3; ++i) arena.size[i] = static_cast<index_t>(r[i]);
  const index_t total = arena.size[0] + arena.size[1] + arena.size[2];
  if (t_depth == 0) {
    arena.base = memory::get<T>(memory::Slot::StagedA0, total);
  } else {
    arena.owned.resize(static_cast<std::size_t>(std::max<index_t>(total, 1)));
    arena.base = arena.owned.data();
  }
}

// A redistribution's Pack buffer in `pack` (elements), its Unpack (and an all-gather's
// Pieces) buffer in `unpack`; a null pointer lends nothing (the pool's own slot then).
template <Scalar T>
struct Lent {
  memory::Lend pack, unpack, pieces;
  Lent(T* p, index_t np, T* u, index_t nu)
      : pack(memory::Slot::Pack, p, std::size_t(np) * sizeof(T)),
        unpack(memory::Slot::Unpack, u, std::size_t(nu) * sizeof(T)),
        pieces(memory::Slot::Pieces, u, std::size_t(nu) * sizeof(T)) {}
};

// The group's pair and product: views of this rank's tiles of the split stacks on its group's
// mesh (the same elements in the same order: the layouts differ only by the g axis). The
// group's product (`product`: the front end's, planned on the group) takes another
// breadth-first step by the same rule when its ranks allow.
template <Scalar T>
void group_product(const Mesh& group, const Layouts& l, const DistMatrix<T>& S,
                   const DistMatrix<T>& R, DistMatrix<T>& M, const Options& o, Timers& t,
                   SubProduct<T> product) {
  auto view = [&](const DistMatrix<T>& X, const Layout& L) {
    return DistMatrix<T>::view(group, L, const_cast<T*>(X.data()), X.ld());  // NOLINT: read only
  };
  const DistMatrix<T> S1 = view(S, l.left_1), R1 = view(R, l.right_1);
  DistMatrix<T> M1 = DistMatrix<T>::view(group, l.products_1, M.data(), M.ld());
  Options sub = o;
  sub.algorithm = Algorithm::Strassen;
  sub.strassen_step = StrassenStep::Auto;  // further steps by the default rule
  sub.fast_crossover = strassen_crossover(o);
  struct Deeper {
    Deeper() { ++t_depth; }
    ~Deeper() { --t_depth; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;
    Deeper(Deeper&&) = delete;
    Deeper& operator=(Deeper&&) = delete;
  } const deeper;
  // M_g^T = T_g^T S_g^T: the stacks hold S_g^T and T_g with op(A) and op(B) applied.
  product(Operands<T>{Op::T, Op::N, T(1), R1, S1, T(0), M1}, sub, t);
}

// A group of one rank: one local recursion, M_g^T = T_g^T S_g^T, that overwrites the pair (the
// step needs it no more), so its first level takes no scratch (`work`: the levels below).
template <Scalar T>
void local_product(const Shape& s, DistMatrix<T>& S, DistMatrix<T>& R, DistMatrix<T>& M,
                   const Options& o, T* work) {
  const int L = winograd::levels(s.n1, s.m1, s.k1, strassen_crossover(o));
  winograd_gemm_overwriting(Op::T, Op::N, s.n1, s.m1, s.k1, T(1), R.data(), R.ld(), S.data(),
                            S.ld(), M.data(), M.ld(), L, work);
}

}  // namespace

template <Scalar T>
void strassen_caps_run(const Operands<T>& x, const Options& o, Timers& t,
                       SubProduct<T> group_product_of) {
  const index_t k = x.opA == Op::N ? x.A.layout().cols() : x.A.layout().rows();
  const Shape s = caps::shape_of(x.C.mesh().size(), x.C.layout().rows(), x.C.layout().cols(), k);
  const Mesh mesh = x.C.mesh().reshaped(MeshShape({"g", "q"}, {kGroups, s.Q}));
  std::optional<Mesh> group;
  const Layouts l = layouts_of(mesh.shape(), MeshShape({"q"}, {s.Q}), s, x.opA, x.opB);
  Arena<T> z;
  T* work = nullptr;  // a group of one rank's recursion below its first level
  prologue(mesh.comm(), [&] {
    take(z, mesh, l, s, x);
    group.emplace(mesh.axis_comm("q"), MeshShape({"q"}, {s.Q}));
    if (s.Q == 1) {
      const int L = winograd::levels(s.n1, s.m1, s.k1, strassen_crossover(o));
      work =
          memory::get<T>(memory::Slot::Partial, winograd::overwriting_scratch(s.n1, s.m1, s.k1, L));
    }
  });
  T *r0 = z.region(0), *r1 = z.region(1), *r2 = z.region(2);
  const auto [w0, w1, w2] = z.size;
  const index_t caller_b = local_size(x.B);
  DistMatrix<T> Aal = z.at(mesh, l.a, 0), L = z.at(mesh, l.left, 2), Lg = z.at(mesh, l.left_g, 0);
  DistMatrix<T> Bal = z.at(mesh, l.b, 1), R = z.at(mesh, l.right, 2), Rg = z.at(mesh, l.right_g, 1);
  DistMatrix<T> Pg = z.at(mesh, l.products_g, 2), Pst = z.at(mesh, l.products, 0);
  DistMatrix<T> Cal = z.at(mesh, l.c, 1);
  // 1: op(A) aligned (region 0; Pack in 1, Unpack in 2), the left stack formed (region 2) and
  // split among the groups (region 0; at Q > 1 packed in region 1).
  {
    const comm::RedistributionRole moving_in(true);
    const Lent<T> lent(r1, w1, r2, w2);
    t.timed(&Timers::redist, [&] { redistribute(x.A, Aal); });
  }
  t.timed(&Timers::gemm, "add", 0, [&] { caps::form_left(Aal, x.opA, s, L); });
  const comm::RedistributionRole step(false);
  t.timed(&Timers::comm, "exchange", 1, [&] {
    const Lent<T> lent(r1, w1, nullptr, 0);
    redistribute(L, Lg);
  });
  // 2: op(B) aligned (region 1; Pack and Unpack in 2), the right stack formed (region 2) and
  // split (region 1, in place).
  {
    const comm::RedistributionRole moving_in(true);
    const Lent<T> lent(r2, caller_b, r2 + caller_b, w2 - caller_b);
    t.timed(&Timers::redist, [&] { redistribute(x.B, Bal); });
  }
  t.timed(&Timers::gemm, "add", 2, [&] { caps::form_right(Bal, x.opB, s, R); });
  t.timed(&Timers::comm, "exchange", 3, [&] { redistribute(R, Rg); });
  // 3: the group's product (region 2); the seven products back, row-aligned (region 0; at
  // Q > 1 unpacked through region 1).
  if (s.Q == 1) {
    t.timed(&Timers::gemm, "product", 4, [&] { local_product(s, Lg, Rg, Pg, o, work); });
  } else {
    comm::agreed(mesh.comm(), "strassen group product",
                 [&] { group_product(*group, l, Lg, Rg, Pg, o, t, group_product_of); });
  }
  t.timed(&Timers::comm, "exchange", 5, [&] {
    const Lent<T> lent(nullptr, 0, r1, w1);
    redistribute(Pg, Pst);
  });
  // 4: C's quadrants from the products (region 1), then alpha times them plus beta C into the
  // caller's C (Pack in region 0, Unpack in 2).
  t.timed(&Timers::gemm, "add", 6, [&] { caps::form_c(Pst, s, Cal); });
  const comm::RedistributionRole moving_out(true);
  const Lent<T> lent(r0, w0, r2, w2);
  t.timed(&Timers::redist, [&] { redistribute(Cal, x.C, x.alpha, x.beta); });
}

#define SHARDMM_INSTANTIATE(T) \
  template void strassen_caps_run<T>(const Operands<T>&, const Options&, Timers&, SubProduct<T>);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
