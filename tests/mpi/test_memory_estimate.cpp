// Estimate = measurement: for every algorithm and element type, with the operands already in
// the algorithm's layouts, the workspace pool's high-water mark plus the caller's A, B and C
// on the busiest rank is at most the planner's estimate (resident + added bytes) and at least
// 0.9 x of it. Sizes keep every pool buffer under 2 MiB (the pool rounds those to 64 bytes).
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "algo/algo.hpp"
#include "blas/blas.hpp"
#include "front/resolve.hpp"
#include "memory/workspace.hpp"
#include "mpi/gemm_check.hpp"
#include "mpi/mpi_test_util.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

constexpr index_t M = 192, N = 160, K = 224;

// One algorithm as the test runs it: the options, and the mesh and layouts it reads in place.
struct Case {
  std::string name;
  Options options;
  MeshShape mesh;
  std::optional<algo::Layouts25D> layouts;  // none: the setup's own on `mesh`
  bool polled = false;  // as across nodes (blas::Blocking::on_node): the GEMMs poll
};

MeshShape grid_shape() { return Mesh::grid2d(MPI_COMM_WORLD).shape(); }
MeshShape line_shape() { return MeshShape({"x"}, {world_size()}); }

Options with(Algorithm a) {
  Options o;
  o.algorithm = a;
  return o;
}

std::vector<Case> cases() {
  const int P = world_size();
  std::vector<Case> out;
  out.push_back({"local", with(Algorithm::Local), line_shape(), std::nullopt});
  for (Stationary s : {Stationary::C, Stationary::A, Stationary::B}) {
    Options o = with(Algorithm::Summa);
    o.stationary = s;
    out.push_back({"summa " + std::to_string(int(s)), o, grid_shape(), std::nullopt});
  }
  // The stationary forms streamed in chunks narrower than the default (several chunks, a
  // ragged last one, and one as wide as a tile).
  for (Stationary s : {Stationary::A, Stationary::B})
    for (index_t chunk : {index_t(16), index_t(28), index_t(200)}) {
      Options o = with(Algorithm::Summa);
      o.stationary = s, o.stationary_chunk = chunk;
      out.push_back({"summa " + std::to_string(int(s)) + " chunk " + std::to_string(chunk), o,
                     grid_shape(), std::nullopt});
    }
  // The same chunks as across nodes: the next chunk aligns while this one multiplies.
  for (Stationary s : {Stationary::A, Stationary::B}) {
    Options o = with(Algorithm::Summa);
    o.stationary = s, o.stationary_chunk = 28;
    out.push_back({"summa " + std::to_string(int(s)) + " chunk 28 polled", o, grid_shape(),
                   std::nullopt, true});
  }
  const MeshShape g = grid_shape();
  if (g.sizes[0] == g.sizes[1]) out.push_back({"cannon", with(Algorithm::Cannon), g, std::nullopt});
  if (P > 1)
    for (RingForm f : {RingForm::AllGatherA, RingForm::AllGatherB, RingForm::ReduceScatter}) {
      Options o = with(Algorithm::Ring);
      o.ring_form = f;
      out.push_back({"ring " + std::to_string(int(f)), o, line_shape(), std::nullopt});
    }
  // Every ring form in pieces: at p = 2 the swap's chunks (of k; of C's rows for the sums), at
  // p > 2 passes (over k for the tiles, over C's columns for the sums): several, and a ragged
  // last one.
  if (P > 1)
    for (RingForm f : {RingForm::AllGatherA, RingForm::AllGatherB, RingForm::ReduceScatter})
      for (index_t chunk : {index_t(64), index_t(100)}) {
        Options o = with(Algorithm::Ring);
        o.ring_form = f, o.ring_chunk = chunk;
        out.push_back({"ring " + std::to_string(int(f)) + " chunk " + std::to_string(chunk), o,
                       line_shape(), std::nullopt});
      }
  if (P > 1) {  // 2.5D: two k-slices when P is even, else P
    Options o = with(Algorithm::Gemm25D);
    o.grid_k = P % 2 == 0 ? 2 : P;
    o.grid_m = P / o.grid_k, o.grid_n = 1;
    const auto l = algo::gemm25d_layouts(Op::N, Op::N, M, N, K, o.grid_m, o.grid_n, o.grid_k);
    out.push_back({"25d", o, l.A.mesh(), l});
  }
  Options strassen = with(Algorithm::Strassen);
  strassen.fast_crossover = 64;  // one Winograd level on these tiles
  strassen.strassen_step = StrassenStep::DepthFirst;
  out.push_back({"strassen", strassen, grid_shape(), std::nullopt});
  if (P % 7 == 0) {  // Strassen's breadth-first step: it moves the operands itself
    Options caps = strassen;
    caps.strassen_step = StrassenStep::BreadthFirst;
    const MeshShape line = line_shape();
    out.push_back({"caps", caps, line,
                   algo::Layouts25D{Layout(line, M, K, "A[I_x,K]"), Layout(line, K, N, "B[K,J_x]"),
                                    Layout(line, M, N, "C[I_x,J]")}});
  }
  if (P > 1) {  // the sharding rules: local products, C's partial sums reduce-scattered
    const MeshShape line = line_shape();
    out.push_back({"sharded", with(Algorithm::Sharded), line,
                   algo::Layouts25D{Layout(line, M, K, "A[I,K_x]"), Layout(line, K, N, "B[K_x,J]"),
                                    Layout(line, M, N, "C[I_x,J]")}});
  }
  return out;
}

