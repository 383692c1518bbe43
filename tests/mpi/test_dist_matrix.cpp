// DistMatrix on the world mesh: local extents, global indices, fill, gather, scatter and at()
// for all four scalar types over representative layouts (ref::grid_specs / ref::line_specs)
// and sizes 0, 1, 7, 97 and 1000x3; views of caller memory with a padded leading dimension;
// meshes with idle ranks; gather/scatter through the split-message path. Every local element
// is checked against entry(i, j) of the global index the reference model assigns to it.
#include <algorithm>
#include <complex>
#include <string>
#include <vector>

#include "core/instantiate.hpp"
#include "mpi/mpi_test_util.hpp"
#include "mpi/ref_layout.hpp"

namespace shardmm::testing {
namespace {

using Shape = std::pair<index_t, index_t>;
const std::vector<Shape> kShapes = {{0, 0},   {0, 5},   {5, 0},    {1, 1},   {7, 7},
                                    {97, 13}, {13, 97}, {1000, 3}, {3, 1000}};

template <class T>
T sentinel() {
  return T(-99.5);
}

// `global` (column-major) holds want(i, j) on `root` and nothing elsewhere.
template <class T, class F>
void expect_gathered(const std::vector<T>& global, const ref::Model& M, int root, F&& want) {
  const index_t m = M.extent(0), n = M.extent(1);
  if (world_rank() != root) {
    EXPECT_TRUE(global.empty()) << "gather leaves non-root ranks empty: " << M.name();
    return;
  }
  ASSERT_EQ(static_cast<index_t>(global.size()), m * n) << M.name();
  int bad = 0;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i)
      bad += global[static_cast<std::size_t>(i + j * m)] != want(i, j);
  EXPECT_EQ(bad, 0) << "gathered elements differ from entry(i, j): " << M.name();
}

template <class T>
std::vector<T> global_on_root(const ref::Model& M, int root, int seed) {
  std::vector<T> g;
  if (world_rank() != root) return g;
  for (index_t j = 0; j < M.extent(1); ++j)
    for (index_t i = 0; i < M.extent(0); ++i) g.push_back(entry<T>(i, j, seed));
  return g;
}

template <class T>
void check_indices(const DistMatrix<T>& A, const ref::Model& M) {
  const int me = world_rank();
  const auto rows = M.owned(0, me), cols = M.owned(1, me);
  EXPECT_EQ(A.ld(), std::max<index_t>(1, A.local_rows()));
  for (std::size_t k = 0; k < rows.size(); ++k)
    EXPECT_EQ(A.global_row(static_cast<index_t>(k)), rows[k]) << M.name();
  for (std::size_t k = 0; k < cols.size(); ++k)
    EXPECT_EQ(A.global_col(static_cast<index_t>(k)), cols[k]) << M.name();
}

// A few elements through at() (collective: every rank asks for the same ones).
template <class T>
void check_at(const DistMatrix<T>& A, const ref::Model& M, int seed) {
  const index_t m = M.extent(0), n = M.extent(1);
  if (m == 0 || n == 0) return;
  for (const auto& [i, j] : {Shape{0, 0}, Shape{m - 1, n - 1}, Shape{m / 2, n / 3}})
    EXPECT_EQ(A.at(i, j), entry<T>(i, j, seed)) << "at(" << i << "," << j << ") " << M.name();
}

template <class T>
void round_trip(const Mesh& mesh, const ref::Model& M) {
  const int root = static_cast<int>((M.extent(0) + M.extent(1)) % mesh.size());
  auto f0 = [](index_t i, index_t j) { return entry<T>(i, j, 0); };
  auto f1 = [](index_t i, index_t j) { return entry<T>(i, j, 1); };
  DistMatrix<T> A(mesh, M.layout());
  ref::expect_local(
      A, M, [](index_t, index_t) { return T(0); }, "new matrix is zero");
  check_indices(A, M);
  A.fill(f0);
  ref::expect_local(A, M, f0, "fill");
  expect_gathered(A.gather(root), M, root, f0);
  DistMatrix<T> B(mesh, M.layout());
  B.scatter(global_on_root<T>(M, root, 1), root);
  ref::expect_local(B, M, f1, "scatter");
  expect_gathered(B.gather(0), M, 0, f1);
  check_at(B, M, 1);
}

struct World {
  Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  Mesh line = Mesh::line(MPI_COMM_WORLD);

