// Layout index math checked against brute force: DimMap against a block-by-block walk of the
// global index range, Layout binding against per-dimension walks and hand-written axis rules.
// (Layout's queries and the specs it refuses: test_layout_queries.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "layout_cells.hpp"
#include "shardmm/error.hpp"
#include "shardmm/layout.hpp"

namespace {

using shardmm::DimMap;
using shardmm::index_t;
using shardmm::Layout;
using shardmm::MeshShape;

template <class T>
auto& at(std::vector<T>& v, index_t i) {
  return v[static_cast<std::size_t>(i)];
}
template <class T>
const auto& at(const std::vector<T>& v, index_t i) {
  return v[static_cast<std::size_t>(i)];
}

// Ownership of one dimension found by dealing out blocks one index at a time (no division).
struct Walk {
  std::vector<int> owner;      // owning process per global index
  std::vector<index_t> local;  // local index on the owner
  std::vector<index_t> count;  // indices held per process
};

// `first`: size of the first block (0: nb).
Walk walk_blocks(index_t extent, int nprocs, index_t nb, int src, index_t first = 0) {
  Walk w{{}, {}, std::vector<index_t>(static_cast<std::size_t>(nprocs), 0)};
  int proc = src;
  index_t in_block = 0, block = first > 0 ? first : nb;
  for (index_t i = 0; i < extent; ++i) {
    if (in_block == block) {
      block = nb;
      in_block = 0;
      proc = proc + 1 == nprocs ? 0 : proc + 1;
    }
    w.owner.push_back(proc);
    w.local.push_back(at(w.count, proc)++);
    ++in_block;
  }
  return w;
}

std::string describe(const DimMap& m) {
  return "DimMap{extent=" + std::to_string(m.extent) + ", nprocs=" + std::to_string(m.nprocs) +
         ", nb=" + std::to_string(m.nb) + ", src=" + std::to_string(m.src) +
         ", first=" + std::to_string(m.first) + "}";
}

::testing::AssertionResult check_indices(const DimMap& m, const Walk& w) {
  for (index_t i = 0; i < m.extent; ++i) {
    const int p = at(w.owner, i);
    const index_t l = at(w.local, i);
    if (m.owner(i) != p || m.to_local(i) != l || m.to_global(l, p) != i)
      return ::testing::AssertionFailure()
             << describe(m) << " i=" << i << ": owner " << m.owner(i) << " (want " << p
             << "), to_local " << m.to_local(i) << " (want " << l << "), to_global "
             << m.to_global(l, p);
  }
  return ::testing::AssertionSuccess();
}

// Ranges must be non-empty, increasing, disjoint, and cover exactly the indices `proc` owns.
::testing::AssertionResult check_ranges(const DimMap& m, const Walk& w, int proc) {
  index_t prev_end = 0, covered = 0;
  for (const auto& [b, e] : m.owned_ranges(proc)) {
    if (b < prev_end || e <= b || e > m.extent)
      return ::testing::AssertionFailure() << describe(m) << " proc " << proc << ": bad range ["
                                           << b << "," << e << ") after " << prev_end;
    for (index_t i = b; i < e; ++i)
      if (at(w.owner, i) != proc)
        return ::testing::AssertionFailure()
               << describe(m) << " proc " << proc << ": range holds foreign index " << i;
    covered += e - b;
    prev_end = e;
  }
  if (covered != at(w.count, proc))
    return ::testing::AssertionFailure() << describe(m) << " proc " << proc << ": ranges cover "
                                         << covered << " of " << at(w.count, proc) << " indices";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_extents(const DimMap& m, const Walk& w) {
  index_t total = 0;
  for (int p = 0; p < m.nprocs; ++p) {
    if (m.local_extent(p) != at(w.count, p))
      return ::testing::AssertionFailure()
             << describe(m) << " local_extent(" << p << ")=" << m.local_extent(p) << " want "
             << at(w.count, p);
    total += m.local_extent(p);
    if (auto r = check_ranges(m, w, p); !r) return r;
  }
  if (total != m.extent)
    return ::testing::AssertionFailure() << describe(m) << " local extents sum to " << total;
  return ::testing::AssertionSuccess();
}

class DimMapExhaustive : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(DimMapExhaustive, MatchesBlockWalk) {
  const auto [nprocs, nb] = GetParam();
  for (index_t extent = 0; extent <= 40; ++extent)
    for (int src = 0; src < nprocs; ++src) {
      const DimMap m{extent, nprocs, nb, src};
      const Walk w = walk_blocks(extent, nprocs, nb, src);
      ASSERT_TRUE(check_indices(m, w));
      ASSERT_TRUE(check_extents(m, w));
    }
}

INSTANTIATE_TEST_SUITE_P(All, DimMapExhaustive,
                         ::testing::Combine(::testing::Range(1, 8), ::testing::Range(1, 10)));

// A first block of its own size (shorter, longer, or of one element) before blocks of nb.
TEST_P(DimMapExhaustive, FirstBlockMatchesBlockWalk) {
  const auto [nprocs, nb] = GetParam();
  for (index_t first = 1; first <= 2 * nb + 1; ++first)
    for (index_t extent = 0; extent <= 30; ++extent)
      for (int src = 0; src < nprocs; ++src) {
        const DimMap m{extent, nprocs, nb, src, first};
        const Walk w = walk_blocks(extent, nprocs, nb, src, first);
        ASSERT_TRUE(check_indices(m, w));
        ASSERT_TRUE(check_extents(m, w));
      }
}

// Block ends and sub-ranges as their own maps: sub(b, n) holds global index b + i where m
// holds it, at the owner's local index minus what it holds before b.
TEST_P(DimMapExhaustive, SubRangesKeepOwnersAndLocalOrder) {
  const auto [nprocs, nb] = GetParam();
  for (const index_t first : {index_t{0}, index_t{1}, index_t{nb} + 2}) {
    const DimMap m{23, nprocs, nb, nprocs - 1, first};
    const Walk w = walk_blocks(m.extent, nprocs, nb, m.src, first);
    for (index_t i = 0; i < m.extent; ++i) {
      const index_t end = m.block_end(i);
      ASSERT_GT(end, i);
      ASSERT_EQ(at(w.owner, std::min(end, m.extent) - 1), at(w.owner, i))
          << describe(m) << " i=" << i;
      if (end < m.extent && nprocs > 1) {
        ASSERT_NE(at(w.owner, end), at(w.owner, i));
      }
    }
    for (index_t b = 0; b <= m.extent; ++b)
      for (index_t n = 0; b + n <= m.extent; ++n) {
        const DimMap s = m.sub(b, n);
        ASSERT_EQ(s.extent, n);
        for (index_t i = 0; i < n; ++i) {
          const int p = at(w.owner, b + i);
          DimMap before = m;
          before.extent = b;
          ASSERT_EQ(s.owner(i), p) << describe(m) << " sub(" << b << "," << n << ") i=" << i;
          ASSERT_EQ(s.to_local(i), at(w.local, b + i) - before.local_extent(p));
        }
      }
    EXPECT_THROW((void)m.sub(20, 4), shardmm::InvalidArgument);
  }
}

TEST(DimMap, FirstBlockOfNbIsTheRegularMap) {
  EXPECT_EQ((DimMap{10, 3, 4, 1, 4}), (DimMap{10, 3, 4, 1}));
  EXPECT_NE((DimMap{10, 3, 4, 1, 3}), (DimMap{10, 3, 4, 1}));
  EXPECT_TRUE((DimMap{10, 3, 4, 1, 4}.regular()));
  EXPECT_TRUE((DimMap{10, 1, 4, 0, 3}.regular()));  // one process: local = global anyway
  EXPECT_FALSE((DimMap{10, 2, 4, 0, 3}.regular()));
}

// ---------------------------------------------------------------- Layout binding

using shardmm::testing::all_cells;

struct DimWant {
  std::vector<int> axes;  // mesh axis indices, first major; empty = replicated
  index_t nb = 0;         // ignored when replicated
  int src = 0;
};

struct BindCase {
  std::string mesh, spec;
  index_t m, n;
  DimWant rows, cols;
};

int group_size(const MeshShape& mesh, const DimWant& d) {
  int p = 1;
  for (int a : d.axes) p *= mesh.sizes[static_cast<std::size_t>(a)];
  return p;
}

// First axis major: coordinate = c[a0] * |a1| + c[a1] (and so on).
int group_coord(const MeshShape& mesh, const DimWant& d, const std::vector<int>& cell) {
  int c = 0;
  for (int a : d.axes)
    c = c * mesh.sizes[static_cast<std::size_t>(a)] + cell[static_cast<std::size_t>(a)];
  return c;
}

Walk want_walk(const MeshShape& mesh, const DimWant& d, index_t extent) {
  if (d.axes.empty()) return walk_blocks(extent, 1, 1, 0);
  return walk_blocks(extent, group_size(mesh, d), d.nb, d.src);
}

std::string case_name(const BindCase& c) {
  return c.spec + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + " on " + c.mesh;
}

void check_binding(const BindCase& c) {
  SCOPED_TRACE(case_name(c));
  const MeshShape mesh = MeshShape::parse(c.mesh);
  const Layout l(mesh, c.m, c.n, c.spec);
  const DimWant* want[2] = {&c.rows, &c.cols};
  const Walk wr = want_walk(mesh, c.rows, c.m), wc = want_walk(mesh, c.cols, c.n);
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(l.dim_axes(d), want[d]->axes);
    EXPECT_EQ(l.map(d).nprocs, group_size(mesh, *want[d]));
    if (!want[d]->axes.empty()) {
      EXPECT_EQ(l.map(d).nb, want[d]->nb);
      EXPECT_EQ(l.map(d).src, want[d]->src);
    }
  }
  for (const auto& cell : all_cells(mesh)) {
    const int rc = group_coord(mesh, c.rows, cell), cc = group_coord(mesh, c.cols, cell);
    ASSERT_EQ(l.dim_coord(0, cell), rc);
    ASSERT_EQ(l.dim_coord(1, cell), cc);
    ASSERT_EQ(l.local_rows(cell), at(wr.count, rc));
    ASSERT_EQ(l.local_cols(cell), at(wc.count, cc));
    for (index_t i = 0; i < c.m; ++i)
      for (index_t j = 0; j < c.n; ++j)
        ASSERT_EQ(l.owns(cell, i, j), at(wr.owner, i) == rc && at(wc.owner, j) == cc)
            << "i=" << i << " j=" << j;
  }
}

const std::vector<BindCase>& bind_cases() {
  static const std::vector<BindCase> cases = {
      {"x=4", "A[I_X,J]", 10, 3, {{0}, 3}, {}},
      {"x=4", "A[I_X,J]", 2, 3, {{0}, 1}, {}},  // fewer rows than processes
      {"x=4", "A[I_X,J]", 0, 0, {{0}, 1}, {}},
      {"x=4", "A[I,J_X:b]", 5, 9, {}, {{0}, 3}},
      {"x=3,y=2", "A[I_X:c,J_Y]", 7, 9, {{0}, 1}, {{1}, 5}},
      {"x=3,y=2", "A[I_X:bc4+2,J_Y:bc3+1]", 17, 11, {{0}, 4, 2}, {{1}, 3, 1}},
      {"x=2,y=3", "A[I_XY,J]", 13, 5, {{0, 1}, 3}, {}},
      {"x=2,y=3", "A[I_YX:c,J]", 13, 5, {{1, 0}, 1}, {}},
      {"x=2,y=3", "A[I_XY:bc2+5,J]", 19, 2, {{0, 1}, 2, 5}, {}},
      {"x=2,y=3,z=2", "A[I_X,J_{z}:bc2]", 9, 10, {{0}, 5}, {{2}, 2}},
      {"x=2,y=3,z=2", "C[I_X,K_Y]{U_Z}", 9, 10, {{0}, 5}, {{1}, 4}},
      {"x=2,y=3,z=2", "A[I_ZX,J_Y:c]", 9, 10, {{2, 0}, 3}, {{1}, 1}},
      {"2x3", "bc(2,3)", 10, 11, {{0}, 2}, {{1}, 3}},
      {"2x3x2", "bc(2,3,1,2)", 10, 11, {{0}, 2, 1}, {{1}, 3, 2}},
      {"x=2,y=3", "A[I,J]", 5, 6, {}, {}},
      {"data=2,model=3", "A[I_{data},J_{model}:c]", 8, 9, {{0}, 4}, {{1}, 1}},
  };
  return cases;
}

TEST(LayoutBinding, MatchesWalksOnEveryCell) {
  for (const auto& c : bind_cases()) check_binding(c);
}

TEST(LayoutBinding, BlockSizeIsCeilOfExtentOverProcesses) {
  const MeshShape mesh = MeshShape::parse("x=2,y=3");
  for (index_t n = 0; n <= 25; ++n) {
    index_t want = 1;  // smallest nb >= 1 with nb * 6 >= n
    while (want * 6 < n) ++want;
    EXPECT_EQ(Layout(mesh, n, 1, "A[I_XY,J]").row_map().nb, want) << "n=" << n;
  }
}

TEST(LayoutBinding, AxisGroupIsFirstAxisMajor) {
  for (auto order : {MeshShape::Order::RowMajor, MeshShape::Order::ColMajor}) {
    const MeshShape mesh({"x", "y"}, {2, 3}, order);
    const Layout xy(mesh, 12, 4, "A[I_XY,J]"), yx(mesh, 12, 4, "A[I_YX,J]");
    for (int cx = 0; cx < 2; ++cx)
      for (int cy = 0; cy < 3; ++cy) {
        EXPECT_EQ(xy.dim_coord(0, {cx, cy}), cx * 3 + cy);
        EXPECT_EQ(yx.dim_coord(0, {cx, cy}), cy * 2 + cx);
        EXPECT_EQ(xy.dim_coord(1, {cx, cy}), 0);
        EXPECT_EQ(xy.local_rows({cx, cy}), 2);  // nb = 2, one block each
        EXPECT_TRUE(xy.owns({cx, cy}, 2 * (cx * 3 + cy) + 1, 3));
      }
  }
}

TEST(LayoutBinding, FactoriesMatchNotation) {
  const MeshShape mesh = MeshShape::parse("x=2,y=3,z=2");
  const Layout bc = Layout::block_cyclic(mesh, 20, 30, 4, 5, 1, 2);
  EXPECT_EQ(bc.row_map(), (DimMap{20, 2, 4, 1}));
  EXPECT_EQ(bc.col_map(), (DimMap{30, 3, 5, 2}));
  EXPECT_TRUE(bc.same_distribution(Layout(mesh, 20, 30, "A[I_X:bc4+1,J_Y:bc5+2]")));
  EXPECT_EQ(bc.replica_axes(), (std::vector<int>{2}));
  const Layout rep = Layout::replicated(mesh, 7, 8);
  EXPECT_EQ(rep.rows(), 7);
  EXPECT_EQ(rep.cols(), 8);
  EXPECT_TRUE(rep.same_distribution(Layout(mesh, 7, 8, "A[I,J]")));
  for (const auto& cell : all_cells(mesh)) {
    EXPECT_EQ(rep.local_rows(cell), 7);
    EXPECT_EQ(rep.local_cols(cell), 8);
    EXPECT_TRUE(rep.owns(cell, 6, 7));
  }
}

TEST(LayoutBinding, FirstBlocksFromFactoryAndNotation) {
  const MeshShape mesh = MeshShape::parse("x=2,y=3");
  const Layout bc = Layout::block_cyclic(mesh, 20, 30, 4, 5, 1, 2, 3, 7);
  EXPECT_EQ(bc.row_map(), (DimMap{20, 2, 4, 1, 3}));
  EXPECT_EQ(bc.col_map(), (DimMap{30, 3, 5, 2, 7}));
  EXPECT_FALSE(bc.regular());
  EXPECT_TRUE(bc.same_distribution(Layout(mesh, 20, 30, "A[I_X:bc4f3+1,J_Y:bc5f7+2]")));
  EXPECT_TRUE(bc.same_distribution(Layout(mesh, 20, 30, "bc(4,5,1,2,3,7)")));
  EXPECT_FALSE(bc.same_distribution(Layout(mesh, 20, 30, "bc(4,5,1,2)")));
  EXPECT_TRUE(bc.regularized().same_distribution(Layout(mesh, 20, 30, "bc(4,5,1,2)")));
  EXPECT_TRUE(
      bc.transposed().same_distribution(Layout(mesh, 30, 20, "A[I_Y:bc5f7+2,J_X:bc4f3+1]")));
  // A first block of nb, or over one process, is the regular map.
  EXPECT_TRUE(Layout(mesh, 20, 30, "bc(4,5,1,2,4,5)").regular());
  EXPECT_TRUE(Layout(mesh, 20, 30, "A[I_X:bc4f2,J]").regularized().regular());
  EXPECT_TRUE(Layout(MeshShape::parse("x=1,y=3"), 20, 30, "A[I_X:bc4f2,J]").regular());
  EXPECT_EQ(bc.local_rows({1, 0}), 3 + 4 + 4);  // rows 0-2, 7-10, 15-18 on x = 1
}

}  // namespace
