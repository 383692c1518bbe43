// shardmm's block-cyclic index math against ScaLAPACK's own TOOLS routines (NUMROC, INDXG2P,
// INDXG2L, INDXL2G) from Debian's libscalapack-openmpi. These are pure integer functions: no
// BLACS grid and no MPI_Init are needed. Fortran indices are 1-based, process coordinates
// 0-based.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "shardmm/layout.hpp"

extern "C" {
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc, const int* nprocs);
int indxg2p_(const int* indxglob, const int* nb, const int* iproc, const int* isrcproc,
             const int* nprocs);
int indxg2l_(const int* indxglob, const int* nb, const int* iproc, const int* isrcproc,
             const int* nprocs);
int indxl2g_(const int* indxloc, const int* nb, const int* iproc, const int* isrcproc,
             const int* nprocs);
}

namespace {

using shardmm::DimMap;
using shardmm::index_t;

// One block-cyclic dimension as ScaLAPACK sees it.
struct Fortran {
  int nb, src, nprocs;
  [[nodiscard]] int numroc(int n, int proc) const { return numroc_(&n, &nb, &proc, &src, &nprocs); }
  [[nodiscard]] int g2p(int ig) const {
    const int unused = 0;
    return indxg2p_(&ig, &nb, &unused, &src, &nprocs);
  }
  [[nodiscard]] int g2l(int ig) const {
    const int unused = 0;
    return indxg2l_(&ig, &nb, &unused, &src, &nprocs);
  }
  [[nodiscard]] int l2g(int il, int proc) const { return indxl2g_(&il, &nb, &proc, &src, &nprocs); }
};

std::string describe(int n, const Fortran& f) {
  return "n=" + std::to_string(n) + " nb=" + std::to_string(f.nb) +
         " src=" + std::to_string(f.src) + " nprocs=" + std::to_string(f.nprocs);
}

::testing::AssertionResult check_numroc(int n, const Fortran& f, const DimMap& m) {
  for (int p = 0; p < f.nprocs; ++p) {
    const index_t want = f.numroc(n, p);
    const index_t got = shardmm::numroc(n, f.nb, p, f.src, f.nprocs);
    if (got != want || m.local_extent(p) != want)
      return ::testing::AssertionFailure()
             << describe(n, f) << " proc " << p << ": NUMROC " << want << ", shardmm::numroc "
             << got << ", local_extent " << m.local_extent(p);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_global_indices(int n, const Fortran& f, const DimMap& m) {
  for (int ig = 1; ig <= n; ++ig) {
    const index_t i = ig - 1;
    if (m.owner(i) != f.g2p(ig) || m.to_local(i) + 1 != f.g2l(ig))
      return ::testing::AssertionFailure()
             << describe(n, f) << " global " << ig << ": INDXG2P " << f.g2p(ig) << " owner "
             << m.owner(i) << ", INDXG2L " << f.g2l(ig) << " to_local+1 " << m.to_local(i) + 1;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check_local_indices(int n, const Fortran& f, const DimMap& m) {
  for (int p = 0; p < f.nprocs; ++p)
    for (int il = 1; il <= f.numroc(n, p); ++il) {
      const index_t got = m.to_global(il - 1, p) + 1;
      if (got != f.l2g(il, p))
        return ::testing::AssertionFailure()
               << describe(n, f) << " proc " << p << " local " << il << ": INDXL2G " << f.l2g(il, p)
               << ", to_global+1 " << got;
    }
  return ::testing::AssertionSuccess();
}

class ScalapackIndex : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ScalapackIndex, MatchesToolRoutines) {
  const auto [nprocs, nb] = GetParam();
  for (int src = 0; src < nprocs; ++src) {
    const Fortran f{nb, src, nprocs};
    for (int n = 0; n <= 60; ++n) {
      const DimMap m{n, nprocs, nb, src};
      ASSERT_TRUE(check_numroc(n, f, m));
      ASSERT_TRUE(check_global_indices(n, f, m));
      ASSERT_TRUE(check_local_indices(n, f, m));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, ScalapackIndex,
                         ::testing::Combine(::testing::Range(1, 7), ::testing::Range(1, 8)));

// The reference itself, on values worked out by hand (so the comparison above cannot pass
// against a broken or mis-declared reference).
TEST(ScalapackIndex, ToolRoutinesSanity) {
  const Fortran f{2, 1, 3};  // 1-2 -> p1, 3-4 -> p2, 5-6 -> p0, 7-8 -> p1, 9-10 -> p2, 11 -> p0
  EXPECT_EQ(f.numroc(11, 0), 3);
  EXPECT_EQ(f.numroc(11, 1), 4);
  EXPECT_EQ(f.numroc(11, 2), 4);
  EXPECT_EQ(f.g2p(1), 1);
  EXPECT_EQ(f.g2p(3), 2);
  EXPECT_EQ(f.g2p(5), 0);
  EXPECT_EQ(f.g2p(7), 1);
  EXPECT_EQ(f.g2l(8), 4);
  EXPECT_EQ(f.l2g(3, 1), 7);
}

}  // namespace
