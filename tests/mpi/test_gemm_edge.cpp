// gemm corner cases for every algorithm: beta = 0 never reads C (NaN-filled C), alpha = 0 and
// k = 0 only scale C (alpha = 0 never reads A or B), m = 0 / n = 0 do nothing, matrices
// smaller than the grid, bitwise determinism, and bad input failing the same way everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

#include "mpi/gemm_check.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

struct Shape {
  index_t m, n, k;
};

enum class MeshKind { Grid, Line, Square };

// One way to run gemm: algorithm + options, the mesh it needs, and operand layouts that are
// already the algorithm's own ("native", op N) -- the foreign layouts are block-cyclic.
struct Config {
  const char* name;
  Algorithm algorithm;
  MeshKind mesh;
  RingForm form;
  Stationary stationary;
  bool bidirectional;
  const char *a, *b, *c;
};
constexpr auto kAnyForm = RingForm::Auto;
constexpr auto kAnyVariant = Stationary::Auto;
const Config kConfigs[] = {
    {"local", Algorithm::Local, MeshKind::Grid, kAnyForm, kAnyVariant, false, "A[I,K]", "B[K,J]",
     "C[I,J]"},
    {"summa C-stationary", Algorithm::Summa, MeshKind::Grid, kAnyForm, Stationary::C, false,
     "A[I_X,K_Y]", "B[K_X,J_Y]", "C[I_X,J_Y]"},
    {"summa A-stationary", Algorithm::Summa, MeshKind::Grid, kAnyForm, Stationary::A, false,
     "A[I_X,K_Y]", "B[K_X,J_Y]", "C[I_X,J_Y]"},
    {"summa B-stationary", Algorithm::Summa, MeshKind::Grid, kAnyForm, Stationary::B, false,
     "A[I_X,K_Y]", "B[K_X,J_Y]", "C[I_X,J_Y]"},
    {"cannon", Algorithm::Cannon, MeshKind::Square, kAnyForm, kAnyVariant, false, "A[I_X,K_Y]",
     "B[K_X,J_Y]", "C[I_X,J_Y]"},
    {"ring allgather-A", Algorithm::Ring, MeshKind::Line, RingForm::AllGatherA, kAnyVariant, false,
     "A[I_X,K]", "B[K,J_X]", "C[I,J_X]"},
    {"ring allgather-B bidirectional", Algorithm::Ring, MeshKind::Line, RingForm::AllGatherB,
     kAnyVariant, true, "A[I_X,K]", "B[K,J_X]", "C[I_X,J]"},
    {"ring reduce-scatter", Algorithm::Ring, MeshKind::Line, RingForm::ReduceScatter, kAnyVariant,
     false, "A[I,K_X]", "B[K_X,J]", "C[I_X,J]"},
    {"sharded reduce-scatter", Algorithm::Sharded, MeshKind::Grid, kAnyForm, kAnyVariant, false,
     "A[I,K_X]", "B[K_X,J]", "C[I_X,J]"},
    {"sharded local", Algorithm::Sharded, MeshKind::Grid, kAnyForm, kAnyVariant, false, "A[I_X,K]",
     "B[K,J_Y]", "C[I_X,J_Y]"},
    {"2.5d", Algorithm::Gemm25D, MeshKind::Grid, kAnyForm, kAnyVariant, false, "A[I_X,K_Y]",
     "B[K_X,J_Y]", "C[I_X,J_Y]"},
    {"auto", Algorithm::Auto, MeshKind::Grid, kAnyForm, kAnyVariant, false, "A[I_Y,K_X]",
     "B[K_Y,J_X]", "C[I_Y,J_X]"},
};

int square_side() { return static_cast<int>(std::floor(std::sqrt(double(world_size())) + 1e-9)); }

// Grid: {x: f0, y: f1}, f0 >= f1 the near-square factors; Square: q x q (surplus ranks idle).
Mesh make_mesh(MeshKind kind) {
  if (kind == MeshKind::Line) return Mesh::line(MPI_COMM_WORLD, "x");
  if (kind == MeshKind::Square)
    return Mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {square_side(), square_side()}), true);
  const auto f = factor_near_square(world_size(), 2);
  return Mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {f[0], f[1]}));
}