// The layouts the case's algorithm reads as they are.
algo::Layouts25D native_layouts(const Case& c) {
  if (c.layouts) return *c.layouts;
  algo::Problem p{Op::N, Op::N, M, N, K, Layout(), Layout(), Layout(), c.mesh};
  p = front::remeshed(p, c.mesh);
  const algo::Setup s = front::make_setup(p, c.options);
  return {s.A, s.B, s.C};
}

index_t tile_bytes(const Layout& L, const Mesh& mesh, std::size_t elem) {
  return L.local_rows(mesh.coords()) * L.local_cols(mesh.coords()) * index_t(elem);
}

// The busiest rank's pool high-water mark plus its A, B and C after one gemm from an empty pool.
template <class T>
double measure(const DistMatrix<T>& A, const DistMatrix<T>& B, DistMatrix<T>& C, const Options& o) {
  memory::release();
  gemm(Op::N, Op::N, T(1), A, B, T(0), C, o);
  const Mesh& mesh = C.mesh();
  const double mine =
      double(memory::held_bytes()) +
      double(tile_bytes(A.layout(), mesh, sizeof(T)) + tile_bytes(B.layout(), mesh, sizeof(T)) +
             tile_bytes(C.layout(), mesh, sizeof(T)));
  double most = 0;
  EXPECT_EQ(MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
  return most;
}

template <class T>
void measure_case(const Case& c) {
  const Mesh mesh(MPI_COMM_WORLD, c.mesh);
  const algo::Layouts25D l = native_layouts(c);
  DistMatrix<T> A(mesh, l.A), B(mesh, l.B), C(mesh, l.C);
  A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 3); });
  const algo::Problem p = front::validate(Op::N, Op::N, A, B, C);
  const plan::Request q = front::request_for(p, mesh, dtype_of<T>(), c.options);
  const front::Resolved how = front::resolve(p, q, c.options);
  ASSERT_FALSE(how.remesh) << c.name;
  const algo::Setup setup = front::make_setup(p, how.options);
  ASSERT_TRUE(setup.A.same_distribution(A.layout()) && setup.B.same_distribution(B.layout()) &&
              setup.C.same_distribution(C.layout()))
      << c.name << ": the operands are not in the algorithm's layouts";
  const Candidate predicted = front::predicted(p, setup, q);
  const double estimate = double(plan::resident_bytes(q) + predicted.added_bytes);

  memory::release();
  gemm(Op::N, Op::N, T(1), A, B, T(0), C, how.options);
  const double mine =
      double(memory::held_bytes()) +
      double(tile_bytes(A.layout(), mesh, sizeof(T)) + tile_bytes(B.layout(), mesh, sizeof(T)) +
             tile_bytes(C.layout(), mesh, sizeof(T)));
  double most = 0;
  ASSERT_EQ(MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
  std::string slots;  // which pool slots hold what, for the message
  for (int i = 0; i < int(memory::Slot::Count); ++i)
    if (memory::held_bytes(memory::Slot(i)) > 0)
      slots += " " + std::to_string(i) + ":" +
               std::to_string(memory::held_bytes(memory::Slot(i)) / sizeof(T));
  const std::string what = "elements per slot" + slots + "; " + c.name + " (" + predicted.name() +
                           ", " + to_string(dtype_of<T>()) + ", " + std::to_string(world_size()) +
                           " ranks): measured " + std::to_string(most) + " B, estimated " +
                           std::to_string(estimate) + " B, of which added " +
                           std::to_string(predicted.added_bytes);
  EXPECT_LE(most, estimate) << what;
  EXPECT_GE(most, 0.9 * estimate) << what;
}

template <class T>
void check_case(const Case& c) {
  const blas::Blocking saved = blas::blocking();
  blas::set_blocking({saved.flops, saved.min_width, c.polled});
  measure_case<T>(c);
  blas::set_blocking(saved);
}

template <class T>
class MemoryEstimate : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(MemoryEstimate, Types);

TYPED_TEST(MemoryEstimate, PoolPlusOperandsMatchesThePlanner) {
  for (const Case& c : cases()) check_case<TypeParam>(c);
}

// Operands in other layouts: gemm copies them into the algorithm's (and C back), with the
// redistributions' buffers; the estimate bounds what the pool takes, loosely (each
// redistribution's send and receive buffers are priced as whole tiles).
TYPED_TEST(MemoryEstimate, MovedOperandsStayWithinTheEstimate) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  if (mesh.size() == 1) GTEST_SKIP() << "nothing moves on one rank";
  DistMatrix<T> A(mesh, M, K, "A[I_x,K]"), B(mesh, K, N, "B[K,J_y]"), C(mesh, M, N, "C[I_y,J_x]");
  A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  for (Stationary s : {Stationary::C, Stationary::A}) {
    Options o = with(Algorithm::Summa);
    o.stationary = s;
    const algo::Problem p = front::validate(Op::N, Op::N, A, B, C);
    const plan::Request q = front::request_for(p, mesh, dtype_of<T>(), o);
    const front::Resolved how = front::resolve(p, q, o);
    const algo::Setup setup = front::make_setup(p, how.options);
    const Candidate c = front::predicted(p, setup, q);
    const double estimate = double(plan::resident_bytes(q) + c.added_bytes);
    const double most = measure(A, B, C, how.options);
    const std::string what = c.name() + ": measured " + std::to_string(most) + " B, estimated " +
                             std::to_string(estimate) + " B";
    EXPECT_LE(most, estimate) << what;
    EXPECT_GE(most, 0.6 * estimate) << what;
    if (world_rank() == 0) std::printf("%s (%.2f)\n", what.c_str(), most / estimate);
  }
}

}  // namespace
