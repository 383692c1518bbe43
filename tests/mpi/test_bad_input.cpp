// Bad input: every rank throws the same exception with the same message, before any rank
// blocks in a collective (expect_same_error_everywhere synchronises all ranks afterwards, so a
// rank left behind in a collective shows up as a ctest timeout).
#include <climits>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "comm/mpi_check.hpp"
#include "mpi/mpi_test_util.hpp"

namespace shardmm::testing {
namespace {

const std::string kBlock = "A[I_X,J]";

// f throws E on every rank, with the same message, containing `what`.
template <class E = InvalidArgument, class F>
void fails(F&& f, const std::string& what) {
  expect_same_error_everywhere<E>(std::forward<F>(f), what);
}

TEST(BadInput, MeshSizeDiffersFromCommunicator) {
  const int P = world_size();
  fails([&] { Mesh m(MPI_COMM_WORLD, MeshShape({"x"}, {P + 1})); },
        "cells but the communicator has");
  fails([&] { Mesh m(MPI_COMM_WORLD, MeshShape({"x", "y"}, {2, P}), true); }, "cells");
  if (P > 1) fails([&] { Mesh m(MPI_COMM_WORLD, MeshShape({"x"}, {P - 1})); }, "allow_idle");
}

TEST(BadInput, MalformedMeshShapes) {
  fails([] { MeshShape s({"x"}, {0}); }, "must be >= 1");
  fails([] { MeshShape s({"x", "y"}, {2, -1}); }, "must be >= 1");
  fails([] { MeshShape s({"x", "X"}, {1, 1}); }, "named twice");
  fails([] { MeshShape s({}, {}); }, "1 to 3 axes");
  fails([] { (void)MeshShape::parse("2x"); }, "bad mesh shape");
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  fails([&] { (void)mesh.axis_comm(std::vector<std::string>{"x", "X"}); }, "named twice");
  fails([&] { (void)mesh.coord("w"); }, "no axis 'w'");
}

TEST(BadInput, NegativeSizes) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  fails([&] { Layout l(mesh.shape(), -1, 4, kBlock); }, "negative");
  fails([&] { DistMatrix<double> a(mesh, 3, -2, "A[I_X,J_Y]"); }, "negative");
  fails([&] { (void)Layout::block_cyclic(mesh.shape(), 5, -5, 2, 2); }, "negative");
}

TEST(BadInput, BlockSizeZero) {
  const MeshShape s = Mesh::grid2d(MPI_COMM_WORLD).shape();
  fails([&] { (void)Layout::block_cyclic(s, 4, 4, 0, 2); }, "block size");
  ShardingSpec spec = ShardingSpec::parse("A[I_X:bc2,J]");
  spec.dims[0].nb = 0;
  fails([&] { Layout l(s, 4, 4, spec); }, "block size");
  fails<ParseError>([&] { Layout l(s, 4, 4, "A[I_X:bc0,J]"); }, "block size");
  fails<ParseError>([&] { Layout l(s, 4, 4, "bc(2,0)"); }, "block size");
}

TEST(BadInput, SourceCoordinateOutOfRange) {
  const Mesh line = Mesh::line(MPI_COMM_WORLD);
  const std::string spec = "A[I_X:bc2+" + std::to_string(line.size()) + ",J]";
  fails([&] { DistMatrix<float> a(line, 8, 2, spec); }, "source coordinate");
}

TEST(BadInput, AxisUsedTwiceOrUnknown) {
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  const MeshShape& s = grid.shape();
  for (const char* text : {"A[I_X,J_X]", "A[I_XY,J_y]", "A[I_X,J]{U_X}", "A[I_X,J]{U_Y,U_Y}"})
    fails<ParseError>([&] { Layout l(s, 4, 4, text); }, "used twice");
  ShardingSpec spec = ShardingSpec::parse("A[I_X,J]{U_Y}");
  spec.unreduced = {"x"};  // built by hand: the parser's check does not run
  fails([&] { Layout l(s, 4, 4, spec); }, "used twice");
  fails([&] { Layout l(s, 4, 4, "A[I_W,J]"); }, "no axis");
  const MeshShape line = Mesh::line(MPI_COMM_WORLD).shape();
  fails([&] { Layout l(line, 4, 4, "bc(2,2)"); }, "at least 2 axes");
}

TEST(BadInput, MalformedSpecs) {
  const MeshShape s = Mesh::grid2d(MPI_COMM_WORLD).shape();
  const std::vector<std::string> bad = {"",          "A[I_X,J",     "A[I_X;J]",  "A[I_X:q,J]",
                                        "A[I_X,J]x", "bc(1)",       "bc(1,2,3)", "A[I_X,J]{V_Y}",
                                        "A[_X,J]",   "A[I_X:bc,J]", "A[I_,J]",   "bc(1,2"};
  for (const auto& text : bad) {
    SCOPED_TRACE("spec '" + text + "'");
    fails<ParseError>([&] { Layout l(s, 4, 4, text); }, "bad layout");
    try {
      (void)ShardingSpec::parse(text);
    } catch (const ParseError& e) {
      EXPECT_EQ(e.text(), text);
      EXPECT_LE(e.position(), text.size());
    }
  }
}

TEST(BadInput, LayoutOfAnotherMesh) {
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  const Mesh line = Mesh::line(MPI_COMM_WORLD);
  const MeshShape colmajor(grid.shape().names, grid.shape().sizes, MeshShape::Order::ColMajor);
  for (const MeshShape& other : {line.shape(), colmajor}) {
    const Layout l(other, 6, 6, "A[I,J_X]");
    fails([&] { DistMatrix<double> a(grid, l); }, "is not on this matrix's mesh");
    std::vector<double> buf(36);
    fails([&] { (void)DistMatrix<double>::view(grid, l, buf.data(), 6); },
          "is not on this matrix's mesh");
  }
  DistMatrix<double> a(grid, Layout::replicated(grid.shape(), 6, 6));
  fails([&] { a.reshape(Layout(line.shape(), 6, 6, "A[I,J]")); }, "is not on this matrix's mesh");
}

TEST(BadInput, LeadingDimensionTooSmall) {
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  const Layout l = Layout::replicated(grid.shape(), 5, 5);  // 5 local rows everywhere
  fails([&] { DistMatrix<float> a(grid, l, 4); }, "leading dimension");
  std::vector<float> buf(25);
  fails([&] { (void)DistMatrix<float>::view(grid, l, buf.data(), 3); }, "leading dimension");
}

TEST(BadInput, RedistributeDifferentShapes) {
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  const Mesh line = Mesh::line(MPI_COMM_WORLD);
  const DistMatrix<double> a(grid, 4, 5, "A[I_X,J_Y]");
  DistMatrix<double> b(grid, 5, 4, "A[I_X,J_Y]");
  DistMatrix<double> c(line, 4, 6, "A[I,J_X]");
  fails<DimensionMismatch>([&] { (void)redistribute(a, b); }, "different shapes");
  fails<DimensionMismatch>([&] { (void)redistribute(a, c); }, "different shapes");
}

TEST(BadInput, RedistributeAcrossCommunicators) {
  const int P = world_size();
  if (P == 1) GTEST_SKIP() << "needs two ranks";
  const Mesh world = Mesh::line(MPI_COMM_WORLD);
  const Mesh fewer(MPI_COMM_WORLD, MeshShape({"x"}, {P - 1}), true);
  const DistMatrix<double> a(world, 4, 4, kBlock);
  DistMatrix<double> b(fewer, 4, 4, kBlock);
  fails([&] { (void)redistribute(a, b); }, "different sizes");
  MPI_Comm reversed = MPI_COMM_NULL;  // same ranks, opposite order
  MPI_Comm_split(MPI_COMM_WORLD, 0, P - 1 - world_rank(), &reversed);
  {
    const Mesh other = Mesh::line(reversed);
    DistMatrix<double> c(other, 4, 4, kBlock);
    fails([&] { (void)redistribute(a, c); }, "different communicators");
  }
  MPI_Comm_free(&reversed);
}

TEST(BadInput, ElementOutOfRange) {
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  const DistMatrix<std::complex<float>> a(grid, 3, 2, "A[I_X,J_Y]");
  fails([&] { (void)a.at(3, 0); }, "outside");
  fails([&] { (void)a.at(0, -1); }, "outside");
}

TEST(BadInput, MessageLimitOutOfRange) {
  const std::int64_t before = comm::max_message_elems();
  fails([] { comm::set_max_message_elems(0); }, "out of range");
  fails([] { comm::set_max_message_elems(std::int64_t{INT_MAX} + 1); }, "out of range");
  EXPECT_EQ(comm::max_message_elems(), before);
}

// The size check of scatter() runs on the root only; the other ranks must learn about it
// instead of waiting in the exchange.
TEST(BadInput, ScatterWrongSizeOnRoot) {
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> a(grid, 4, 4, "A[I_X,J_Y]");
  const std::vector<double> global(world_rank() == 0 ? 15 : 0, 1.0);
  fails([&] { a.scatter(global, 0); }, "scatter");
}

}  // namespace
}  // namespace shardmm::testing
