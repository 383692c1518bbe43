// Bytes moved by gemm (GemmReport, logical convention of src/comm/traffic.hpp) against each
// algorithm's formula, computed here from the operands' layout maps. Operands are already in
// the algorithm's layouts, so nothing is redistributed; every run is also checked against the
// serial oracle and for conservation (bytes sent summed over all ranks == bytes received).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>

#include "mpi/gemm_check.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

struct Shape {
  index_t m, n, k;
};
struct Bytes {  // elements until scaled by sizeof(T)
  std::int64_t sent = 0, received = 0;
};

// Meshes {x: f0, y: f1} and {x: f1, y: f0} with f0 >= f1 the near-square factors of P.
std::vector<Mesh> grids() {
  const auto f = factor_near_square(world_size(), 2);
  std::vector<Mesh> out{Mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {f[0], f[1]}))};
  if (f[0] != f[1]) out.emplace_back(MPI_COMM_WORLD, MeshShape({"x", "y"}, {f[1], f[0]}));
  return out;
}
Mesh tall_grid() { return grids().front(); }

// "K_Y:bc3+1": a block-cyclic dimension.
std::string bc(const std::string& label, const std::string& axis, int nb, int src) {
  return label + "_" + axis + ":bc" + std::to_string(nb) + "+" + std::to_string(src);
}
// The stored layout of X when op(X) has the logical layout "[d0,d1]" (rows x cols).
Layout stored(Op op, const Mesh& mesh, index_t rows, index_t cols, const std::string& spec) {
  const Layout logical(mesh.shape(), rows, cols, spec);
  return op == Op::N ? logical : logical.transposed();
}
Layout logical(const Mesh& mesh, index_t rows, index_t cols, const std::string& spec) {
  return Layout(mesh.shape(), rows, cols, spec);
}

// Runs C <- alpha op(A) op(B) + beta C on fresh operands and returns the report.
template <Scalar T>
GemmReport run(const Mesh& mesh, Op opA, Op opB, Shape s, const std::string& a,
               const std::string& b, const std::string& c, const Options& o,
               const std::string& what) {
  DistMatrix<T> A(mesh, stored(opA, mesh, s.m, s.k, a)), B(mesh, stored(opB, mesh, s.k, s.n, b));
  DistMatrix<T> C(mesh, Layout(mesh.shape(), s.m, s.n, c));
  A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 3); });
  const auto c0 = C.gather();  // sums unreduced partials
  const T alpha(real_t<T>(1.5)), beta(real_t<T>(-0.5));
  const GemmReport r = gemm(opA, opB, alpha, A, B, beta, C, o);
  EXPECT_LE(gemm_error(opA, opB, alpha, A, B, beta, c0, C), 10.0) << what;
  std::int64_t mine[2] = {r.bytes_sent, r.bytes_received}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);  // idle ranks too
  EXPECT_EQ(all[0], all[1]) << "bytes sent and received do not balance: " << what;
  return r;
}

template <Scalar T>
void expect_bytes(const GemmReport& r, Bytes want, const std::string& what) {
  const auto size = static_cast<std::int64_t>(sizeof(T));
  EXPECT_EQ(r.redist_bytes_sent, 0) << what << "\n" << r.to_string();
  EXPECT_EQ(r.redist_bytes_received, 0) << what << "\n" << r.to_string();
  EXPECT_EQ(r.bytes_sent, want.sent * size) << what << " on rank " << world_rank() << "\n"
                                            << r.to_string();
  EXPECT_EQ(r.bytes_received, want.received * size) << what << " on rank " << world_rank()
                                                    << "\n" << r.to_string();
}

std::string describe(const std::string& algo, const Mesh& mesh, Op opA, Op opB, Shape s) {
  return algo + " on " + mesh.shape().to_string() + " op " + to_string(opA) + to_string(opB) +
         " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k);
}

template <class T>
class Traffic : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Traffic, Types);

// ---------------------------------------------------------------- SUMMA

