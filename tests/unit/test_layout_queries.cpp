// Layout's queries checked against hand-written answers: sharded, unreduced and replica axes,
// primaries, transposition, same_distribution, and the specs it refuses (InvalidArgument).
// (Index math against brute force: test_layout.cpp.)
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "layout_cells.hpp"
#include "shardmm/error.hpp"
#include "shardmm/layout.hpp"

namespace {

using shardmm::DimSpec;
using shardmm::index_t;
using shardmm::Layout;
using shardmm::MeshShape;
using shardmm::ShardingSpec;
using shardmm::testing::all_cells;

struct AxesCase {
  std::string spec;
  std::vector<int> sharded, unreduced, replica;
};

TEST(LayoutAxes, ShardedUnreducedReplicaAndPrimary) {
  const MeshShape mesh = MeshShape::parse("x=2,y=3,z=2");
  const std::vector<AxesCase> cases = {
      {"A[I_X,J]", {0}, {}, {1, 2}},       {"C[I_X,K_Y]{U_Z}", {0, 1}, {2}, {}},
      {"A[I_ZX,J]{U_Y}", {2, 0}, {1}, {}}, {"A[I,J]", {}, {}, {0, 1, 2}},
      {"A[I,J]{U_YX}", {}, {1, 0}, {2}},   {"A[I,J_Y]", {1}, {}, {0, 2}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spec);
    const Layout l(mesh, 6, 6, c.spec);
    EXPECT_EQ(l.sharded_axes(), c.sharded);
    EXPECT_EQ(l.unreduced_axes(), c.unreduced);
    EXPECT_EQ(l.replica_axes(), c.replica);
    EXPECT_EQ(l.is_unreduced(), !c.unreduced.empty());
    for (const auto& cell : all_cells(mesh)) {
      bool primary = true;
      for (int a : c.replica) primary = primary && cell[static_cast<std::size_t>(a)] == 0;
      EXPECT_EQ(l.is_primary(cell), primary);
    }
  }
}

TEST(LayoutTranspose, SwapsDimensions) {
  const MeshShape mesh = MeshShape::parse("x=2,y=3,z=2");
  for (const char* spec : {"A[I_X:bc3+1,J_Y:c]", "C[I_XZ,K]{U_Y}", "bc(2,5,1,0)", "A[I,J_YX]"}) {
    SCOPED_TRACE(spec);
    const Layout l(mesh, 11, 7, spec), t = l.transposed();
    EXPECT_EQ(t.rows(), 7);
    EXPECT_EQ(t.cols(), 11);
    EXPECT_EQ(t.row_map(), l.col_map());
    EXPECT_EQ(t.col_map(), l.row_map());
    EXPECT_EQ(t.unreduced_axes(), l.unreduced_axes());
    EXPECT_EQ(t.replica_axes(), l.replica_axes());
    EXPECT_TRUE(t.transposed().same_distribution(l));
    for (const auto& cell : all_cells(mesh)) {
      EXPECT_EQ(t.local_rows(cell), l.local_cols(cell));
      for (index_t i = 0; i < 11; ++i)
        for (index_t j = 0; j < 7; ++j) ASSERT_EQ(t.owns(cell, j, i), l.owns(cell, i, j));
    }
  }
}

struct SameCase {
  std::string a, b;
  index_t m, n;
  bool same;
};

TEST(LayoutSameDistribution, IgnoresNamesOnly) {
  const MeshShape mesh = MeshShape::parse("x=2,y=3");
  const std::vector<SameCase> cases = {
      {"A[I_X,J_Y]", "B[K_X,L_Y]", 10, 10, true},
      {"A[I_X,J_Y]", "A[I_x,J_y:b]", 10, 10, true},
      {"A[I_X,J_Y]", "A[I_X:bc5,J_Y:bc4]", 10, 10, true},  // block == bc with ceil(n/p)
      {"A[I_X,J_Y]", "A[I_X:c,J_Y]", 10, 10, false},
      {"A[I_X,J_Y]", "A[I_X:c,J_Y:c]", 2, 3, true},  // nb = 1 either way
      {"A[I_X,J_Y]", "A[I_Y,J_X]", 10, 10, false},
      {"A[I_XY,J]", "A[I_YX,J]", 12, 10, false},
      {"A[I_X,J]", "A[I_X,J]{U_Y}", 10, 10, false},
      {"A[I_X:bc2,J]", "A[I_X:bc2+1,J]", 10, 10, false},
      {"bc(2,3)", "A[I_X:bc2,J_Y:bc3]", 10, 10, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.a + " vs " + c.b);
    const Layout la(mesh, c.m, c.n, c.a), lb(mesh, c.m, c.n, c.b);
    EXPECT_EQ(la.same_distribution(lb), c.same);
    EXPECT_EQ(lb.same_distribution(la), c.same);
  }
  const Layout base(mesh, 10, 10, "A[I_X,J_Y]");
  EXPECT_FALSE(base.same_distribution(Layout(mesh, 10, 11, "A[I_X,J_Y]")));
  EXPECT_FALSE(base.same_distribution(Layout(MeshShape::parse("x=2,y=4"), 10, 10, "A[I_X,J_Y]")));
  const MeshShape col({"x", "y"}, {2, 3}, MeshShape::Order::ColMajor);
  EXPECT_FALSE(base.same_distribution(Layout(col, 10, 10, "A[I_X,J_Y]")));
}

// ---------------------------------------------------------------- errors

ShardingSpec spec_with(const std::vector<std::string>& rows, const std::vector<std::string>& cols,
                       std::vector<std::string> unreduced = {}) {
  ShardingSpec s;
  s.dims[0] = {"I", rows.empty() ? DimSpec::Kind::Replicated : DimSpec::Kind::Block, rows};
  s.dims[1] = {"J", cols.empty() ? DimSpec::Kind::Replicated : DimSpec::Kind::Block, cols};
  s.unreduced = std::move(unreduced);
  return s;
}

ShardingSpec bc_rows(index_t nb, int src, const std::vector<std::string>& axes = {"x"}) {
  ShardingSpec s = spec_with(axes, {});
  s.dims[0].kind = DimSpec::Kind::BlockCyclic;
  s.dims[0].nb = nb;
  s.dims[0].src = src;
  return s;
}

TEST(LayoutErrors, ThrowInvalidArgument) {
  const MeshShape mesh = MeshShape::parse("x=2,y=3");
  const MeshShape line = MeshShape::parse("x=4");
  ShardingSpec no_axes = spec_with({}, {});
  no_axes.dims[0].kind = DimSpec::Kind::Cyclic;
  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"unknown axis", [&] { Layout(mesh, 4, 4, "A[I_Q,J]"); }},
      {"unknown long axis", [&] { Layout(mesh, 4, 4, "A[I_{xx},J]"); }},
      {"axis in both dims", [&] { Layout(mesh, 4, 4, spec_with({"x"}, {"X"})); }},
      {"axis twice in a group",
       [&] {
         Layout(mesh, 4, 4, spec_with({"y", "y"}, {}));
       }},
      {"axis in dim and unreduced", [&] { Layout(mesh, 4, 4, spec_with({"x"}, {}, {"x"})); }},
      {"axis twice unreduced",
       [&] {
         Layout(mesh, 4, 4, spec_with({}, {}, {"y", "Y"}));
       }},
      {"nb = 0", [&] { Layout(mesh, 4, 4, bc_rows(0, 0)); }},
      {"nb < 0", [&] { Layout(mesh, 4, 4, bc_rows(-3, 0)); }},
      {"src < 0", [&] { Layout(mesh, 4, 4, bc_rows(2, -1)); }},
      {"src = p", [&] { Layout(mesh, 4, 4, "A[I_X:bc2+2,J]"); }},
      {"src = |XY|",
       [&] {
         Layout(mesh, 4, 4, bc_rows(2, 6, {"x", "y"}));
       }},
      {"bc src = p", [&] { Layout(mesh, 4, 4, "bc(2,2,0,3)"); }},
      {"negative rows", [&] { Layout(mesh, -1, 4, "A[I_X,J]"); }},
      {"negative cols", [&] { Layout(mesh, 4, -1, "A[I,J]"); }},
      {"bc on 1D mesh", [&] { Layout(line, 4, 4, "bc(2,2)"); }},
      {"block_cyclic on 1D", [&] { (void)Layout::block_cyclic(line, 4, 4, 2, 2); }},
      {"distributed without axes", [&] { Layout(mesh, 4, 4, no_axes); }},
  };
  for (const auto& [what, make] : cases) EXPECT_THROW(make(), shardmm::InvalidArgument) << what;
  // Boundary values that are valid.
  EXPECT_NO_THROW(Layout(mesh, 4, 4, bc_rows(1, 5, {"x", "y"})));
  EXPECT_NO_THROW(Layout(mesh, 4, 4, "bc(1,1,1,2)"));
  // A spec string that repeats an axis is rejected by the parser first.
  EXPECT_THROW(Layout(mesh, 4, 4, "A[I_X,J_X]"), shardmm::ParseError);
}

