// Descriptor checks and submatrix geometry of the p?gemm drop-in (no MPI, no BLACS calls).
#include <gtest/gtest.h>

#include <vector>

#include "scalapack/descriptor.hpp"

namespace shardmm::scalapack {
namespace {

// Exhaustive over small maps, with and without a first block of another size: the
// submatrix's local pieces are where the full map puts them (contiguous from local_begin, in
// global order), and its own layout (spec) puts each element on the same process at that
// local index minus local_begin: sub(X) is exactly a view of the full local array.
TEST(SubDim, SubmatrixLayoutIsAViewOfTheFullMap) {
  for (int P = 1; P <= 4; ++P)
    for (int nb = 1; nb <= 4; ++nb)
      for (const index_t first : {index_t{0}, index_t{1}, index_t{nb} + 2})
        for (int src = 0; src < P; ++src)
          for (index_t M = 1; M <= 13; ++M)
            for (index_t begin = 0; begin < M; ++begin)
              for (index_t size = 1; begin + size <= M; ++size) {
                const SubDim s{DimMap{M, P, nb, src, first}, false, begin, size};
                const Layout L(MeshShape({"p", "q"}, {P, 1}), size, 1,
                               ShardingSpec{"",
                                            {s.spec("I", "p"),
                                             DimSpec{"J", DimSpec::Kind::Replicated, {}, 0, 0}},
                                            {}});
                const DimMap& sub = L.row_map();
                std::vector<index_t> seen(P, 0);
                for (index_t g = 0; g < size; ++g) {
                  const int p = s.full.owner(begin + g);
                  const index_t l = s.full.to_local(begin + g);
                  ASSERT_EQ(l, s.local_begin(p) + seen[p]++)
                      << "P=" << P << " nb=" << nb << " first=" << first << " src=" << src
                      << " M=" << M << " begin=" << begin << " g=" << g;
                  ASSERT_EQ(sub.owner(g), p);
                  ASSERT_EQ(sub.to_local(g), l - s.local_begin(p));
                }
                for (int p = 0; p < P; ++p) {
                  ASSERT_EQ(s.local_size(p), seen[p]);
                  ASSERT_EQ(sub.local_extent(p), seen[p]);
                }
              }
}

TEST(SubDim, ReplicatedIsLocal) {
  const SubDim s{DimMap{20, 1, 3, 0}, true, 7, 5};
  EXPECT_EQ(s.local_begin(2), 7);
  EXPECT_EQ(s.local_size(1), 5);
  EXPECT_EQ(s.spec("I", "p").kind, DimSpec::Kind::Replicated);
}

TEST(Descriptor, TypeOneReadsAsTypeTwoWithFirstBlockMbByNb) {
  const int d1[9] = {1, 7, 10, 12, 2, 3, 1, 0, 5};
  EXPECT_EQ(normalized(d1), (Desc{2, 7, 10, 12, 2, 3, 2, 3, 1, 0, 5}));
  const int d2[11] = {2, 7, 10, 12, 1, 4, 2, 3, 1, -1, 5};
  EXPECT_EQ(normalized(d2), (Desc{2, 7, 10, 12, 1, 4, 2, 3, 1, -1, 5}));
  const int bad[2] = {5, 7};  // any other type: DTYPE and CTXT only are read
  EXPECT_EQ(normalized(bad), (Desc{5, 7, 0, 0, 1, 1, 1, 1, 0, 0, 1}));
}

// A 2 x 3 grid seen from process (1, 2); matrix argument at DESC position 10 (IA 8, JA 9).
struct Fixture : ::testing::Test {
  Grid g{7, 2, 3, 1, 2};
  int desc[9] = {1, 7, 10, 12, 2, 3, 0, 0, 5};  // type 1: process row 1 holds 4 rows of 10
  MatrixArg arg() const { return MatrixArg{normalized(desc), 2, 3, 6, 8, 3, 5, 10}; }
  int code(const MatrixArg& x) const { return check_matrix(g, x); }
};

TEST_F(Fixture, LegalArgumentsGiveZero) { EXPECT_EQ(code(arg()), 0); }

TEST_F(Fixture, ScalarErrorsArePositionTimes100) {
  MatrixArg x = arg();
  x.rows = -1;
  EXPECT_EQ(code(x), 300);
  x = arg();
  x.i = 0;
  EXPECT_EQ(code(x), 800);
  x = arg();
  x.j = 0;
  EXPECT_EQ(code(x), 900);
  x = arg();
  x.i = 6;  // rows 5..10 of a 10-row matrix
  EXPECT_EQ(code(x), 800);
  x = arg();
  x.j = 6;  // columns 5..12 of 12
  EXPECT_EQ(code(x), 900);
}

// Type-1 entries report the entry of the type-2 form PBLAS checks: MB as IMB (5), NB as INB
// (6), RSRC 9, CSRC 10, LLD 11.
TEST_F(Fixture, TypeOneErrorsArePositionTimes100PlusTypeTwoEntry) {
  struct Case {
    int entry, value, want;
  };
  const Case cases[] = {{1, 8, 1002},  {4, 0, 1005}, {5, -1, 1006}, {6, 2, 1009},
                        {7, -2, 1010}, {2, 0, 1003}, {8, 3, 1011},  {0, 3, 1001}};
  for (const auto& [entry, value, want] : cases) {
    const int saved = desc[entry];
    desc[entry] = value;
    EXPECT_EQ(code(arg()), want) << "entry " << entry << " = " << value;
    desc[entry] = saved;
  }
}

TEST_F(Fixture, SmallestCodeWinsAndTypeErrorsStopTheChecks) {
  desc[4] = 0;
  MatrixArg x = arg();
  EXPECT_EQ(code(x), 1005);
  x.cols = -1;
  EXPECT_EQ(code(x), 500);  // K (position 5) before DESCA's MB
  desc[4] = 2;
  desc[0] = 3;
  desc[8] = 0;
  EXPECT_EQ(code(arg()), 1001);
}

TEST_F(Fixture, LldIsCheckedOnlyWhereColumnsAreHeld) {
  desc[8] = 3;  // below this process's 4 local rows
  EXPECT_EQ(code(arg()), 1011);
  desc[3] = 3;  // process column 2 now holds no column
  desc[7] = 0;
  MatrixArg x = arg();
  x.j = 1, x.cols = 3;
  EXPECT_EQ(code(x), 0);
}

TEST_F(Fixture, EmptySubmatricesRelaxTheChecks) {
  auto empty = [&] {
    MatrixArg x = arg();
    x.rows = 0;
    return x;
  };
  desc[2] = 0;
  desc[8] = 1;
  EXPECT_EQ(code(empty()), 0);
  desc[8] = 0;
  EXPECT_EQ(code(empty()), 1011);
}

TEST_F(Fixture, ReplicatedSourcesAreLegal) {
  desc[6] = -1;  // every process row holds all 10 rows: LLD 5 is too small
  EXPECT_EQ(code(arg()), 1011);
  desc[8] = 10;
  EXPECT_EQ(code(arg()), 0);
}

// Type 2: each of IMB, INB, MB, NB is checked, and LLD against the local rows the first block
// gives (IMB 5 of 10 rows over 2 process rows from 0: row 1 holds rows 5-6, 9: 3 rows).
TEST_F(Fixture, TypeTwoEntriesAndFirstBlockLocalRows) {
  Desc d{2, 7, 10, 12, 5, 1, 2, 3, 0, 0, 3};
  auto arg2 = [&] { return MatrixArg{d, 2, 3, 6, 8, 3, 5, 10}; };
  EXPECT_EQ(code(arg2()), 0);
  for (const int e : {kImb, kInb, kMb, kNb}) {
    Desc saved = d;
    d[e] = 0;
    EXPECT_EQ(code(arg2()), 1000 + e + 1) << "entry " << e;
    d = saved;
  }
  d[kLld] = 2;
  EXPECT_EQ(code(arg2()), 1011);
  d[kImb] = 2, d[kLld] = 4;  // regular: row 1 holds 4 rows
  EXPECT_EQ(code(arg2()), 0);
  d[kLld] = 3;
  EXPECT_EQ(code(arg2()), 1011);
}

}  // namespace
}  // namespace shardmm::scalapack
