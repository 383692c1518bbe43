// Which collective a redistribution is (matrix/redistribute_plan.hpp) and the words each rank
// receives, against the JAX guide's formulas written out here: for a group of g ranks,
// AllGather / AllToAll / ReduceScatter deliver (g - 1) / g of the tile they concern (the
// gathered tile, the tile, the partial tile), AllReduce twice that, a slice nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "matrix/redistribute_plan.hpp"

using namespace shardmm;
using shardmm::matrix::Pattern;

namespace {

const MeshShape k2x2({"x", "y"}, {2, 2});
const MeshShape k2x3({"x", "y"}, {2, 3});
const MeshShape k2x2x2({"x", "y", "z"}, {2, 2, 2});

struct Expect {
  Pattern pattern;
  std::string axes;  // exchange axes' names, concatenated
  double words;      // received by every rank
};

std::string names(const MeshShape& mesh, const std::vector<int>& axes) {
  std::string s;
  for (int a : axes) s += mesh.names[a];
  return s;
}

void check(const MeshShape& mesh, index_t m, index_t n, const std::string& from,
           const std::string& to, const Expect& want) {
  const Layout src(mesh, m, n, from), dst(mesh, m, n, to);
  const auto plan = matrix::plan_redistribution(src, dst);
  const std::string what =
      from + " -> " + to + " on " + mesh.to_string() + ": " + plan.to_string(mesh);
  EXPECT_EQ(plan.pattern, want.pattern) << what;
  EXPECT_EQ(names(mesh, plan.axes), want.axes) << what;
  const auto words = matrix::received_words(src, dst, plan);
  for (std::size_t r = 0; r < words.size(); ++r)
    EXPECT_DOUBLE_EQ(words[r], want.words) << what << " rank " << r;
  EXPECT_DOUBLE_EQ(matrix::max_received_words(src, dst), want.words) << what;
}

TEST(RedistributePlan, SubAxisAllGather) {
  // The case: A[I_XY,J] -> A[I_X,J] gathers over y only: (2-1)/2 of m/2 x k.
  check(k2x2, 4096, 256, "A[I_XY,J]", "A[I_X,J]", {Pattern::AllGather, "y", 4096.0 / 4 * 256});
  // Gathering the major axis keeps the minor's blocks: I_Y block-cyclic with the old blocks.
  check(k2x2, 16, 8, "A[I_XY,J]", "A[I_Y:bc4,J]", {Pattern::AllGather, "x", 16.0 / 4 * 8});
  check(k2x3, 12, 6, "A[I,J_YX]", "A[I,J_Y:bc2]", {Pattern::AllGather, "x", 12.0 * 1});
  check(k2x2x2, 16, 8, "A[I_XYZ,J]", "A[I_X,J]", {Pattern::AllGather, "yz", 16.0 / 2 * 8 * 3 / 4});
  // Both dimensions at once, and a gather beside a slice along another axis.
  check(k2x3, 12, 9, "A[I_X,J_Y]", "A[I,J]", {Pattern::AllGather, "xy", 12.0 * 9 * 5 / 6});
  check(k2x3, 12, 9, "A[I_X,J]", "A[I,J_Y]", {Pattern::AllGather, "x", 12.0 * 3 / 2});
  // Rows gathered over x, then sliced over z: only the member holding z's rows sends.
  const Layout src(k2x2x2, 8, 8, "A[I_X,J_Y]"), dst(k2x2x2, 8, 8, "A[I_Z,J_Y]");
  const auto plan = matrix::plan_redistribution(src, dst);
  EXPECT_EQ(plan.pattern, Pattern::AllGather);
  EXPECT_EQ(names(k2x2x2, plan.axes), "x");
  const auto words = matrix::received_words(src, dst, plan);
  for (int r = 0; r < 8; ++r) {
    const auto c = k2x2x2.coords_of(r);
    EXPECT_DOUBLE_EQ(words[r], c[0] == c[2] ? 0.0 : 16.0) << r;
  }
}

TEST(RedistributePlan, SlicesAreLocal) {
  check(k2x2, 8, 8, "A[I,J]", "A[I_X,J_Y]", {Pattern::Local, "", 0});
  check(k2x2, 8, 8, "A[I_X,J]", "A[I_XY,J]", {Pattern::Local, "", 0});
  check(k2x3, 6, 6, "A[I_X,J_Y]", "A[I_X,J_Y]", {Pattern::Local, "", 0});
  check(k2x2, 8, 4, "C[I,J]{U_X}", "C[I_Y,J]{U_X}", {Pattern::Local, "", 0});
  check(k2x2, 8, 4, "C[I,J]", "C[I,J]{U_Y}", {Pattern::Local, "", 0});
}

TEST(RedistributePlan, AxisSwapsAreAllToAllOnTheirRanks) {
  check(k2x3, 12, 6, "A[I,J_Y]", "A[I_Y,J]", {Pattern::AllToAll, "y", 12.0 / 3 * 6 * 2 / 3});
  check(k2x2, 16, 8, "A[I_XY,J]", "A[I_X,J_Y]", {Pattern::AllToAll, "y", 16.0 / 4 * 8 / 2});
  check(k2x2x2, 8, 8, "A[I_XY,J]", "A[I,J_XY]", {Pattern::AllToAll, "xy", 8.0 * 8 * 3 / 16});
}

TEST(RedistributePlan, AxisOrderChangeIsAPermutation) {
  // I_XY -> I_YX: the tile of (x, y) comes whole from (y, x); the diagonal stays.
  const Layout src(k2x2, 8, 4, "A[I_XY,J]"), dst(k2x2, 8, 4, "A[I_YX,J]");
  const auto plan = matrix::plan_redistribution(src, dst);
  EXPECT_EQ(plan.pattern, Pattern::Permute);
  const auto words = matrix::received_words(src, dst, plan);
  for (int r = 0; r < 4; ++r) EXPECT_DOUBLE_EQ(words[r], r == 0 || r == 3 ? 0.0 : 8.0) << r;
}

TEST(RedistributePlan, PartialSumsReduceScatterOrAllReduce) {
  check(k2x3, 12, 6, "C[I,J]{U_Y}", "C[I_Y,J]", {Pattern::ReduceScatter, "y", 12.0 * 6 * 2 / 3});
  check(k2x2, 8, 6, "C[I_Y,J]{U_X}", "C[I_YX,J]", {Pattern::ReduceScatter, "x", 8.0 / 2 * 6 / 2});
  check(k2x2, 8, 8, "C[I,J]{U_XY}", "C[I,J_XY]", {Pattern::ReduceScatter, "xy", 8.0 * 8 * 3 / 4});
  check(k2x3, 12, 6, "C[I,J]{U_Y}", "C[I,J]", {Pattern::AllReduce, "y", 2 * 12.0 * 6 * 2 / 3});
  // AllReduce over x of the slice each rank keeps along y (sliced first: less to reduce).
  check(k2x3, 12, 6, "C[I,J]{U_X}", "C[I_Y,J]", {Pattern::AllReduce, "x", 2 * 4.0 * 6 / 2});
}

TEST(RedistributePlan, EverythingElseIsOneExchange) {
  // A destination unreduced where the source is not, and a mixture of roles.
  const Layout a(k2x2, 8, 4, "A[I_X,J]"), b(k2x2, 8, 4, "A[I,J]{U_X}");
  EXPECT_EQ(matrix::plan_redistribution(a, b).pattern, Pattern::General);
  const Layout c(k2x2, 8, 4, "A[I_X,J_Y]"), d(k2x2, 8, 4, "A[I_Y,J]");
  const auto plan = matrix::plan_redistribution(c, d);
  EXPECT_EQ(plan.pattern, Pattern::General);
  EXPECT_EQ(names(k2x2, plan.axes), "xy");
  // Uneven blocks: I_XY's blocks of 3 do not nest in I_X's blocks of 5, so x exchanges too.
  const Layout e(k2x2, 10, 2, "A[I_XY,J]"), f(k2x2, 10, 2, "A[I_X,J]");
  EXPECT_EQ(names(k2x2, matrix::plan_redistribution(e, f).axes), "xy");
  // Across mesh shapes: one exchange over every rank.
  const Layout g(k2x3, 6, 6, "A[I_X,J_Y]"), h(MeshShape({"x"}, {6}), 6, 6, "A[I_X,J]");
  const auto across = matrix::plan_redistribution(g, h);
  EXPECT_TRUE(across.across_meshes);
  EXPECT_EQ(across.group, 6);
}

TEST(RedistributePlan, GroupMembersFollowTheAxisCommunicatorOrder) {
  // {x:2, y:2, z:2}, row-major: rank = 4x + 2y + z. The group of rank 5 (1,0,1) over {x, z}.
  EXPECT_EQ(matrix::group_members(k2x2x2, {1, 0, 1}, {0, 2}), (std::vector<int>{0, 1, 4, 5}));
  EXPECT_EQ(matrix::group_members(k2x2x2, {1, 0, 1}, {1}), (std::vector<int>{5, 7}));
}

}  // namespace