// Per k index (panels only group them): op(A)'s column kk comes in from the owning process
// column (m_loc elements) unless this rank's column owns it, in which case it goes out to the
// q-1 others; the same for op(B)'s row kk along the process column.
Bytes summa_bytes(const Layout& C, const DimMap& ka, const DimMap& kb, const std::vector<int>& at) {
  const int r = C.dim_coord(0, at), c = C.dim_coord(1, at);
  const int p = C.row_map().nprocs, q = C.col_map().nprocs;
  const index_t m_loc = C.row_map().local_extent(r), n_loc = C.col_map().local_extent(c);
  Bytes b;
  for (index_t kk = 0; kk < ka.extent; ++kk) {
    if (ka.owner(kk) == c) b.sent += m_loc * (q - 1);
    else b.received += m_loc;
    if (kb.owner(kk) == r) b.sent += n_loc * (p - 1);
    else b.received += n_loc;
  }
  return b;
}

// A-stationary: B moves to [k rows in A's k map over Q, all n columns]: this rank receives the
// rows of its process column's A k-blocks (less the n_loc columns it held of those), and sends
// each of its own B rows to the p ranks of the column owning it in A's k map (less itself);
// then the m_loc x n partial product is reduce-scattered along the process row (q ranks, a ring).
// B-stationary is the mirror image: A moves to B's k map over R, reduced along the column.
Bytes stationary_bytes(const Layout& C, const DimMap& ka, const DimMap& kb,
                       const std::vector<int>& at, bool a_stays) {
  const int r = C.dim_coord(0, at), c = C.dim_coord(1, at);
  const int p = C.row_map().nprocs, q = C.col_map().nprocs;
  const index_t m_loc = C.row_map().local_extent(r), n_loc = C.col_map().local_extent(c);
  const DimMap& stays = a_stays ? ka : kb;
  const DimMap& moves = a_stays ? kb : ka;
  const int my_stays = a_stays ? c : r, my_moves = a_stays ? r : c;
  const index_t full = a_stays ? C.cols() : C.rows(), loc = a_stays ? n_loc : m_loc;
  const index_t other_loc = a_stays ? m_loc : n_loc;
  const int movers = a_stays ? p : q, reducers = a_stays ? q : p;
  // Ring reduce-scatter: each step sends one block's running sum to the next rank, so rank v
  // sends every block but its own and receives every block but its predecessor's.
  const DimMap& red = a_stays ? C.col_map() : C.row_map();
  const int mine = a_stays ? c : r, before = (mine + reducers - 1) % reducers;
  Bytes b{other_loc * (full - loc), other_loc * (full - red.local_extent(before))};
  for (index_t kk = 0; kk < ka.extent; ++kk) {
    const bool stay_here = stays.owner(kk) == my_stays, held = moves.owner(kk) == my_moves;
    if (stay_here) b.received += full - (held ? loc : 0);
    if (held) b.sent += loc * (movers - (stay_here ? 1 : 0));
  }
  return b;
}

struct SummaCase {
  Op opA, opB;
  Shape s;
  int mb, nb, kba, kbb;
  index_t panel;
  bool overlap;
};

template <Scalar T>
void summa_case(const Mesh& mesh, const SummaCase& sc, Stationary variant) {
  const int p = mesh.shape().sizes[0], q = mesh.shape().sizes[1];
  const std::string I = bc("I", "X", sc.mb, 1 % p), J = bc("J", "Y", sc.nb, q - 1);
  const std::string a = "A[" + I + "," + bc("K", "Y", sc.kba, q / 2) + "]";
  const std::string b = "B[" + bc("K", "X", sc.kbb, p - 1) + "," + J + "]";
  const std::string c = "C[" + I + "," + J + "]";
  Options o;
  o.algorithm = Algorithm::Summa;
  o.stationary = variant;
  o.panel = sc.panel;
  o.overlap = sc.overlap;
  const std::string name = variant == Stationary::C ? "C" : variant == Stationary::A ? "A" : "B";
  const auto what = describe("summa " + name + "-stationary", mesh, sc.opA, sc.opB, sc.s) + " " +
                    a + " " + b;
  const auto r = run<T>(mesh, sc.opA, sc.opB, sc.s, a, b, c, o, what);
  const Shape s = sc.s;
  const Layout LC = logical(mesh, s.m, s.n, c);
  const DimMap ka = logical(mesh, s.m, s.k, a).map(1), kb = logical(mesh, s.k, s.n, b).map(0);
  expect_bytes<T>(r,
                  variant == Stationary::C
                      ? summa_bytes(LC, ka, kb, mesh.coords())
                      : stationary_bytes(LC, ka, kb, mesh.coords(), variant == Stationary::A),
                  what);
}

