// Strassen's breadth-first step (CAPS, Ballard et al.; Algorithm::Strassen on P = 7 Q ranks):
// one Winograd level over the whole distributed product, its seven half-size products run at
// the same time, one per group of Q ranks, each with gemm's Strassen on its group (another
// breadth-first step when Q allows, else the line form, depth-first below). On the mesh
// {g: 7, q: Q} over the caller's ranks, what moves:
// 1. op(A) into rows block-cyclic(bm) over all P ranks, k whole, with m1 = bm P >= m / 2: row
//    i and row m1 + i of op(A) land on the same rank, so its quadrants line up tile by tile;
//    op(B) likewise by columns (bn, n1 = bn P), k whole. k splits at k1 = ceil(k / 2).
//    Quadrants are zero-padded to m1 x k1 and k1 x n1.
// 2. Each rank adds its rows of the seven left operands (A11, A12, S4, A22, S1, S2, S3) and its
//    columns of the seven right ones (B11, B21, B22, T4, T1, T2, T3), stacked, and one exchange
//    sends product g's pair to group g: op(A)'s rows whole and k split over q, op(B)'s columns
//    split over q (the line form's layouts, so the group's gemm moves nothing more in).
// 3. Group g multiplies its pair (M_g) with gemm on its Q ranks.
// 4. The seven products come back row-aligned as in 1; each rank adds its rows of C's
//    quadrants (C11 = M1 + M2, C12 = M1 + M6 + M5 + M3, C21 = M1 + M6 + M7 - M4,
//    C22 = M1 + M6 + M7 + M5) and one redistribution takes alpha times them, plus beta C, into
//    the caller's C.
// Memory (pool slots StagedA0/A1/B0/B1/C0/C1): 7/4 of a rank's share of A, B and C per stack,
// two stacks each. A group of 7 Q' ranks takes another step the same way (CAPS's recursion),
// on buffers it owns. Words per rank: moving A, B, C once each, and (mk + kn + mn) 7 / (4 P) for
// the stacks, plus the groups' own line forms.
#include <array>
#include <initializer_list>
#include <optional>
#include <type_traits>

#include "algo/algo.hpp"
#include "algo/strassen.hpp"
#include "comm/agree.hpp"
#include "comm/traffic.hpp"
#include "core/winograd.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/gemm.hpp"
#include "shardmm/redistribute.hpp"

