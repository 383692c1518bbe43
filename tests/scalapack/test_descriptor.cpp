// Descriptor checks and submatrix geometry of the p?gemm drop-in (no MPI, no BLACS calls).
#include <gtest/gtest.h>

#include "scalapack/descriptor.hpp"

namespace shardmm::scalapack {
namespace {

// Exhaustive over small maps: the submatrix's local pieces are where the full map puts them,
// and aligned() holds exactly when the submatrix is block-cyclic with whole blocks.
TEST(SubDim, LocalRangesAndAlignmentMatchTheFullMap) {
  for (int P = 1; P <= 4; ++P)
    for (int nb = 1; nb <= 4; ++nb)
      for (int src = 0; src < P; ++src)
        for (index_t M = 1; M <= 13; ++M)
          for (index_t begin = 0; begin < M; ++begin)
            for (index_t size = 1; begin + size <= M; ++size) {
              const SubDim s{DimMap{M, P, nb, src}, false, begin, size};
              const DimMap sub{size, P, nb, s.full.owner(begin)};
              bool same_as_whole_blocks = true;
              std::vector<index_t> seen(P, 0);
              for (index_t g = 0; g < size; ++g) {
                const int p = s.full.owner(begin + g);
                // contiguous local indices from local_begin, in global order
                ASSERT_EQ(s.full.to_local(begin + g), s.local_begin(p) + seen[p]++)
                    << "P=" << P << " nb=" << nb << " src=" << src << " M=" << M
                    << " begin=" << begin << " g=" << g;
                same_as_whole_blocks &= sub.owner(g) == p && sub.to_local(g) == seen[p] - 1;
              }
              for (int p = 0; p < P; ++p) ASSERT_EQ(s.local_size(p), seen[p]);
              ASSERT_EQ(s.aligned(), same_as_whole_blocks)
                  << "P=" << P << " nb=" << nb << " src=" << src << " M=" << M << " begin=" << begin
                  << " size=" << size;
            }
}

TEST(SubDim, ReplicatedIsAlwaysAlignedAndLocal) {
  const SubDim s{DimMap{20, 1, 3, 0}, true, 7, 5};
  EXPECT_TRUE(s.aligned());
  EXPECT_EQ(s.local_begin(2), 7);
  EXPECT_EQ(s.local_size(1), 5);
  EXPECT_EQ(s.spec("I", "p").kind, DimSpec::Kind::Replicated);
}

// A 2 x 3 grid seen from process (1, 2); matrix argument at DESC position 10 (IA 8, JA 9).
struct Fixture : ::testing::Test {
  Grid g{7, 2, 3, 1, 2};
  int desc[9] = {1, 7, 10, 12, 2, 3, 0, 0, 5};  // process row 1 holds 4 rows of 10
  MatrixArg arg() const { return MatrixArg{desc, 2, 3, 6, 8, 3, 5, 10}; }
  int code(MatrixArg x) const { return check_matrix(g, x); }
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

TEST_F(Fixture, DescriptorErrorsArePositionTimes100PlusEntry) {
  const std::pair<int, int> cases[] = {{kDtype, 2}, {kCtxt, 8},  {kMB, 0}, {kNB, -1},
                                       {kRsrc, 2},  {kCsrc, -2}, {kM, 0},  {kLld, 3}};
  for (const auto& [entry, value] : cases) {
    const int saved = desc[entry];
    desc[entry] = value;
    EXPECT_EQ(code(arg()), 1000 + entry + 1) << "entry " << entry << " = " << value;
    desc[entry] = saved;
  }
}

TEST_F(Fixture, SmallestCodeWinsAndTypeErrorsStopTheChecks) {
  MatrixArg x = arg();
  x.cols = -1;
  desc[kMB] = 0;
  EXPECT_EQ(code(x), 500);  // K (position 5) before DESCA's MB
  desc[kMB] = 2;
  desc[kDtype] = 3;
  desc[kLld] = 0;
  EXPECT_EQ(code(arg()), 1001);
}

TEST_F(Fixture, LldIsCheckedOnlyWhereColumnsAreHeld) {
  desc[kLld] = 3;  // below this process's 4 local rows
  EXPECT_EQ(code(arg()), 1009);
  desc[kN] = 3;  // process column 2 now holds no column
  desc[kCsrc] = 0;
  MatrixArg x = arg();
  x.j = 1, x.cols = 3;
  EXPECT_EQ(code(x), 0);
}

TEST_F(Fixture, EmptySubmatricesRelaxTheChecks) {
  MatrixArg x = arg();
  x.rows = 0;
  desc[kM] = 0;
  desc[kLld] = 1;
  EXPECT_EQ(code(x), 0);
  desc[kLld] = 0;
  EXPECT_EQ(code(x), 1009);
}

TEST_F(Fixture, ReplicatedSourcesAreLegal) {
  desc[kRsrc] = -1;  // every process row holds all 10 rows: LLD 5 is too small
  EXPECT_EQ(code(arg()), 1009);
  desc[kLld] = 10;
  EXPECT_EQ(code(arg()), 0);
}

}  // namespace
}  // namespace shardmm::scalapack