TYPED_TEST(Traffic, SummaVariants) {
  const SummaCase cases[] = {
      {Op::N, Op::N, {23, 19, 31}, 2, 3, 5, 3, 4, true},
      {Op::T, Op::C, {17, 29, 13}, 3, 1, 2, 5, 1, true},
      {Op::C, Op::N, {5, 7, 41}, 1, 2, 3, 3, 0, false},
      {Op::N, Op::T, {2, 1, 9}, 5, 5, 1, 2, 3, true},  // smaller than the grid
  };
  for (const Mesh& mesh : grids())
    for (const auto& sc : cases)
      for (Stationary v : {Stationary::C, Stationary::A, Stationary::B})
        summa_case<TypeParam>(mesh, sc, v);
}

// ---------------------------------------------------------------- Cannon

// Skew: A's tile moves i columns left (nothing when i == 0), B's tile j rows up; the rank then
// holds k-block (i+j) mod q. Then q-1 shifts bring every other k-block in and send out every
// k-block but the last one held, (i+j-1) mod q.
Bytes cannon_bytes(const Layout& C, const DimMap& ka, const DimMap& kb, int i, int j) {
  const int q = C.row_map().nprocs;
  const index_t mi = C.row_map().local_extent(i), nj = C.col_map().local_extent(j);
  const index_t k = ka.extent;
  const int first = (i + j) % q, last = (i + j + q - 1) % q;
  Bytes b;
  b.received = (i != 0 ? mi * ka.local_extent(first) : 0) +
               (j != 0 ? nj * kb.local_extent(first) : 0) + mi * (k - ka.local_extent(first)) +
               nj * (k - kb.local_extent(first));
  b.sent = (i != 0 ? mi * ka.local_extent(j) : 0) + (j != 0 ? kb.local_extent(i) * nj : 0) +
           mi * (k - ka.local_extent(last)) + nj * (k - kb.local_extent(last));
  return b;
}

TYPED_TEST(Traffic, CannonSkewAndShifts) {
  const int q = static_cast<int>(std::floor(std::sqrt(double(world_size())) + 1e-9));
  const Mesh mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {q, q}), true);
  const std::string a = "A[I_X,K_Y]", b = "B[K_X,J_Y]", c = "C[I_X,J_Y]";
  const std::pair<Op, Op> ops[] = {{Op::N, Op::N}, {Op::T, Op::C}, {Op::C, Op::T}};
  const Shape shapes[] = {{23, 19, 31}, {7, 12, 5}, {1, 3, 2}};
  Options o;
  o.algorithm = Algorithm::Cannon;
  for (const auto& [opA, opB] : ops)
    for (const Shape& s : shapes) {
      const auto what = describe("cannon", mesh, opA, opB, s);
      const auto r = run<TypeParam>(mesh, opA, opB, s, a, b, c, o, what);
      Bytes want;  // idle ranks move nothing
      if (mesh.active())
        want = cannon_bytes(logical(mesh, s.m, s.n, c), logical(mesh, s.m, s.k, a).map(1),
                            logical(mesh, s.k, s.n, b).map(0), mesh.coords()[0], mesh.coords()[1]);
      expect_bytes<TypeParam>(r, want, what);
    }
}

// ---------------------------------------------------------------- ring

struct RingCase {
  RingForm form;
  const char* a;  // templates: '@' is the ring axis, '%' a source coordinate
  const char* b;
  const char* c;
};
const RingCase kRingCases[] = {
    {RingForm::AllGatherA, "A[I_@,K]", "B[K,J_@]", "C[I,J_@]"},
    {RingForm::AllGatherB, "A[I_@,K]", "B[K,J_@]", "C[I_@,J]"},
    {RingForm::ReduceScatter, "A[I,K_@]", "B[K_@,J]", "C[I_@,J]"},
    // The caller's cyclic splits are kept (expect_bytes: nothing redistributed).
    {RingForm::AllGatherA, "A[I_@:bc2+%,K]", "B[K,J_@:bc3+0]", "C[I,J_@:bc3+0]"},
    {RingForm::AllGatherB, "A[I_@:bc3+%,K]", "B[K,J_@:bc1+0]", "C[I_@:bc3+%,J]"},
    {RingForm::ReduceScatter, "A[I,K_@:bc2+%]", "B[K_@:bc2+%,J]", "C[I_@,J]"},
    {RingForm::ReduceScatter, "A[I,K_@:bc3+0]", "B[K_@:bc3+0,J]", "C[I,J_@:bc2+%]"},
};

