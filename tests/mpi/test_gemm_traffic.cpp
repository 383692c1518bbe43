// Bytes moved by gemm (GemmReport, logical convention of src/comm/traffic.hpp) against each
// algorithm's formula, computed here from the operands' layout maps. Operands are already in
// the algorithm's layouts, so nothing is redistributed; every run is also checked against the
// serial oracle and for conservation (bytes sent summed over all ranks == bytes received).
// Last, gemm_output_layout: a C made where the plan works C, so gemm moves no C.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>

#include "core/instantiate.hpp"
#include "front/resolve.hpp"
#include "mpi/traffic_util.hpp"

using namespace shardmm;
using namespace shardmm::testing;
using namespace shardmm::testing::traffic;

namespace {

template <class T>
class Traffic : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
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
  index_t width;  // C-stationary's panel, A/B-stationary's chunk
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
  if (variant == Stationary::C) o.panel = sc.width;
  else o.stationary_chunk = sc.width;
  o.overlap = sc.overlap;
  const std::string name = variant == Stationary::C ? "C" : variant == Stationary::A ? "A" : "B";
  const auto what =
      describe("summa " + name + "-stationary", mesh, sc.opA, sc.opB, sc.s) + " " + a + " " + b;
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
  std::size_t i = 0;  // on more than 2 ranks each case runs in one of the types (type_takes_case)
  for (const Mesh& mesh : grids())
    for (const auto& sc : cases)
      for (Stationary v : {Stationary::C, Stationary::A, Stationary::B})
        if (type_takes_case<TypeParam>(i++)) summa_case<TypeParam>(mesh, sc, v);
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

// An AllGather streamed around the ring of u ranks, pieces of `rows` x the columns each
// coordinate holds: every piece arrives but my own; every piece goes on but my successor's
// (the last one I hold, received from my predecessor).
Bytes ring_pieces(index_t rows, const DimMap& cols, int u, int me) {
  const index_t total = rows * cols.extent;
  return Bytes{total - rows * cols.local_extent((me + 1) % u),
               total - rows * cols.local_extent(me)};
}

const ShardedCase kShardedCases[] = {
    {"case 1: no communication", "A[I_X,J]", "B[J,K_Y]", "C[I_X,K_Y]", {13, 11, 7}, nothing},
    {"case 2: partial sums stay unreduced",
     "A[I,J_X]",
     "B[J_X,K]",
     "C[I,K]{U_X}",
     {9, 8, 14},
     nothing},
    {"case 3: reduce-scatter (a ring): every C tile out but mine, in but my predecessor's",
     "A[I,J_X]",
     "B[J_X,K]",
     "C[I_X,K]",
     {13, 5, 11},
     [](const Layout&, const Layout&, const Layout& C, int u, int me) {
       const index_t tile = C.row_map().local_extent(me) * C.cols();
       const index_t before = C.row_map().local_extent((me + u - 1) % u) * C.cols();
       return Bytes{C.rows() * C.cols() - tile, C.rows() * C.cols() - before};
     }},
    {"only A sharded on k, small k: all-gather A (streamed around the ring: every piece in but "
     "mine, out but my successor's)",
     "A[I,J_X]",
     "B[J,K]",
     "C[I,K]",
     {6, 20, 3},
     [](const Layout& A, const Layout&, const Layout&, int u, int me) {
       return ring_pieces(A.rows(), A.col_map(), u, me);
     }},
    {"only A sharded on k, large k: slice B, all-reduce C",
     "A[I,J_X]",
     "B[J,K]",
     "C[I,K]",
     {6, 2, 40},  // m*n divisible by |X|: all-reduce moves 2 (|X|-1)/|X| of C each way
     [](const Layout&, const Layout&, const Layout& C, int u, int) {
       const index_t words = 2 * C.rows() * C.cols() * (u - 1) / u;
       return Bytes{words, words};
     }},
    {"case 4: I and K both on X, C wants I: all-gather B (streamed)",
     "A[I_X,J]",
     "B[J,K_X]",
     "C[I_X,K]",
     {10, 7, 5},
     [](const Layout&, const Layout& B, const Layout&, int u, int me) {
       return ring_pieces(B.rows(), B.col_map(), u, me);
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
      const auto what =
          describe(sc.name, mesh, opA, opB, s) + " " + sc.a + " . " + sc.b + " -> " + sc.c;
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
    const Bytes algo =
        summa_bytes(logical(mesh, s.m, s.n, c), logical(mesh, s.m, s.k, "A[I_X:bc2+0,K_Y]").map(1),
                    logical(mesh, s.k, s.n, b).map(0), mesh.coords());
    EXPECT_EQ(r.bytes_sent - r.redist_bytes_sent, algo.sent * size) << what << "\n"
                                                                    << r.to_string();
    EXPECT_EQ(r.bytes_received - r.redist_bytes_received, algo.received * size) << what << "\n"
                                                                                << r.to_string();
  }
}

// ---------------------------------------------------------------- a C made for the call

struct OutputCase {
  const char *a, *b;  // logical layouts of op(A), op(B)
  Shape s;
  Op opA, opB;
};
const OutputCase kOutputCases[] = {
    {"[I_X,K]", "[K,J]", {96, 80, 72}, Op::N, Op::N},    // the sharding rule moves nothing
    {"[I,K_X]", "[K_X,J]", {96, 80, 72}, Op::T, Op::N},  // k sharded: the rule replicates C
    {"[I_X,K]", "[K,J_X]", {13, 7, 9}, Op::N, Op::C},    // the rule would use X twice
    {"[I_X:bc2,K_Y:bc3]", "[K_X:bc3,J_Y:bc2]", {40, 36, 44}, Op::N, Op::N},
};

// gemm_output_layout is the layout the plan for a C there works C in (the plan keeps it), or
// the sharding rule's when the plan runs on another arrangement of the ranks; gemm into a C
// made there is right, runs the plan's algorithm, and moves no C. Explicit algorithms get
// their own C: Local a replicated one.
TEST(OutputLayout, IsWhereThePlanWorksC) {
  for (const Mesh& mesh : {Mesh::line(MPI_COMM_WORLD, "x"), tall_grid()})
    for (const OutputCase& c : kOutputCases) {
      if (mesh.shape().ndims() < 2 && std::string(c.a).find('Y') != std::string::npos) continue;
      const Shape s = c.s;
      const auto what = describe("output layout", mesh, c.opA, c.opB, s) + " " + c.a + " . " + c.b;
      DistMatrix<double> A(mesh, stored(c.opA, mesh, s.m, s.k, c.a)),
          B(mesh, stored(c.opB, mesh, s.k, s.n, c.b));
      A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
      B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
      const Layout L = gemm_output_layout(c.opA, c.opB, A, B);
      const algo::Problem p = front::validate(c.opA, c.opB, A, B, L);
      const Options none;
      const front::Resolved how =
          front::resolve(p, front::request_for(p, mesh, Dtype::F64, none), none);
      if (how.remesh) continue;  // C moves anyway (the rule's layout is kept)
      const algo::Setup setup = front::make_setup(p, how.options);
      EXPECT_TRUE(setup.C.same_distribution(L))
          << what << ": " << L.to_string() << " vs the plan's " << setup.C.to_string();
      DistMatrix<double> C(mesh, L);
      const GemmReport r = gemm(c.opA, c.opB, 1.5, A, B, 0.0, C);
      EXPECT_EQ(r.algorithm, setup.algorithm) << what;
      EXPECT_LE(gemm_error(c.opA, c.opB, 1.5, A, B, 0.0, std::vector<double>(s.m * s.n), C), 10.0)
          << what;
      Options local;
      local.algorithm = Algorithm::Local;
      EXPECT_TRUE(gemm_output_layout(c.opA, c.opB, A, B, local)
                      .same_distribution(Layout::replicated(mesh.shape(), s.m, s.n)))
          << what;
    }
}

}  // namespace