  // (mesh, spec) for every representative layout.
  [[nodiscard]] std::vector<std::pair<const Mesh*, ref::Spec>> layouts() const {
    std::vector<std::pair<const Mesh*, ref::Spec>> out;
    for (const auto& s : ref::grid_specs(grid.shape().sizes[0], grid.shape().sizes[1]))
      out.emplace_back(&grid, s);
    for (const auto& s : ref::line_specs(line.size())) out.emplace_back(&line, s);
    return out;
  }
};

template <class T>
class DistMatrixTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(DistMatrixTyped, ScalarTypes);

TYPED_TEST(DistMatrixTyped, FillGatherScatterRoundTrip) {
  const World w;
  for (const auto& [mesh, spec] : w.layouts())
    for (const auto& [m, n] : kShapes)
      round_trip<TypeParam>(*mesh, ref::Model(mesh->shape(), m, n, spec));
}

// A view writes only the local tile inside caller memory; the padding rows stay untouched.
template <class T>
void check_view(const Mesh& mesh, const ref::Model& M) {
  const int me = world_rank();
  const auto lr = static_cast<index_t>(M.owned(0, me).size());
  const auto lc = static_cast<index_t>(M.owned(1, me).size());
  const index_t ld = lr + 3;
  std::vector<T> buf(static_cast<std::size_t>(std::max<index_t>(1, ld * lc)), sentinel<T>());
  DistMatrix<T> V = DistMatrix<T>::view(mesh, M.layout(), buf.data(), ld);
  EXPECT_TRUE(V.is_view());
  EXPECT_EQ(V.data(), buf.data());
  EXPECT_EQ(V.ld(), ld);
  auto f2 = [](index_t i, index_t j) { return entry<T>(i, j, 2); };
  V.scatter(global_on_root<T>(M, 0, 2), 0);
  ref::expect_local(V, M, f2, "scatter into a view");
  V.fill(f2);
  ref::for_each_local(M, me, [&](index_t il, index_t jl, index_t i, index_t j) {
    EXPECT_EQ(buf[static_cast<std::size_t>(il + jl * ld)], M.holds_value(me) ? f2(i, j) : T(0));
  });
  int padding_changed = 0;
  for (index_t j = 0; j < lc; ++j)
    for (index_t i = lr; i < ld; ++i)
      padding_changed += buf[static_cast<std::size_t>(i + j * ld)] != sentinel<T>();
  EXPECT_EQ(padding_changed, 0) << M.name();
  expect_gathered(V.gather(0), M, 0, f2);
  check_at(V, M, 2);
}

TYPED_TEST(DistMatrixTyped, ViewOfCallerMemoryWithPaddedLd) {
  const World w;
  for (const auto& [mesh, spec] : w.layouts())
    for (const auto& [m, n] : {Shape{0, 3}, Shape{7, 7}, Shape{97, 5}})
      check_view<TypeParam>(*mesh, ref::Model(mesh->shape(), m, n, spec));
}

// A view whose local tile is empty may pass null data; it is still a view (no storage of its
// own, reshape() refused).
TEST(DistMatrix, ViewOfEmptyTileIsAView) {
  const Mesh mesh = Mesh::line(MPI_COMM_WORLD);
  const ref::Model M(mesh.shape(), 0, 4, ref::spec(ref::blk("X"), ref::rep()));
  DistMatrix<float> V = DistMatrix<float>::view(mesh, M.layout(), nullptr, 1);
  EXPECT_TRUE(V.is_view());
  EXPECT_THROW(V.reshape(M.layout()), InvalidArgument);
}

TYPED_TEST(DistMatrixTyped, OwningWithLargerLd) {
  using T = TypeParam;
  const World w;
  const ref::Model M(w.grid.shape(), 9, 4, ref::spec(ref::cyc("X"), ref::blk("Y")));
  const index_t ld = static_cast<index_t>(M.owned(0, world_rank()).size()) + 5;
  DistMatrix<T> A(w.grid, M.layout(), ld);
  EXPECT_EQ(A.ld(), ld);
  EXPECT_FALSE(A.is_view());
  auto f = [](index_t i, index_t j) { return entry<T>(i, j, 3); };
  A.fill(f);
  ref::expect_local(A, M, f, "fill with padded ld");
  expect_gathered(A.gather(0), M, 0, f);
}

// Surplus ranks of an allow_idle mesh hold nothing and skip the collectives.
TEST(DistMatrix, IdleRanksHoldNothing) {
  const int P = world_size(), me = world_rank();
  const int active = P > 1 ? P - 1 : 1;
  const Mesh mesh(MPI_COMM_WORLD, MeshShape({"x"}, {active}), true);
  const ref::Model M(mesh.shape(), 11, 3, ref::spec(ref::cyc("X"), ref::rep()));
  DistMatrix<double> A(mesh, M.layout());
  auto f = [](index_t i, index_t j) { return entry<double>(i, j, 4); };
  A.fill(f);
  if (me >= active) {
    EXPECT_EQ(A.local_rows() * A.local_cols(), 0);
    EXPECT_TRUE(A.gather(0).empty());
    return;
  }
  ref::expect_local(A, M, f, "fill on an idle mesh");
  expect_gathered(A.gather(0), M, 0, f);
  EXPECT_EQ(A.at(10, 2), f(10, 2));
}

// gather / scatter with messages of at most 3 elements (comm::alltoallv's split path).
TEST(DistMatrix, SplitMessages) {
  const World w;
  const ref::ScopedMessageLimit limit(3);
  for (const auto& [mesh, spec] : w.layouts())
    round_trip<std::complex<double>>(*mesh, ref::Model(mesh->shape(), 23, 7, spec));
}

}  // namespace
}  // namespace shardmm::testing
