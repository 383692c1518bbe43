// redistribute on the world communicator: every ordered pair of representative layouts on a 2D
// near-square mesh, a 1D mesh and a column-major 2D mesh (so pairs also cross mesh shapes)
// gives the same logical matrix, and the bytes / messages / local copies reported per rank
// equal a brute-force count of who must send what. Also alpha/beta folding, beta = 0 over NaN,
// hand-made unreduced partials, views with padding and the split-message path.
#include <algorithm>
#include <complex>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/instantiate.hpp"
#include "matrix/redistribute_plan.hpp"
#include "mpi/mpi_test_util.hpp"
#include "mpi/ref_layout.hpp"

namespace shardmm::testing {
namespace {

using Shape = std::pair<index_t, index_t>;

struct Case {
  const Mesh* mesh;
  ref::Spec spec;
};

struct World {
  Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  Mesh line = Mesh::line(MPI_COMM_WORLD);
  Mesh colmajor{MPI_COMM_WORLD,
                MeshShape({"x", "y"}, {grid.shape().sizes[1], grid.shape().sizes[0]},
                          MeshShape::Order::ColMajor)};

  [[nodiscard]] int px() const { return grid.shape().sizes[0]; }
  [[nodiscard]] int py() const { return grid.shape().sizes[1]; }
  [[nodiscard]] std::vector<Case> cases() const {
    std::vector<Case> out;
    for (const auto& s : ref::grid_specs(px(), py())) out.push_back({&grid, s});
    for (const auto& s : ref::line_specs(line.size())) out.push_back({&line, s});
    for (const auto& s : colmajor_specs()) out.push_back({&colmajor, s});
    return out;
  }
  [[nodiscard]] std::vector<ref::Spec> colmajor_specs() const {
    using namespace ref;
    return {spec(blk("X"), cyc("Y")), spec(rep(), rep(), "Y"),
            spec(bcyc("YX", 2, 1 % line.size()), rep())};
  }
};

// What this rank must move, counted element by element: for each destination cell d that
// receives (i, j), the senders are the holders of (i, j) in the source layout whose source-mesh
// coordinates on the source's replica axes equal d's (all of them along unreduced axes). Axes
// unreduced in both layouts on one mesh shape keep their partial sums: there only cells with
// the same coordinate exchange, and every cell receives.
struct Expected {
  std::int64_t sent = 0, received = 0, copied = 0;
  std::set<int> peers;
};

bool same_on(const std::vector<int>& a, const std::vector<int>& b, const std::vector<int>& axes) {
  for (int x : axes)
    if (a[x] != b[x]) return false;
  return true;
}

std::vector<int> kept_partials(const ref::Model& S, const ref::Model& D) {
  std::vector<int> out;
  if (!(S.mesh() == D.mesh())) return out;
  for (char a : D.spec().unreduced)
    if (S.spec().unreduced.find(a) != std::string::npos) out.push_back(ref::axis_of(a));
  return out;
}

bool receives_value(const ref::Model& D, const std::vector<int>& kept, int d) {
  for (char a : D.spec().unreduced) {
    const int x = ref::axis_of(a);
    if (std::find(kept.begin(), kept.end(), x) == kept.end() && D.coords(d)[x] != 0) return false;
  }
  return true;
}

Expected expected_moves(const ref::Model& S, const ref::Model& D, int me) {
  Expected e;
  const int P = S.nranks();
  const auto kept = kept_partials(S, D);
  auto senders = S.replica_axes();
  senders.insert(senders.end(), kept.begin(), kept.end());
  for (index_t j = 0; j < S.extent(1); ++j)
    for (index_t i = 0; i < S.extent(0); ++i)
      for (int d = 0; d < P; ++d) {
        if (!D.holds(d, i, j) || !receives_value(D, kept, d)) continue;
        for (int s = 0; s < P; ++s) {
          if (!S.holds(s, i, j) || !same_on(S.coords(s), S.coords(d), senders)) continue;
          e.copied += s == d && d == me;
          if (s == d) continue;
          if (s == me) e.peers.insert(d);
          e.sent += s == me;
          e.received += d == me;
        }
      }
  return e;
}

// Elements of rank s's source tile that rank d's destination tile holds.
std::int64_t shared(const ref::Model& S, const ref::Model& D, int s, int d) {
  std::int64_t n = 0;
  for (index_t j = 0; j < S.extent(1); ++j)
    for (index_t i = 0; i < S.extent(0); ++i) n += S.holds(s, i, j) && D.holds(d, i, j);
  return n;
}

// Partial sums reduced over the exchange axes' group: a ring ReduceScatter (every block out but
// my own, every block in but my predecessor's) or an AllReduce (2 (g - 1) / g of the tile each
// way, counted in bytes as the library counts it).
template <class T>
bool expect_reduction(const RedistStats& st, const ref::Model& S, const ref::Model& D,
                      const std::string& what) {
  const auto plan = matrix::plan_redistribution(S.layout(), D.layout());
  const int me = world_rank();
  const auto group = matrix::group_members(S.mesh(), S.coords(me), plan.axes);
  const auto g = static_cast<std::int64_t>(group.size());
  const auto bytes = static_cast<std::int64_t>(sizeof(T));
  const auto at = std::find(group.begin(), group.end(), me) - group.begin();
  if (plan.pattern == matrix::Pattern::AllReduce) {
    const std::int64_t tile = shared(S, D, me, me), share = tile * bytes * (g - 1) / g;
    EXPECT_EQ(st.bytes_sent, 2 * share) << what;
    EXPECT_EQ(st.bytes_received, 2 * share) << what;
    EXPECT_EQ(st.messages_sent, tile > 0 ? 2 * (g - 1) : 0) << what;
    EXPECT_EQ(st.elements_copied_locally, tile) << what;
    return true;
  }
  if (plan.pattern != matrix::Pattern::ReduceScatter) return false;
  Expected e;
  for (std::int64_t v = 0; v < g; ++v) {
    const std::int64_t block = shared(S, D, me, group[static_cast<std::size_t>(v)]);
    if (v != at) e.sent += block, e.peers.insert(block > 0 ? int(v) : -1);
    if (v != (at + g - 1) % g) e.received += block;
    if (v == at) e.copied = block;
  }
  e.peers.erase(-1);
  EXPECT_EQ(st.bytes_sent, e.sent * bytes) << what;
  EXPECT_EQ(st.bytes_received, e.received * bytes) << what;
  EXPECT_EQ(st.messages_sent, static_cast<std::int64_t>(e.peers.size())) << what;
  EXPECT_EQ(st.elements_copied_locally, e.copied) << what;
  return true;
}

template <class T>
void expect_stats(const RedistStats& st, const ref::Model& S, const ref::Model& D,
                  const std::string& what) {
  if (expect_reduction<T>(st, S, D, what)) return;
  const Expected e = expected_moves(S, D, world_rank());
  const auto bytes = static_cast<std::int64_t>(sizeof(T));
  EXPECT_EQ(st.bytes_sent, e.sent * bytes) << what;
  EXPECT_EQ(st.bytes_received, e.received * bytes) << what;
  EXPECT_EQ(st.messages_sent, static_cast<std::int64_t>(e.peers.size())) << what;
  EXPECT_EQ(st.elements_copied_locally, e.copied) << what;
}

// A source matrix whose logical value is entry(i, j, seed): values on the cells that hold them.
template <class T>
DistMatrix<T> make_source(const Case& c, const ref::Model& S, int seed) {
  DistMatrix<T> A(*c.mesh, S.layout());
  const bool holds = S.holds_value(world_rank());
  ref::set_local(A, S, [&](index_t i, index_t j) { return holds ? entry<T>(i, j, seed) : T(0); });
  return A;
}

template <class T>
void check_pair(const Case& s, const Case& d, index_t m, index_t n) {
  const ref::Model S(s.mesh->shape(), m, n, s.spec), D(d.mesh->shape(), m, n, d.spec);
  const std::string what = S.name() + " -> " + D.name();
  const DistMatrix<T> A = make_source<T>(s, S, 0);
  DistMatrix<T> B(*d.mesh, D.layout());
  const RedistStats st = redistribute(A, B);
  ref::expect_local(
      B, D, [](index_t i, index_t j) { return entry<T>(i, j, 0); }, what);
  expect_stats<T>(st, S, D, what);
}

template <class T>
void check_all_pairs(const std::vector<Case>& cases, const std::vector<Shape>& shapes) {
  for (const auto& [m, n] : shapes)
    for (const Case& s : cases)
      for (const Case& d : cases) check_pair<T>(s, d, m, n);
}

TEST(Redistribute, AllPairsAllSizes) {
  const World w;
  check_all_pairs<double>(w.cases(), {{0, 0}, {0, 4}, {1, 1}, {7, 7}, {97, 11}});
}

// A few pairs at 1000 x 3 and 3 x 1000 (block sizes exceed small extents elsewhere).
TEST(Redistribute, ThousandRows) {
  const World w;
  using namespace ref;
  const std::vector<Case> cases = {{&w.grid, spec(blk("X"), blk("Y"))},
                                   {&w.line, spec(bcyc("X", 5, w.line.size() - 1), rep())},
                                   {&w.grid, spec(rep(), rep(), "Y")},
                                   {&w.colmajor, spec(blk("X"), cyc("Y"))}};
  for (std::size_t k = 0; k < cases.size(); ++k)
    for (const Shape& sh : {Shape{1000, 3}, Shape{3, 1000}})
      check_pair<float>(cases[k], cases[(k + 1) % cases.size()], sh.first, sh.second);
}

template <class T>
class RedistributeTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(RedistributeTyped, ScalarTypes);

// A smaller set for every scalar type (bytes depend on sizeof(T)).
std::vector<Case> few_cases(const World& w) {
  using namespace ref;
  return {{&w.grid, spec(blk("X"), blk("Y"))},
          {&w.grid, spec(bcyc("X", 2, 1 % w.px()), bcyc("Y", 3, 1 % w.py()), "", true)},
          {&w.grid, spec(blk("X"), rep(), "Y")},
          {&w.line, spec(rep(), bcyc("X", 2, 1 % w.line.size()))},
          {&w.line, spec(rep(), rep())},
          {&w.colmajor, spec(rep(), rep(), "Y")}};
}

TYPED_TEST(RedistributeTyped, FewPairs) {
  const World w;
  check_all_pairs<TypeParam>(few_cases(w), {{7, 5}, {13, 2}});
}

// dst = alpha * src + beta * dst; alpha and beta chosen so that every product is exact.
TYPED_TEST(RedistributeTyped, AlphaBetaFolding) {
  using T = TypeParam;
  const World w;
  const std::vector<std::pair<T, T>> coefs = {{T(2), T(-0.5)}, {T(-1), T(1)}, {T(0.5), T(0)}};
  const auto cases = few_cases(w);
  for (const auto& [alpha, beta] : coefs)
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const Case& s = cases[k];
      const Case& d = cases[(k + 2) % cases.size()];
      const ref::Model S(s.mesh->shape(), 9, 6, s.spec), D(d.mesh->shape(), 9, 6, d.spec);
      const DistMatrix<T> A = make_source<T>(s, S, 0);
      DistMatrix<T> B = make_source<T>(d, D, 1);
      (void)redistribute(A, B, alpha, beta);
      // Init-captures: clang before 16 cannot capture a structured binding.
      auto want = [a = alpha, b = beta](index_t i, index_t j) {
        return b * entry<T>(i, j, 1) + a * entry<T>(i, j, 0);
      };
      ref::expect_local(B, D, want,
                        "alpha " + ::testing::PrintToString(alpha) + " beta " +
                            ::testing::PrintToString(beta) + " " + S.name() + " ->");
    }
}

// beta = 0 never reads dst: NaN there does not leak into the result.
TYPED_TEST(RedistributeTyped, BetaZeroOverwritesNaN) {
  using T = TypeParam;
  const World w;
  const auto nan = std::numeric_limits<real_t<T>>::quiet_NaN();
  const auto cases = few_cases(w);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case& s = cases[(k + 1) % cases.size()];
    const ref::Model S(s.mesh->shape(), 8, 5, s.spec),
        D(cases[k].mesh->shape(), 8, 5, cases[k].spec);
    const DistMatrix<T> A = make_source<T>(s, S, 0);
    DistMatrix<T> B(*cases[k].mesh, D.layout());
    ref::set_local(B, D, [&](index_t, index_t) { return T(nan); });
    (void)redistribute(A, B, T(2), T(0));
    ref::expect_local(
        B, D, [](index_t i, index_t j) { return T(2) * entry<T>(i, j, 0); },
        "beta 0 over NaN, from " + S.name() + " to");
  }
}