// make_mesh's mesh of each kind, made once per process (a mesh is a handle; never destroyed,
// so no communicator is freed after MPI_Finalize): the sweeps' problems share them.
Mesh shared_mesh(MeshKind kind) {
  static auto* const made = new std::map<MeshKind, Mesh>();
  if (const auto it = made->find(kind); it != made->end()) return it->second;
  return made->emplace(kind, make_mesh(kind)).first->second;
}

Options options_for(const Config& c) {
  Options o;
  o.algorithm = c.algorithm;
  o.ring_form = c.form;
  o.stationary = c.stationary;
  o.bidirectional = c.bidirectional;
  if (c.algorithm != Algorithm::Ring) o.panel = 2;  // the ring's chunk is its own
  o.stationary_chunk = 2, o.ring_chunk = 2;
  return o;
}

// Operands of one call, in native layouts (opA = opB = N only) or foreign block-cyclic ones.
template <Scalar T>
struct Problem {
  Mesh mesh;
  Op opA, opB;
  Shape s;
  DistMatrix<T> A, B, C;

  Problem(const Config& cfg, Op oa, Op ob, Shape sh, bool native)
      : mesh(shared_mesh(cfg.mesh)),
        opA(oa),
        opB(ob),
        s(sh),
        A(mesh, layout(native, cfg.a, oa == Op::N ? s.m : s.k, oa == Op::N ? s.k : s.m)),
        B(mesh, layout(native, cfg.b, ob == Op::N ? s.k : s.n, ob == Op::N ? s.n : s.k)),
        C(mesh, layout(native, cfg.c, s.m, s.n)) {
    A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
    B.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
    C.fill([](index_t i, index_t j) { return entry<T>(i, j, 3); });
  }
  Layout layout(bool native, const char* spec, index_t rows, index_t cols) const {
    if (native) return Layout(mesh.shape(), rows, cols, spec);
    if (mesh.shape().ndims() == 1) return Layout(mesh.shape(), rows, cols, "[I_X:bc2+0,J]");
    return Layout::block_cyclic(mesh.shape(), rows, cols, 2, 3, 0, mesh.shape().sizes[1] - 1);
  }
  GemmReport run(const Config& cfg, T alpha, T beta) {
    return gemm(opA, opB, alpha, A, B, beta, C, options_for(cfg));
  }
};

template <Scalar T>
T nan_value() {
  return T(std::numeric_limits<real_t<T>>::quiet_NaN());
}

// True on every rank when every element of the gathered C is finite.
template <Scalar T>
bool all_finite(const DistMatrix<T>& C) {
  const auto c = C.gather();
  int ok = 1;
  for (const T& v : c) ok &= std::isfinite(std::abs(v)) ? 1 : 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok != 0;
}

std::string what(const Config& cfg, Op opA, Op opB, Shape s, bool native) {
  return std::string(cfg.name) + " op " + to_string(opA) + to_string(opB) +
         " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
         (native ? " native layouts" : " block-cyclic layouts") +
         " on P=" + std::to_string(world_size());
}

// The variants each test runs per configuration: native N N, foreign N N and foreign T C.
struct Variant {
  Op opA, opB;
  bool native;
};
constexpr Variant kVariants[] = {
    {Op::N, Op::N, true}, {Op::N, Op::N, false}, {Op::T, Op::C, false}};

template <class T>
class GemmEdge : public ::testing::Test {};
using Types = ::testing::Types<double, std::complex<float>>;
TYPED_TEST_SUITE(GemmEdge, Types);

// beta = 0: C's NaNs must not leak into the result (BLAS semantics), on every code path.
TYPED_TEST(GemmEdge, NanCWithBetaZero) {
  using T = TypeParam;
  const Shape s{11, 7, 5};
  for (const Config& cfg : kConfigs)
    for (const Variant& v : kVariants) {
      Problem<T> p(cfg, v.opA, v.opB, s, v.native);
      p.C.fill([](index_t, index_t) { return nan_value<T>(); });
      const T alpha(real_t<T>(1.25));
      p.run(cfg, alpha, T(0));
      const auto w = what(cfg, v.opA, v.opB, s, v.native);
      EXPECT_TRUE(all_finite(p.C)) << "NaN from C leaked with beta = 0: " << w;
      const std::vector<T> zeros(static_cast<std::size_t>(s.m * s.n), T(0));
      EXPECT_LE(gemm_error(v.opA, v.opB, alpha, p.A, p.B, T(0), zeros, p.C), 10.0) << w;
    }
}