// '@' becomes the ring axis, '%' a block-cyclic source coordinate (1 where the axis allows).
std::string on_axis(std::string spec, const std::string& axis, int axis_size) {
  spec.replace(spec.find('@'), 1, axis);
  for (auto at = spec.find('%'); at != std::string::npos; at = spec.find('%'))
    spec.replace(at, 1, std::to_string(1 % axis_size));
  return spec;
}

// AllGather: every block of the circulating operand but the own one comes in; every block but
// the one of rank r-1 (the last held) goes out. Bidirectional (p > 2): the last `right` k
// indices of every tile travel the other way, so that part goes out for every block but
// (r+1)'s. ReduceScatter: partial C blocks of every row block but (r+1)'s come in, and of
// every row (or column) block but the own one go out.
Bytes ring_bytes(RingForm form, const DimMap& blocks, index_t other, int r, index_t right) {
  const int p = blocks.nprocs;
  auto all_but = [&](int b) { return blocks.extent - blocks.local_extent((b % p + p) % p); };
  if (form == RingForm::ReduceScatter) return {all_but(r) * other, all_but(r + 1) * other};
  return {all_but(r - 1) * (other - right) + all_but(r + 1) * right, all_but(r) * other};
}

template <Scalar T>
void ring_case(const Mesh& mesh, const std::string& axis, const RingCase& rc, Op opA, Op opB,
               Shape s, bool bidirectional) {
  const int size = mesh.axis_size(axis);
  const std::string a = on_axis(rc.a, axis, size), b = on_axis(rc.b, axis, size),
                    c = on_axis(rc.c, axis, size);
  Options o;
  o.algorithm = Algorithm::Ring;
  o.ring_form = rc.form;
  o.bidirectional = bidirectional;
  if (mesh.shape().ndims() > 1) o.ring_axis = axis;
  const auto what = describe(std::string(bidirectional ? "bidirectional " : "") + "ring over " +
                                 axis, mesh, opA, opB, s) + " " + a + " " + b + " " + c;
  const auto r = run<T>(mesh, opA, opB, s, a, b, c, o, what);
  const int me = mesh.coord(axis);
  const bool split =
      bidirectional && mesh.axis_size(axis) > 2 && rc.form != RingForm::ReduceScatter;
  const index_t right = split ? s.k - s.k / 2 : 0;  // the second half of k travels right
  Bytes want;
  if (rc.form == RingForm::AllGatherA)
    want = ring_bytes(rc.form, logical(mesh, s.m, s.k, a).map(0), s.k, me, right);
  else if (rc.form == RingForm::AllGatherB)
    want = ring_bytes(rc.form, logical(mesh, s.k, s.n, b).map(1), s.k, me, right);
  else {  // C's blocks by rows or, when its rows are whole, by columns
    const Layout LC = logical(mesh, s.m, s.n, c);
    const int cd = LC.map(0).nprocs > 1 ? 0 : 1;
    want = ring_bytes(rc.form, LC.map(cd), cd == 0 ? s.n : s.m, me, 0);
  }
  expect_bytes<T>(r, want, what);
}

TYPED_TEST(Traffic, RingForms) {
  const Shape shapes[] = {{23, 19, 31}, {5, 2, 7}};
  const std::pair<Op, Op> ops[] = {{Op::N, Op::N}, {Op::C, Op::T}};
  const Mesh line = Mesh::line(MPI_COMM_WORLD, "x");
  const auto meshes = grids();
  for (const auto& rc : kRingCases)
    for (const auto& [opA, opB] : ops)
      for (const Shape& s : shapes)
        for (bool bidir : {false, true}) {
          ring_case<TypeParam>(line, "X", rc, opA, opB, s, bidir);
          for (const Mesh& mesh : meshes)  // the other axis replicates: one ring per slice
            for (const char* axis : {"X", "Y"})
              ring_case<TypeParam>(mesh, axis, rc, opA, opB, s, bidir);
        }
}

