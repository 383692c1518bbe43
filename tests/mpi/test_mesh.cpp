// Mesh on MPI_COMM_WORLD: rank <-> coordinates, axis communicators, idle surplus ranks and the
// line / grid2d factories. Expected coordinates come from an odometer (ref::all_coords) and
// axis-communicator membership from an MPI_Allgather of the members' coordinates.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "comm/mpi_check.hpp"
#include "mpi/mpi_test_util.hpp"
#include "mpi/ref_layout.hpp"

namespace shardmm::testing {
namespace {

using Order = MeshShape::Order;

std::vector<std::string> axis_names(std::size_t n) {
  const std::vector<std::string> all = {"x", "y", "z"};
  return {all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n)};
}

MeshShape shape_of(std::vector<int> sizes, Order order) {
  auto names = axis_names(sizes.size());
  return MeshShape(std::move(names), std::move(sizes), order);
}

// Shapes of exactly P cells: 1D, 2D both ways round, 3D, in both rank orders.
std::vector<MeshShape> world_shapes(int P) {
  const auto f2 = factor_near_square(P, 2);
  const auto f3 = factor_near_square(P, 3);
  const std::vector<std::vector<int>> sizes = {
      {P},      {f2[0], f2[1]},        {f2[1], f2[0]},
      {1, P},   {f3[0], f3[1], f3[2]}, {f3[2], f3[0], f3[1]},
      {1, P, 1}};
  std::vector<MeshShape> out;
  for (const auto& s : sizes)
    for (Order o : {Order::RowMajor, Order::ColMajor}) out.push_back(shape_of(s, o));
  return out;
}

// Every ordered, non-empty selection of distinct axes out of `ndims`.
std::vector<std::vector<int>> axis_groups(int ndims) {
  std::vector<std::vector<int>> out;
  for (int mask = 1; mask < (1 << ndims); ++mask) {
    std::vector<int> g;
    for (int a = 0; a < ndims; ++a)
      if (mask & (1 << a)) g.push_back(a);
    do out.push_back(g);
    while (std::next_permutation(g.begin(), g.end()));
  }
  return out;
}

int flat(const std::vector<int>& coords, const std::vector<int>& axes, const MeshShape& s) {
  int c = 0;
  for (int a : axes) c = c * s.sizes[a] + coords[a];
  return c;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

TEST(Mesh, CoordinatesMatchRankOrder) {
  const int P = world_size(), me = world_rank();
  for (const MeshShape& shape : world_shapes(P)) {
    SCOPED_TRACE(shape.to_string());
    const Mesh mesh(MPI_COMM_WORLD, shape);
    const auto expected = ref::all_coords(shape)[me];
    ASSERT_TRUE(mesh.active());
    EXPECT_EQ(mesh.size(), P);
    EXPECT_EQ(mesh.rank(), me);
    EXPECT_EQ(mesh.coords(), expected);
    EXPECT_EQ(shape.coords_of(me), expected);
    EXPECT_EQ(shape.rank_of(expected), me);
    EXPECT_EQ(comm::comm_size(mesh.comm()), P);
    for (int a = 0; a < shape.ndims(); ++a) {
      EXPECT_EQ(mesh.coord(shape.names[a]), expected[a]);
      EXPECT_EQ(mesh.coord(upper(shape.names[a])), expected[a]) << "axis names ignore case";
      EXPECT_EQ(mesh.axis_size(shape.names[a]), shape.sizes[a]);
    }
  }
}

// Members of axis_comm(axes) differ from me only along `axes`, and member k sits at flattened
// coordinate k over `axes`.
void check_axis_comm(const Mesh& mesh, const std::vector<int>& axes) {
  const MeshShape& s = mesh.shape();
  std::vector<std::string> names;
  int expected_size = 1;
  for (int a : axes) {
    names.push_back(s.names[a]);
    expected_size *= s.sizes[a];
  }
  SCOPED_TRACE("axes " + ::testing::PrintToString(names) + " of " + s.to_string());
  const MPI_Comm c = mesh.axis_comm(names);
  ASSERT_EQ(comm::comm_size(c), expected_size);
  EXPECT_EQ(comm::comm_rank(c), flat(mesh.coords(), axes, s));
  EXPECT_EQ(mesh.axis_comm(names), c) << "axis communicators are cached";
  const auto nd = static_cast<std::size_t>(s.ndims());
  std::vector<int> all(nd * static_cast<std::size_t>(expected_size));
  MPI_Allgather(mesh.coords().data(), s.ndims(), MPI_INT, all.data(), s.ndims(), MPI_INT, c);
  for (int k = 0; k < expected_size; ++k) {
    const std::vector<int> other(all.begin() + static_cast<std::ptrdiff_t>(nd) * k,
                                 all.begin() + static_cast<std::ptrdiff_t>(nd) * (k + 1));
    EXPECT_EQ(flat(other, axes, s), k) << "member " << k;
    for (int a = 0; a < s.ndims(); ++a) {
      if (std::find(axes.begin(), axes.end(), a) != axes.end()) continue;
      EXPECT_EQ(other[a], mesh.coords()[a]) << "member " << k << " differs on axis " << a;
    }
  }
}

TEST(Mesh, AxisCommunicators) {
  for (const MeshShape& shape : world_shapes(world_size())) {
    const Mesh mesh(MPI_COMM_WORLD, shape);
    for (const auto& axes : axis_groups(shape.ndims())) check_axis_comm(mesh, axes);
    EXPECT_EQ(mesh.axis_comm(shape.names[0]), mesh.axis_comm(std::vector{shape.names[0]}));
  }
}

void check_idle_mesh(const MeshShape& shape) {
  SCOPED_TRACE(shape.to_string() + " allow_idle");
  const int me = world_rank();
  const Mesh mesh(MPI_COMM_WORLD, shape, true);
  const bool active = me < shape.size();
  EXPECT_EQ(mesh.active(), active);
  if (!active) {
    EXPECT_EQ(mesh.comm(), MPI_COMM_NULL);
    EXPECT_EQ(mesh.rank(), -1);
    EXPECT_THROW((void)mesh.axis_comm(shape.names[0]), InvalidArgument);
    return;
  }
  EXPECT_EQ(comm::comm_size(mesh.comm()), shape.size());
  EXPECT_EQ(mesh.rank(), me);
  EXPECT_EQ(mesh.coords(), ref::all_coords(shape)[me]);
  for (const auto& axes : axis_groups(shape.ndims())) check_axis_comm(mesh, axes);
}

TEST(Mesh, AllowIdleLeavesSurplusRanksIdle) {
  for (int s = 1; s <= world_size(); ++s) {
    const auto f = factor_near_square(s, 2);
    check_idle_mesh(shape_of({s}, Order::RowMajor));
    check_idle_mesh(shape_of({f[1], f[0]}, Order::ColMajor));
  }
}

// The most square p x q = P, by brute force.
std::vector<int> near_square(int P) {
  int best = 1;
  for (int p = 1; p * p <= P; ++p)
    if (P % p == 0) best = p;
  return {best, P / best};
}

TEST(Mesh, Line) {
  const int P = world_size();
  const Mesh a = Mesh::line(MPI_COMM_WORLD);
  EXPECT_EQ(a.shape(), MeshShape({"x"}, {P}));
  EXPECT_EQ(a.coords(), std::vector<int>{world_rank()});
  const Mesh b = Mesh::line(MPI_COMM_WORLD, "r");
  EXPECT_EQ(b.shape().names, std::vector<std::string>{"r"});
  EXPECT_EQ(b.coord("r"), world_rank());
}

TEST(Mesh, Grid2dIsNearSquare) {
  const int P = world_size();
  for (const auto& [r, c] : {std::pair<std::string, std::string>{"x", "y"}, {"row", "col"}}) {
    const Mesh g = Mesh::grid2d(MPI_COMM_WORLD, r, c);
    ASSERT_EQ(g.shape().ndims(), 2);
    EXPECT_EQ(g.shape().names, (std::vector<std::string>{r, c}));
    EXPECT_EQ(g.shape().order, Order::RowMajor);
    auto sizes = g.shape().sizes;
    std::sort(sizes.begin(), sizes.end());
    EXPECT_EQ(sizes, near_square(P)) << g.shape().to_string();
    EXPECT_EQ(g.coords(), ref::all_coords(g.shape())[world_rank()]);
  }
  auto f = factor_near_square(P, 2);
  std::reverse(f.begin(), f.end());
  EXPECT_EQ(f, near_square(P)) << "factor_near_square lists the largest factor first";
}

TEST(Mesh, CopiesShareOneCommunicator) {
  const Mesh a = Mesh::line(MPI_COMM_WORLD);
  const Mesh b = a;  // NOLINT(performance-unnecessary-copy-initialization)
  const Mesh c = Mesh::line(MPI_COMM_WORLD);
  EXPECT_TRUE(b.same_as(a));
  EXPECT_EQ(b.comm(), a.comm());
  EXPECT_FALSE(c.same_as(a));
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(a.comm(), MPI_COMM_WORLD, &cmp);
  EXPECT_EQ(cmp, MPI_CONGRUENT) << "the mesh duplicates its communicator";
}

}  // namespace
}  // namespace shardmm::testing