// C must equal beta * C0 elementwise (one rounding of a product).
template <Scalar T>
void expect_scaled(const DistMatrix<T>& C, const std::vector<T>& c0, T beta, const std::string& w) {
  const auto c = C.gather();
  double worst = 0;
  for (std::size_t e = 0; e < c.size(); ++e) {
    const T want = beta * c0[e];
    const double err = double(std::abs(c[e] - want)) / std::max(double(std::abs(want)), 1e-30);
    worst = std::max(worst, std::isnan(err) ? 1e300 : err);
  }
  MPI_Bcast(&worst, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  EXPECT_LE(worst, 4 * std::numeric_limits<real_t<T>>::epsilon()) << w;
}

// alpha = 0 (A and B full of NaN: never read) and k = 0: C <- beta * C, no communication.
TYPED_TEST(GemmEdge, AlphaZeroAndKZeroOnlyScale) {
  using T = TypeParam;
  const T betas[] = {T(real_t<T>(2.5)), T(0)};
  for (const Config& cfg : kConfigs)
    for (const Variant& v : kVariants)
      for (const Shape s : {Shape{9, 6, 4}, Shape{9, 6, 0}})
        for (const T beta : betas) {
          Problem<T> p(cfg, v.opA, v.opB, s, v.native);
          if (beta == T(0)) p.C.fill([](index_t, index_t) { return nan_value<T>(); });
          const auto c0 = beta == T(0) ? std::vector<T>(static_cast<std::size_t>(s.m * s.n), T(0))
                                       : p.C.gather();
          const T alpha = s.k == 0 ? T(real_t<T>(3)) : T(0);
          if (s.k > 0) {
            p.A.fill([](index_t, index_t) { return nan_value<T>(); });
            p.B.fill([](index_t, index_t) { return nan_value<T>(); });
          }
          const auto r = p.run(cfg, alpha, beta);
          const auto w = what(cfg, v.opA, v.opB, s, v.native) +
                         " |alpha|=" + std::to_string(std::abs(alpha)) +
                         " |beta|=" + std::to_string(std::abs(beta));
          expect_scaled(p.C, c0, beta, w);
          EXPECT_EQ(r.bytes_sent, 0) << w;
          EXPECT_EQ(r.bytes_received, 0) << w;
        }
}

// m = 0 or n = 0: nothing happens (no error, no traffic, no hang).
TYPED_TEST(GemmEdge, EmptyResultDoesNothing) {
  using T = TypeParam;
  for (const Config& cfg : kConfigs)
    for (const Variant& v : kVariants)
      for (const Shape s : {Shape{0, 5, 3}, Shape{4, 0, 3}, Shape{0, 0, 0}}) {
        Problem<T> p(cfg, v.opA, v.opB, s, v.native);
        const auto b0 = p.B.gather();
        const auto r = p.run(cfg, T(1), T(real_t<T>(2)));
        const auto w = what(cfg, v.opA, v.opB, s, v.native);
        EXPECT_EQ(r.bytes_sent + r.bytes_received, 0) << w;
        EXPECT_EQ(p.C.local_rows() * p.C.local_cols(), 0) << w;
        EXPECT_TRUE(p.B.gather() == b0) << "B changed: " << w;
      }
}

// Matrices with fewer rows / columns / k than the grid has processes along them.
TYPED_TEST(GemmEdge, SmallerThanTheGrid) {
  using T = TypeParam;
  const Shape shapes[] = {{1, 1, 1}, {2, 1, 3}, {1, 3, 2}, {2, 2, 1}, {3, 1, 1}};
  const T alpha(real_t<T>(-1.5)), beta(real_t<T>(0.5));
  std::size_t i = 0;  // on more than 2 ranks each case runs in one of the types (type_takes_case)
  for (const Config& cfg : kConfigs)
    for (const Variant& v : kVariants)
      for (const Shape& s : shapes) {
        if (!type_takes_case<T>(i++)) continue;
        Problem<T> p(cfg, v.opA, v.opB, s, v.native);
        const auto c0 = p.C.gather();
        p.run(cfg, alpha, beta);
        EXPECT_LE(gemm_error(v.opA, v.opB, alpha, p.A, p.B, beta, c0, p.C), 10.0)
            << what(cfg, v.opA, v.opB, s, v.native);
      }
}

// Same inputs, mesh and options twice: bitwise identical local tiles of C.
TYPED_TEST(GemmEdge, DeterministicBitwise) {
  using T = TypeParam;
  const Shape s{23, 19, 31};
  const T alpha(real_t<T>(0.75)), beta(real_t<T>(-1.25));
  for (const Config& cfg : kConfigs)
    for (const Variant& v : kVariants) {
      Problem<T> p(cfg, v.opA, v.opB, s, v.native);
      DistMatrix<T> C2 = p.C;  // deep copy
      p.run(cfg, alpha, beta);
      gemm(v.opA, v.opB, alpha, p.A, p.B, beta, C2, options_for(cfg));
      bool same = true;
      for (index_t j = 0; j < C2.local_cols(); ++j)
        same = same && std::memcmp(&p.C.local(0, j), &C2.local(0, j),
                                   static_cast<std::size_t>(C2.local_rows()) * sizeof(T)) == 0;
      EXPECT_TRUE(same) << "two identical runs differ on rank " << world_rank() << ": "
                        << what(cfg, v.opA, v.opB, s, v.native);
    }
}

// ---------------------------------------------------------------- bad input

using E = DistMatrix<double>;

TEST(GemmEdgeErrors, InnerDimensionsDiffer) {
  const Mesh mesh = make_mesh(MeshKind::Grid);
  E A(mesh, 5, 7, "A[I_X,K_Y]"), B(mesh, 6, 3, "B[K_X,J_Y]"), C(mesh, 5, 3, "C[I_X,J_Y]");
  for (const char* part : {"5x7", "6x3"})  // both operands' shapes are named
    expect_same_error_everywhere<DimensionMismatch>([&] { gemm(Op::N, Op::N, 1.0, A, B, 0.0, C); },
                                                    part);
  // With op T on A the inner dimension is A's row count: 5 != 6.
  expect_same_error_everywhere<DimensionMismatch>([&] { gemm(Op::T, Op::N, 1.0, A, B, 0.0, C); });
}

TEST(GemmEdgeErrors, WrongShapeOfC) {
  const Mesh mesh = make_mesh(MeshKind::Grid);
  E A(mesh, 5, 7, "A[I_X,K_Y]"), B(mesh, 7, 3, "B[K_X,J_Y]");
  for (const auto& [m, n] : {std::pair<index_t, index_t>{3, 5}, {5, 4}, {4, 3}}) {
    E C(mesh, m, n, "C[I_X,J_Y]");
    expect_same_error_everywhere<DimensionMismatch>([&] { gemm(Op::N, Op::N, 1.0, A, B, 0.0, C); },
                                                    "5x3");
  }
}

TEST(GemmEdgeErrors, OperandsOnDifferentMeshObjects) {
  const Mesh m1 = make_mesh(MeshKind::Grid), m2 = make_mesh(MeshKind::Grid);  // equal shapes
  E A(m1, 4, 4, "A[I_X,K_Y]"), B(m1, 4, 4, "B[K_X,J_Y]"), C(m1, 4, 4, "C[I_X,J_Y]");
  E B2(m2, 4, 4, "B[K_X,J_Y]"), C2(m2, 4, 4, "C[I_X,J_Y]");
  expect_same_error_everywhere<InvalidArgument>([&] { gemm(Op::N, Op::N, 1.0, A, B2, 0.0, C); });
  expect_same_error_everywhere<InvalidArgument>([&] { gemm(Op::N, Op::N, 1.0, A, B, 0.0, C2); });
}

TEST(GemmEdgeErrors, CannonNeedsASquareMesh) {
  Options o;
  o.algorithm = Algorithm::Cannon;
  const Mesh line = make_mesh(MeshKind::Line);  // never square: 1 axis
  E A(line, 4, 4, "A[I_X,K]"), B(line, 4, 4, "B[K,J_X]"), C(line, 4, 4, "C[I_X,J]");
  expect_same_error_everywhere<NotSupported>([&] { gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o); });
}