// At p = 2 an AllGather form takes the other operand split along k as it is (no
// redistribution): besides the circulating tiles, each rank sends its k indices of the
// peer's C columns (AG-A; rows for AG-B) and receives the peer's k indices of its own.
TYPED_TEST(Traffic, RingStreamsSplitOperand) {
  struct Streamed {
    RingForm form;
    const char *a, *b, *c;
  };
  const Streamed cases[] = {
      {RingForm::AllGatherA, "A[I_@:bc2+%,K]", "B[K_@:bc3+%,J]", "C[I,J_@:bc2+0]"},
      {RingForm::AllGatherB, "A[I,K_@:bc3+0]", "B[K,J_@:bc2+%]", "C[I_@:bc1+%,J]"},
  };
  const Shape shapes[] = {{23, 19, 31}, {5, 2, 7}, {4, 6, 1}};
  std::vector<Mesh> meshes = grids();
  meshes.push_back(Mesh::line(MPI_COMM_WORLD, "x"));
  for (const Mesh& mesh : meshes)
    for (const std::string X : {"X", "Y"}) {
      if (X == "Y" && mesh.shape().ndims() == 1) continue;
      if (mesh.axis_size(X) != 2) continue;
      for (const Streamed& sc : cases)
        for (const auto& [opA, opB] : {std::pair{Op::N, Op::N}, std::pair{Op::C, Op::T}})
          for (const Shape& s : shapes) {
            const std::string a = on_axis(sc.a, X, 2), b = on_axis(sc.b, X, 2), c = on_axis(sc.c, X, 2);
            Options o;
            o.algorithm = Algorithm::Ring;
            o.ring_form = sc.form;
            if (mesh.shape().ndims() > 1) o.ring_axis = X;
            const auto what = describe("streamed ring over " + X, mesh, opA, opB, s) + " " + a + " " + b + " " + c;
            const auto r = run<TypeParam>(mesh, opA, opB, s, a, b, c, o, what);
            const int me = mesh.coord(X), peer = 1 - me;
            const bool ag_a = sc.form == RingForm::AllGatherA;
            const DimMap kmap = ag_a ? logical(mesh, s.k, s.n, b).map(0) : logical(mesh, s.m, s.k, a).map(1);
            const DimMap cmap = logical(mesh, s.m, s.n, c).map(ag_a ? 1 : 0);
            Bytes want = ag_a ? ring_bytes(sc.form, logical(mesh, s.m, s.k, a).map(0), s.k, me, 0)
                              : ring_bytes(sc.form, logical(mesh, s.k, s.n, b).map(1), s.k, me, 0);
            want.sent += kmap.local_extent(me) * cmap.local_extent(peer);
            want.received += kmap.local_extent(peer) * cmap.local_extent(me);
            expect_bytes<TypeParam>(r, want, what);
            EXPECT_NE(r.to_string().find("streamed"), std::string::npos) << what << "\n" << r.to_string();
          }
    }
}

// ---------------------------------------------------------------- sharding rules

// Expected elements from the logical layouts of op(A), op(B), C, |X| and this rank's x coordinate.
using Expect = std::function<Bytes(const Layout&, const Layout&, const Layout&, int u, int me)>;
struct ShardedCase {
  const char* name;
  const char *a, *b, *c;  // logical layouts of op(A), op(B), C
  Shape s;
  Expect want;
};

Bytes nothing(const Layout&, const Layout&, const Layout&, int, int) { return {}; }