namespace shardmm::algo {
namespace {

constexpr int kGroups = winograd::kCapsGroups;

index_t up(index_t a, index_t b) { return (a + b - 1) / b; }

DimSpec dim(const char* label, DimSpec::Kind kind, std::vector<std::string> axes = {},
            index_t nb = 0) {
  DimSpec d;
  d.label = label, d.kind = kind, d.axes = std::move(axes), d.nb = nb;
  return d;
}

ShardingSpec spec(const char* name, DimSpec rows, DimSpec cols) {
  ShardingSpec s;
  s.name = name, s.dims[0] = std::move(rows), s.dims[1] = std::move(cols);
  return s;
}

// op(X)(row0 + i, col0 + j) of a local tile stored as is (N) or transposed (T, C), zero past
// rows x cols: one quadrant of an aligned operand, or one product of a stack.
template <class E>  // E: T to write, const T to read
struct Tile {
  E* p;
  index_t ld;
  bool trans;
  index_t row0, col0, rows, cols;
  [[nodiscard]] E& operator()(index_t i, index_t j) const {
    return trans ? p[(col0 + j) + (row0 + i) * ld] : p[(row0 + i) + (col0 + j) * ld];
  }
  [[nodiscard]] std::remove_const_t<E> at(index_t i, index_t j) const {
    return i < rows && j < cols ? (*this)(i, j) : std::remove_const_t<E>(0);
  }
};
template <class T>
using Quad = Tile<const T>;

template <class T>
struct Term {
  T sign;
  Quad<T> q;
};

// out(i, j) = the terms' signed sum for i < rows, j < cols, walking out's storage in order.
template <class T>
void form(const Tile<T>& out, std::initializer_list<Term<T>> terms) {
  auto sum = [&](index_t i, index_t j) {
    T s(0);
    for (const Term<T>& t : terms) s += t.sign * t.q.at(i, j);
    return s;
  };
  if (out.trans) {
    for (index_t i = 0; i < out.rows; ++i)
      for (index_t j = 0; j < out.cols; ++j) out(i, j) = sum(i, j);
    return;
  }
  for (index_t j = 0; j < out.cols; ++j)
    for (index_t i = 0; i < out.rows; ++i) out(i, j) = sum(i, j);
}

struct Shape {
  int P = 0, Q = 0;
  index_t m = 0, n = 0, k = 0;
  index_t bm = 0, bn = 0;          // aligned block sizes
  index_t m1 = 0, n1 = 0, k1 = 0;  // padded quadrant sides
};

Shape shape_of(int P, index_t m, index_t n, index_t k) {
  Shape s;
  s.P = P, s.Q = P / kGroups, s.m = m, s.n = n, s.k = k;
  s.m1 = winograd::caps_half(m, P), s.n1 = winograd::caps_half(n, P), s.k1 = up(k, 2);
  s.bm = s.m1 / P, s.bn = s.n1 / P;
  return s;
}

// op(A)'s quadrant (qi, qj) in this rank's aligned tile: its rows are the tile's first bm
// (top) or the rest (bottom); its columns op(A)'s first k1 or the rest.
template <class T>
Quad<T> a_quad(const DistMatrix<T>& A, Op op, const Shape& s, int qi, int qj) {
  const bool t = op != Op::N;
  const index_t rows = t ? A.local_cols() : A.local_rows();
  return {
      A.data(), A.ld(), t, qi * s.bm, qj * s.k1, qi ? rows - s.bm : s.bm, qj ? s.k - s.k1 : s.k1};
}

template <class T>
Quad<T> b_quad(const DistMatrix<T>& B, Op op, const Shape& s, int qi, int qj) {
  const bool t = op != Op::N;
  const index_t cols = t ? B.local_rows() : B.local_cols();
  return {
      B.data(), B.ld(), t, qi * s.k1, qj * s.bn, qi ? s.k - s.k1 : s.k1, qj ? cols - s.bn : s.bn};
}

// Product g's left operand in the stack (bm x k1, rows g bm on), its right one (k1 x bn).
template <class T>
Tile<T> left_slot(DistMatrix<T>& S, Op op, const Shape& s, int g) {
  return {S.data(), S.ld(), op != Op::N, g * s.bm, 0, s.bm, s.k1};
}
template <class T>
Tile<T> right_slot(DistMatrix<T>& S, Op op, const Shape& s, int g) {
  return {S.data(), S.ld(), op != Op::N, 0, g * s.bn, s.k1, s.bn};
}

// The seven left operands of Winograd's form from op(A)'s quadrants (S sums expanded).
template <class T>
void form_left(const DistMatrix<T>& A, Op op, const Shape& s, DistMatrix<T>& S) {
  const Quad<T> a11 = a_quad(A, op, s, 0, 0), a12 = a_quad(A, op, s, 0, 1),
                a21 = a_quad(A, op, s, 1, 0), a22 = a_quad(A, op, s, 1, 1);
  const T p(1), n(-1);
  form(left_slot(S, op, s, 0), {{p, a11}});
  form(left_slot(S, op, s, 1), {{p, a12}});
  form(left_slot(S, op, s, 2), {{p, a12}, {p, a11}, {n, a21}, {n, a22}});  // S4
  form(left_slot(S, op, s, 3), {{p, a22}});
  form(left_slot(S, op, s, 4), {{p, a21}, {p, a22}});            // S1
  form(left_slot(S, op, s, 5), {{p, a21}, {p, a22}, {n, a11}});  // S2
  form(left_slot(S, op, s, 6), {{p, a11}, {n, a21}});            // S3
}

template <class T>
void form_right(const DistMatrix<T>& B, Op op, const Shape& s, DistMatrix<T>& S) {
  const Quad<T> b11 = b_quad(B, op, s, 0, 0), b12 = b_quad(B, op, s, 0, 1),
                b21 = b_quad(B, op, s, 1, 0), b22 = b_quad(B, op, s, 1, 1);
  const T p(1), n(-1);
  form(right_slot(S, op, s, 0), {{p, b11}});
  form(right_slot(S, op, s, 1), {{p, b21}});
  form(right_slot(S, op, s, 2), {{p, b22}});
  form(right_slot(S, op, s, 3), {{p, b22}, {n, b12}, {p, b11}, {n, b21}});  // T4
  form(right_slot(S, op, s, 4), {{p, b12}, {n, b11}});                      // T1
  form(right_slot(S, op, s, 5), {{p, b22}, {n, b12}, {p, b11}});            // T2
  form(right_slot(S, op, s, 6), {{p, b22}, {n, b12}});                      // T3
}

// C's quadrants, this rank's rows, from the seven products' rows (M stacked, n1 columns).
template <class T>
void form_c(const DistMatrix<T>& M, const Shape& s, DistMatrix<T>& C) {
  std::array<Quad<T>, kGroups> m{};
  for (int g = 0; g < kGroups; ++g) m[g] = {M.data(), M.ld(), false, g * s.bm, 0, s.bm, s.n1};
  const index_t bottom = C.local_rows() - s.bm, right = s.n - s.n1;
  auto c = [&](int ci, int cj) {
    return Tile<T>{C.data(),           C.ld(),           false, ci * s.bm, cj * s.n1,
                   ci ? bottom : s.bm, cj ? right : s.n1};
  };
  const T p(1), n(-1);
  form(c(0, 0), {{p, m[0]}, {p, m[1]}});
  form(c(0, 1), {{p, m[0]}, {p, m[5]}, {p, m[4]}, {p, m[2]}});
  form(c(1, 0), {{p, m[0]}, {p, m[5]}, {p, m[6]}, {n, m[3]}});
  form(c(1, 1), {{p, m[0]}, {p, m[5]}, {p, m[6]}, {p, m[4]}});
}

}  // namespace

namespace {

using Kind = DimSpec::Kind;

DimSpec whole(const char* label) { return dim(label, Kind::Replicated); }
DimSpec cyclic(const char* label, index_t nb) {  // blocks of nb dealt round all P ranks
  return dim(label, Kind::BlockCyclic, {"g", "q"}, nb);
}

// Every layout of the step, on the mesh {g: 7, q: Q} (stored: A, B and their stacks as the
// caller stores them) and on a group's mesh {q: Q}.
struct Layouts {
  Layout a, b, c;                      // aligned op(A), op(B), C
  Layout left, right, products;        // the stacks as formed (row- or column-aligned)
  Layout left_g, right_g, products_g;  // the stacks split among the groups
  Layout left_1, right_1, products_1;  // one group's pair and product on its own mesh
};

Layouts layouts_of(const MeshShape& mesh, const MeshShape& group, const Shape& s, Op opA, Op opB) {
  const index_t m7 = kGroups * s.m1, n7 = kGroups * s.n1;
  Layouts l;
  l.a = stored_layout(opA, mesh, s.m, s.k, spec("A", cyclic("I", s.bm), whole("K")));
  l.b = stored_layout(opB, mesh, s.k, s.n, spec("B", whole("K"), cyclic("J", s.bn)));
  l.c = Layout(mesh, s.m, s.n, spec("C", cyclic("I", s.bm), whole("J")));
  l.left = stored_layout(opA, mesh, m7, s.k1, spec("S", cyclic("I", s.bm), whole("K")));
  l.right = stored_layout(opB, mesh, s.k1, n7, spec("T", whole("K"), cyclic("J", s.bn)));
  l.products = Layout(mesh, m7, s.n1, spec("M", cyclic("I", s.bm), whole("J")));
  l.left_g =
      stored_layout(opA, mesh, m7, s.k1, spec("S", block_dim("I", {"g"}), block_dim("K", {"q"})));
  l.right_g = stored_layout(opB, mesh, s.k1, n7, spec("T", whole("K"), block_dim("J", {"g", "q"})));
  l.products_g = Layout(mesh, m7, s.n1, spec("M", block_dim("I", {"g"}), block_dim("J", {"q"})));
  // A group of one rank holds its pair whole, as Strassen's one-rank form takes it.
  const DimSpec k_g = s.Q > 1 ? block_dim("K", {"q"}) : whole("K");
  l.left_1 = stored_layout(opA, group, s.m1, s.k1, spec("S", whole("I"), k_g));
  l.right_1 = stored_layout(opB, group, s.k1, s.n1,
                            spec("T", whole("K"), s.Q > 1 ? block_dim("J", {"q"}) : whole("J")));
  l.products_1 = Layout(group, s.m1, s.n1, spec("M", whole("I"), block_dim("J", {"q"})));
  return l;
}

// Elements of this rank's tile of L as matrix::pooled holds it.
std::int64_t tile(const Mesh& mesh, const Layout& L) {
  const index_t rows = L.local_rows(mesh.coords());
  return std::max<index_t>(rows, 1) * L.local_cols(mesh.coords());
}

// Breadth-first steps running on this thread: a group's product may take another step, on
// buffers of its own (the outer step's are in the pool's slots).
thread_local int t_depth = 0;

// The group's pair and product: views of this rank's tiles of the split stacks on its group's
// mesh (the same elements in the same order: the layouts differ only by the g axis). The
// group's gemm takes another breadth-first step by the same rule when its ranks allow.
template <Scalar T>
GemmReport group_product(const Operands<T>& x, const Mesh& group, const Layouts& l,
                         const DistMatrix<T>& S, const DistMatrix<T>& R, DistMatrix<T>& M,
                         const Options& o) {
  auto view = [&](const DistMatrix<T>& X, const Layout& L) {
    return DistMatrix<T>::view(group, L, const_cast<T*>(X.data()), X.ld());  // NOLINT: read only
  };
  const DistMatrix<T> S1 = view(S, l.left_1), R1 = view(R, l.right_1);
  DistMatrix<T> M1 = DistMatrix<T>::view(group, l.products_1, M.data(), M.ld());
  Options sub = o;
  sub.algorithm = Algorithm::Strassen;
  sub.grid_m = 0, sub.grid_n = 0, sub.grid_k = 0;
  sub.fast_crossover = strassen_crossover(o);
  struct Deeper {
    Deeper() { ++t_depth; }
    ~Deeper() { --t_depth; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;
    Deeper(Deeper&&) = delete;
    Deeper& operator=(Deeper&&) = delete;
  } const deeper;
  return gemm(x.opA, x.opB, T(1), S1, R1, T(0), M1, sub);
}

// This rank's tiles of the step. The outermost step keeps them in pool slots, every slot
// sized once for the larger of the two tiles that use it one after the other (so nothing
// allocates after the prologue); a step inside a group's product owns its own.
template <Scalar T>
struct Tiles {
  std::optional<DistMatrix<T>> a, b, left, right, left_g, right_g, products_g, products, c;
};

template <Scalar T>
void take(Tiles<T>& x, const Mesh& mesh, const Layouts& l) {
  using memory::Slot;
  auto make = [&](std::optional<DistMatrix<T>>& to, const Layout& L, Slot slot) {
    if (t_depth == 0) to.emplace(matrix::pooled<T>(mesh, L, slot));
    else to.emplace(mesh, L);
  };
  if (t_depth == 0) {
    memory::get<T>(Slot::StagedA0, std::max(tile(mesh, l.a), tile(mesh, l.left_g)));
    memory::get<T>(Slot::StagedA1, std::max(tile(mesh, l.left), tile(mesh, l.c)));
    memory::get<T>(Slot::StagedB0, std::max(tile(mesh, l.b), tile(mesh, l.right_g)));
  }
  make(x.a, l.a, Slot::StagedA0), make(x.left_g, l.left_g, Slot::StagedA0);
  make(x.left, l.left, Slot::StagedA1), make(x.c, l.c, Slot::StagedA1);
  make(x.b, l.b, Slot::StagedB0), make(x.right_g, l.right_g, Slot::StagedB0);
  make(x.right, l.right, Slot::StagedB1);
  make(x.products_g, l.products_g, Slot::StagedC0);
  make(x.products, l.products, Slot::StagedC1);
}

}  // namespace

template <Scalar T>
void strassen_caps_run(const Operands<T>& x, const Options& o, Timers& t) {
  const index_t k = x.opA == Op::N ? x.A.layout().cols() : x.A.layout().rows();
  const Shape s = shape_of(x.C.mesh().size(), x.C.layout().rows(), x.C.layout().cols(), k);
  const Mesh mesh = x.C.mesh().reshaped(MeshShape({"g", "q"}, {kGroups, s.Q}));
  std::optional<Mesh> group;
  const Layouts l = layouts_of(mesh.shape(), MeshShape({"q"}, {s.Q}), s, x.opA, x.opB);
  Tiles<T> b;
  prologue(mesh.comm(), [&] {
    take(b, mesh, l);
    group.emplace(mesh.axis_comm("q"), MeshShape({"q"}, {s.Q}));
  });
  // 1-2: A and B aligned by quadrant; each rank adds its share of the fourteen operands.
  {
    const comm::RedistributionRole moving_in(true);
    t.timed(&Timers::redist, [&] { redistribute(x.A, *b.a), redistribute(x.B, *b.b); });
  }
  t.timed(&Timers::gemm, "add", 0,
          [&] { form_left(*b.a, x.opA, s, *b.left), form_right(*b.b, x.opB, s, *b.right); });
  // 3: pair g to group g, its product there; the seven products back, row-aligned.
  const comm::RedistributionRole step(false);
  t.timed(&Timers::comm, "exchange", 1,
          [&] { redistribute(*b.left, *b.left_g), redistribute(*b.right, *b.right_g); });
  GemmReport r;
  comm::agreed(mesh.comm(), "strassen group product",
               [&] { r = group_product(x, *group, l, *b.left_g, *b.right_g, *b.products_g, o); });
  t.gemm += r.seconds_gemm, t.comm += r.seconds_comm, t.redist += r.seconds_redist;
  t.timed(&Timers::comm, "exchange", 2, [&] { redistribute(*b.products_g, *b.products); });
  // 4: C's quadrants from the products, then alpha times them plus beta C into the caller's C.
  t.timed(&Timers::gemm, "add", 3, [&] { form_c(*b.products, s, *b.c); });
  const comm::RedistributionRole moving_out(true);
  t.timed(&Timers::redist, [&] { redistribute(*b.c, x.C, x.alpha, x.beta); });
}

#define SHARDMM_INSTANTIATE(T) \
  template void strassen_caps_run<T>(const Operands<T>&, const Options&, Timers&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