TEST(GemmEdgeErrors, CannonRefusesANonSquareGrid) {
  const int q = square_side();
  if (q * q == world_size())
    GTEST_SKIP() << "the 2D grid of " << world_size() << " ranks is square";
  Options o;
  o.algorithm = Algorithm::Cannon;
  const Mesh grid = make_mesh(MeshKind::Grid);
  E A2(grid, 4, 4, "A[I_X,K_Y]"), B2(grid, 4, 4, "B[K_X,J_Y]"), C2(grid, 4, 4, "C[I_X,J_Y]");
  expect_same_error_everywhere<NotSupported>([&] { gemm(Op::N, Op::N, 1.0, A2, B2, 0.0, C2, o); },
                                             "square");
}

// Without Options::ring_axis on a mesh with two axes longer than 1 the ring runs along the
// longest (the first of equals) and says so; on a line along its one long axis.
TEST(GemmEdgeRing, RingWithoutAnAxisRunsAlongTheLongest) {
  Options o;
  o.algorithm = Algorithm::Ring;
  const Mesh grid = make_mesh(MeshKind::Grid);
  E A(grid, 4, 4, "A[I_X,K]"), B(grid, 4, 4, "B[K,J_X]"), C(grid, 4, 4, "C[I,J_X]");
  const auto& sizes = grid.shape().sizes;
  const auto longest =
      static_cast<std::size_t>(std::max_element(sizes.begin(), sizes.end()) - sizes.begin());
  const GemmReport r = gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o);
  EXPECT_EQ(r.algorithm, Algorithm::Ring);
  EXPECT_NE(r.grid.find("ring over " + grid.shape().names[longest]), std::string::npos) << r.grid;
  const bool two_long = std::count_if(sizes.begin(), sizes.end(), [](int s) { return s > 1; }) > 1;
  EXPECT_EQ(r.detail.find("chosen as the longest") != std::string::npos, two_long) << r.detail;
  o.ring_axis = "x";  // and with the axis asked, that one
  EXPECT_NE(gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o).grid.find("ring over x"), std::string::npos);
}