const ShardedCase kShardedCases[] = {
    {"case 1: no communication", "A[I_X,J]", "B[J,K_Y]", "C[I_X,K_Y]", {13, 11, 7}, nothing},
    {"case 2: partial sums stay unreduced", "A[I,J_X]", "B[J_X,K]", "C[I,K]{U_X}", {9, 8, 14},
     nothing},
    {"case 3: reduce-scatter (a ring): every C tile out but mine, in but my predecessor's",
     "A[I,J_X]", "B[J_X,K]", "C[I_X,K]", {13, 5, 11},
     [](const Layout&, const Layout&, const Layout& C, int u, int me) {
       const index_t tile = C.row_map().local_extent(me) * C.cols();
       const index_t before = C.row_map().local_extent((me + u - 1) % u) * C.cols();
       return Bytes{C.rows() * C.cols() - tile, C.rows() * C.cols() - before};
     }},
    {"only A sharded on k, small k: all-gather A", "A[I,J_X]", "B[J,K]", "C[I,K]", {6, 20, 3},
     [](const Layout& A, const Layout&, const Layout&, int u, int me) {
       const index_t mine = A.rows() * A.col_map().local_extent(me);
       return Bytes{mine * (u - 1), A.rows() * A.cols() - mine};
     }},
    {"only A sharded on k, large k: slice B, all-reduce C", "A[I,J_X]", "B[J,K]", "C[I,K]",
     {6, 2, 40},  // m*n divisible by |X|: all-reduce moves 2 (|X|-1)/|X| of C each way
     [](const Layout&, const Layout&, const Layout& C, int u, int) {
       const index_t words = 2 * C.rows() * C.cols() * (u - 1) / u;
       return Bytes{words, words};
     }},
    {"case 4: I and K both on X, C wants I: all-gather B", "A[I_X,J]", "B[J,K_X]", "C[I_X,K]",
     {10, 7, 5},
     [](const Layout&, const Layout& B, const Layout&, int u, int me) {
       const index_t mine = B.rows() * B.col_map().local_extent(me);
       return Bytes{mine * (u - 1), B.rows() * B.cols() - mine};
     }},
};

TYPED_TEST(Traffic, ShardingRules) {
  const Mesh mesh = tall_grid();  // |X| >= 2 whenever P >= 2
  const int u = mesh.shape().sizes[0], me = mesh.coords()[0];
  Options o;
  o.algorithm = Algorithm::Sharded;
  for (const auto& sc : kShardedCases)
    for (const auto& [opA, opB] : {std::pair{Op::N, Op::N}, std::pair{Op::C, Op::T}}) {
      const Shape s = sc.s;
      const auto what = describe(sc.name, mesh, opA, opB, s) + " " + sc.a + " . " + sc.b +
                        " -> " + sc.c;
      const auto r = run<TypeParam>(mesh, opA, opB, s, sc.a, sc.b, sc.c, o, what);
      expect_bytes<TypeParam>(r,
                              sc.want(logical(mesh, s.m, s.k, sc.a), logical(mesh, s.k, s.n, sc.b),
                                      logical(mesh, s.m, s.n, sc.c), u, me),
                              what);
    }
}

// ---------------------------------------------------------------- redistribution

// A in a layout SUMMA cannot use: it is redistributed (counted as redistribution) into
// [I as C's rows, K block over Y]; the rest of the traffic is SUMMA's formula on that layout.
TYPED_TEST(Traffic, ForeignLayoutIsRedistributed) {
  using T = TypeParam;
  const Shape s{17, 13, 19};
  const std::string a = "A[I_Y,K_X]", b = "B[K_X:bc2+0,J_Y:bc3+0]", c = "C[I_X:bc2+0,J_Y:bc3+0]";
  Options o;
  o.algorithm = Algorithm::Summa;
  o.stationary = Stationary::C;
  for (const Mesh& mesh : grids()) {
    const auto what = describe("summa, A foreign", mesh, Op::N, Op::N, s);
    const auto r = run<T>(mesh, Op::N, Op::N, s, a, b, c, o, what);
    std::int64_t mine[2] = {r.redist_bytes_sent, r.redist_bytes_received}, all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(all[0], all[1]) << what;
    if (world_size() > 1) {
      EXPECT_GT(all[0], 0) << "nothing reported as redistribution: " << what;
    }
    const auto size = static_cast<std::int64_t>(sizeof(T));
    const Bytes algo = summa_bytes(logical(mesh, s.m, s.n, c),
                                   logical(mesh, s.m, s.k, "A[I_X:bc2+0,K_Y]").map(1),
                                   logical(mesh, s.k, s.n, b).map(0), mesh.coords());
    EXPECT_EQ(r.bytes_sent - r.redist_bytes_sent, algo.sent * size)
        << what << "\n" << r.to_string();
    EXPECT_EQ(r.bytes_received - r.redist_bytes_received, algo.received * size)
        << what << "\n" << r.to_string();
  }
}

}  // namespace