// Partials that differ per unreduced coordinate k and sum to entry(i, j) up to rounding.
TYPED_TEST(RedistributeTyped, UnreducedSourceIsSummed) {
  using T = TypeParam;
  const double tol = sizeof(real_t<T>) == 4 ? 1e-5 : 1e-12;
  const World w;
  using namespace ref;
  const std::vector<Case> sources = {{&w.grid, spec(blk("X"), rep(), "Y")},
                                     {&w.grid, spec(rep(), cyc("Y"), "X")},
                                     {&w.line, spec(rep(), rep(), "X")},
                                     {&w.colmajor, spec(rep(), rep(), "Y")}};
  const auto targets = few_cases(w);
  for (const Case& s : sources) {
    const ref::Model S(s.mesh->shape(), 11, 4, s.spec);
    const int U = S.unreduced_count(), k = S.unreduced_index(world_rank());
    const auto offset = static_cast<real_t<T>>(0.25 * (2 * k - (U - 1)));
    DistMatrix<T> A(*s.mesh, S.layout());
    set_local(A, S, [&](index_t i, index_t j) {
      return entry<T>(i, j) / T(static_cast<real_t<T>>(U)) + T(offset);
    });
    for (const Case& d : targets) {
      const ref::Model D(d.mesh->shape(), 11, 4, d.spec);
      DistMatrix<T> B(*d.mesh, D.layout());
      (void)redistribute(A, B);
      if (kept_partials(S, D).empty()) {
        expect_local(
            B, D, [](index_t i, index_t j) { return entry<T>(i, j); },
            "sum of partials of " + S.name() + " ->", tol);
        continue;
      }
      // Partial sums kept along the axes unreduced in both: the logical value is their sum.
      const std::vector<T> got = B.gather();
      for (index_t j = 0; j < 4 && world_rank() == 0; ++j)
        for (index_t i = 0; i < 11; ++i)
          EXPECT_NEAR(std::abs(got[static_cast<std::size_t>(i + j * 11)] - entry<T>(i, j)), 0.0,
                      tol * (1 + std::abs(entry<T>(i, j))))
              << "partials of " << S.name() << " kept in " << D.name() << " at " << i << "," << j;
    }
  }
}