// The product of the ring without an axis on 2 x 2, 2 x 3 and 3 x 2 meshes (where the ranks
// make one), every form, block-cyclic operands.
TEST(GemmEdgeRing, RingWithoutAnAxisOn2DMeshes) {
  bool ran = false;
  for (const std::vector<int>& sizes : {std::vector<int>{2, 2}, {2, 3}, {3, 2}}) {
    if (sizes[0] * sizes[1] != world_size()) continue;
    ran = true;
    const Mesh mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, sizes));
    const std::string longest = sizes[1] > sizes[0] ? "y" : "x";
    for (RingForm f : {RingForm::AllGatherA, RingForm::AllGatherB, RingForm::ReduceScatter}) {
      Options o;
      o.algorithm = Algorithm::Ring, o.ring_form = f;
      const auto bc = [&](index_t r, index_t c) {
        return Layout::block_cyclic(mesh.shape(), r, c, 2, 3);
      };
      E A(mesh, bc(7, 5)), B(mesh, bc(5, 9)), C(mesh, bc(7, 9));
      A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
      B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
      C.fill([](index_t i, index_t j) { return entry<double>(i, j, 3); });
      const std::vector<double> c0 = C.gather();
      const GemmReport r = gemm(Op::N, Op::N, 1.5, A, B, -0.5, C, o);
      const std::string what =
          mesh.shape().to_string() + " form " + std::to_string(static_cast<int>(f));
      EXPECT_NE(r.grid.find("ring over " + longest), std::string::npos) << what << ": " << r.grid;
      EXPECT_LE(gemm_error(Op::N, Op::N, 1.5, A, B, -0.5, c0, C), 10.0) << what;
    }
  }
  if (!ran) GTEST_SKIP() << "no 2 x 2, 2 x 3 or 3 x 2 mesh of " << world_size() << " ranks";
}

}  // namespace
