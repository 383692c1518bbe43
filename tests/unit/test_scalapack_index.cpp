// shardmm's block-cyclic index math against ScaLAPACK's own TOOLS routines (NUMROC, INDXG2P,
// INDXG2L, INDXL2G) and, for a first block of another size (type-2 descriptors' IMB/INB),
// PBLAS' PB_Cnumroc and PB_Cindxg2p, from Debian's libscalapack-openmpi. These are pure integer
// functions: no BLACS grid and no MPI_Init are needed. Fortran indices are 1-based, process
// coordinates 0-based.
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
// PBLAS tools (0-based global indices): rows of [i, i + n) on proc; owner of global index ig.
int PB_Cnumroc(int n, int i, int inb, int nb, int proc, int srcproc, int nprocs);
int PB_Cindxg2p(int ig, int inb, int nb, int proc, int srcproc, int nprocs);
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

// First block of `first` elements: owners from PB_Cindxg2p, local extents from PB_Cnumroc of
// the whole dimension, local indices from PB_Cnumroc of the indices before (what the owner
// holds ahead of an index is its local index), sub-ranges [b, b + n) from PB_Cnumroc(n, b).
class FirstBlockIndex : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(FirstBlockIndex, MatchesPblasTools) {
  const auto [nprocs, nb] = GetParam();
  for (int first = 1; first <= 2 * nb + 1; ++first)
    for (int src = 0; src < nprocs; ++src)
      for (int n = 0; n <= 30; ++n) {
        const DimMap m{n, nprocs, nb, src, first};
        for (int p = 0; p < nprocs; ++p)
          ASSERT_EQ(m.local_extent(p), PB_Cnumroc(n, 0, first, nb, p, src, nprocs))
              << "n=" << n << " first=" << first << " nb=" << nb << " src=" << src << " p=" << p;
        for (int i = 0; i < n; ++i) {
          const int p = PB_Cindxg2p(i, first, nb, 0, src, nprocs);
          ASSERT_EQ(m.owner(i), p) << "i=" << i << " first=" << first << " nb=" << nb;
          ASSERT_EQ(m.to_local(i), PB_Cnumroc(i, 0, first, nb, p, src, nprocs)) << "i=" << i;
          ASSERT_EQ(m.to_global(m.to_local(i), p), i);
          for (int len = 0; i + len <= n; len += 3)
            for (int q = 0; q < nprocs; ++q)
              ASSERT_EQ(m.sub(i, len).local_extent(q),
                        PB_Cnumroc(len, i, first, nb, q, src, nprocs))
                  << "sub(" << i << "," << len << ") first=" << first << " nb=" << nb;
        }
      }
}

INSTANTIATE_TEST_SUITE_P(All, FirstBlockIndex,
                         ::testing::Combine(::testing::Range(1, 6), ::testing::Range(1, 6)));

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
  // First block 1, then blocks of 2 over 3 processes from 1: 0 -> p1, 1-2 -> p2, 3-4 -> p0,
  // 5-6 -> p1, 7 -> p2.
  EXPECT_EQ(PB_Cnumroc(8, 0, 1, 2, 1, 1, 3), 3);
  EXPECT_EQ(PB_Cnumroc(8, 0, 1, 2, 2, 1, 3), 3);
  EXPECT_EQ(PB_Cnumroc(8, 0, 1, 2, 0, 1, 3), 2);
  EXPECT_EQ(PB_Cindxg2p(0, 1, 2, 0, 1, 3), 1);
  EXPECT_EQ(PB_Cindxg2p(3, 1, 2, 0, 1, 3), 0);
  EXPECT_EQ(PB_Cindxg2p(7, 1, 2, 0, 1, 3), 2);
}

}  // namespace