// Every exchange split into messages of at most 3 elements.
TEST(Redistribute, SplitMessages) {
  const World w;
  const ref::ScopedMessageLimit limit(3);
  check_all_pairs<std::complex<float>>(few_cases(w), {{23, 7}, {1, 1}});
}

// A destination view with a padded leading dimension: the padding is never written.
TEST(Redistribute, IntoViewKeepsPadding) {
  const World w;
  const Case s{&w.grid, ref::spec(ref::cyc("X"), ref::blk("Y"))};
  for (const Case& d : few_cases(w)) {
    const ref::Model S(s.mesh->shape(), 10, 7, s.spec), D(d.mesh->shape(), 10, 7, d.spec);
    const auto lr = static_cast<index_t>(D.owned(0, world_rank()).size());
    const auto lc = static_cast<index_t>(D.owned(1, world_rank()).size());
    const index_t ld = lr + 2;
    std::vector<double> buf(static_cast<std::size_t>(ld * lc + 1), -7.0);
    DistMatrix<double> B = DistMatrix<double>::view(*d.mesh, D.layout(), buf.data(), ld);
    (void)redistribute(make_source<double>(s, S, 0), B);
    ref::expect_local(
        B, D, [](index_t i, index_t j) { return entry<double>(i, j); }, "into a view");
    int touched = 0;
    for (index_t j = 0; j < lc; ++j)
      for (index_t i = lr; i < ld; ++i)
        touched += buf[static_cast<std::size_t>(i + j * ld)] != -7.0;
    EXPECT_EQ(touched, 0) << "padding written: " << D.name();
  }
}

// redistribute(src, layout, &stats): a new owning matrix on src's mesh.
TEST(Redistribute, ConvenienceOverload) {
  const World w;
  const auto cases = few_cases(w);
  for (const Case& s : cases) {
    const Case d{s.mesh, ref::spec(ref::cyc("X"), ref::rep())};
    const ref::Model S(s.mesh->shape(), 12, 3, s.spec), D(s.mesh->shape(), 12, 3, d.spec);
    RedistStats st;
    const DistMatrix<double> B = redistribute(make_source<double>(s, S, 5), D.layout(), &st);
    EXPECT_TRUE(B.mesh().same_as(*s.mesh));
    ref::expect_local(
        B, D, [](index_t i, index_t j) { return entry<double>(i, j, 5); }, "overload");
    expect_stats<double>(st, S, D, S.name() + " -> " + D.name());
  }
}

}  // namespace
}  // namespace shardmm::testing