// Axes of size 1 split nothing and block sizes over one process change nothing: such
// layouts place every element as the unsplit one does (no copy needed between them).
TEST(Layout, SizeOneAxesAndSingleProcessBlocksAreTheSameDistribution) {
  const MeshShape one({"x", "y"}, {1, 1});
  EXPECT_TRUE(
      Layout::block_cyclic(one, 9, 7, 4, 2).same_distribution(Layout::replicated(one, 9, 7)));
  const MeshShape line({"x", "y"}, {1, 3});
  EXPECT_TRUE(
      Layout(line, 9, 7, "A[I_X:bc2,J_Y]").same_distribution(Layout(line, 9, 7, "A[I,J_Y]")));
  EXPECT_TRUE(Layout(line, 9, 7, "A[I_XY,J]").same_distribution(Layout(line, 9, 7, "A[I_Y,J]")));
  // ... but the splitting axes, their order and their block sizes still count.
  EXPECT_FALSE(
      Layout(line, 9, 7, "A[I,J_Y:bc2]").same_distribution(Layout(line, 9, 7, "A[I,J_Y]")));
  EXPECT_FALSE(Layout(line, 9, 7, "A[I_Y,J]").same_distribution(Layout(line, 9, 7, "A[I,J_Y]")));
  EXPECT_FALSE(
      Layout::block_cyclic(line, 9, 7, 4, 2).same_distribution(Layout::replicated(line, 9, 7)));
}

}  // namespace
