// Block-cyclic test matrices for the PBLAS drop-in tests: a BLACS grid, random descriptors
// (type 1, LLD padded, nonzero sources, submatrix offsets) and this process's local array,
// every element a deterministic function of its global index, so a serial reference is a
// loop over the local elements.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mpi/mpi_test_util.hpp"

extern "C" {
void Cblacs_get(int ctxt, int what, int* val);
void Cblacs_gridinit(int* ctxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ctxt);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
}

namespace shardmm::testing {

/// A BLACS grid nprow x npcol on the first ranks of the world (row == -1 elsewhere).
struct BlacsGrid {
  int ctxt = -1, nprow = 0, npcol = 0, row = -1, col = -1;
  BlacsGrid(int p, int q, const char* order = "Row") {
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, order, p, q);
    Cblacs_gridinfo(ctxt, &nprow, &npcol, &row, &col);
  }
  ~BlacsGrid() {
    if (row >= 0) Cblacs_gridexit(ctxt);
  }
  BlacsGrid(const BlacsGrid&) = delete;
  BlacsGrid& operator=(const BlacsGrid&) = delete;
  BlacsGrid(BlacsGrid&&) = delete;
  BlacsGrid& operator=(BlacsGrid&&) = delete;
  [[nodiscard]] bool member() const { return row >= 0; }
};

/// One distributed matrix argument: the whole matrix, its submatrix sub(X) = X(i:, j:)
/// (1-based) of rows x cols, and this process's local array (LLD = local rows + 1: one
/// padding row that must stay untouched).
template <class T>
struct PMatrix {
  int M = 0, N = 0, mb = 1, nb = 1, rsrc = 0, csrc = 0, i = 1, j = 1;
  int desc[9] = {};
  int lr = 0, lc = 0, lld = 1;
  int seed = 0;
  std::vector<T> data;
  DimMap row_map() const { return DimMap{M, desc_p, mb, rsrc}; }
  DimMap col_map() const { return DimMap{N, desc_q, nb, csrc}; }
  int desc_p = 1, desc_q = 1;
};

/// A random matrix argument whose submatrix is rows x cols on `g`, filled with
/// entry<T>(i, j, seed); the padding row holds a sentinel.
template <class T>
PMatrix<T> random_matrix(std::mt19937& rng, const BlacsGrid& g, int rows, int cols, int seed) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  PMatrix<T> x;
  x.seed = seed;
  x.desc_p = g.nprow, x.desc_q = g.npcol;
  x.mb = pick(1, 5), x.nb = pick(1, 5);
  x.rsrc = pick(0, g.nprow - 1), x.csrc = pick(0, g.npcol - 1);
  x.i = pick(1, 4), x.j = pick(1, 4);
  x.M = x.i - 1 + rows + pick(0, 3), x.N = x.j - 1 + cols + pick(0, 3);
  x.lr = static_cast<int>(x.row_map().local_extent(g.row));
  x.lc = static_cast<int>(x.col_map().local_extent(g.col));
  x.lld = x.lr + 1;
  int info = 0, ctxt = g.ctxt;
  descinit_(x.desc, &x.M, &x.N, &x.mb, &x.nb, &x.rsrc, &x.csrc, &ctxt, &x.lld, &info);
  x.data.assign(static_cast<std::size_t>(x.lld) * std::max(1, x.lc), T(-777));
  for (int jl = 0; jl < x.lc; ++jl)
    for (int il = 0; il < x.lr; ++il)
      x.data[il + std::size_t(jl) * x.lld] =
          entry<T>(x.row_map().to_global(il, g.row), x.col_map().to_global(jl, g.col), seed);
  return x;
}

/// alpha or beta of a random case: 0, 1, or a value of its own (complex for complex types).
template <class T>
T pick_scalar(std::mt19937& rng, bool beta) {
  const int r = std::uniform_int_distribution<int>(0, 4)(rng);
  if (r == 0) return T(0);
  if (r == 1) return T(1);
  if constexpr (is_complex_v<T>) {
    if (r == 2) return T(real_t<T>(1.5), real_t<T>(beta ? 0.5 : -0.75));
  }
  return T(beta ? real_t<T>(-1.25) : real_t<T>(2.5));
}

/// The BLACS grids a test runs on: 1 x 1, 1 x P, P x 1, and 2 x 2 / 2 x 3 on 4 / 6 ranks.
inline std::vector<std::pair<int, int>> test_grids(int P) {
  std::vector<std::pair<int, int>> grids{{1, 1}, {1, P}, {P, 1}};
  if (P == 4) grids.emplace_back(2, 2);
  if (P == 6) grids.emplace_back(2, 3);
  return grids;
}

/// The largest |a - b| over the local arrays, and the largest |a|.
template <class T>
std::pair<double, double> max_diff(const std::vector<T>& a, const std::vector<T>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, double(std::abs(a[i] - b[i])));
    norm = std::max(norm, double(std::abs(a[i])));
  }
  return {diff, norm};
}

/// X's local array on this process set from f(si, sj) inside sub(X) (0-based, rows x cols),
/// left as it is outside.
template <class T, class F>
void set_sub(const BlacsGrid& g, PMatrix<T>& X, int rows, int cols, F f) {
  for (int jl = 0; jl < X.lc; ++jl)
    for (int il = 0; il < X.lr; ++il) {
      const int si = int(X.row_map().to_global(il, g.row)) - (X.i - 1);
      const int sj = int(X.col_map().to_global(jl, g.col)) - (X.j - 1);
      if (si >= 0 && si < rows && sj >= 0 && sj < cols)
        X.data[il + std::size_t(jl) * X.lld] = f(si, sj);
    }
}

/// " grid PxQ", for a case's description.
inline std::string grid_text(const BlacsGrid& g) {
  return " grid " + std::to_string(g.nprow) + "x" + std::to_string(g.npcol);
}

/// The three comparisons of a case: shardmm's local array against the serial reference and
/// against ScaLAPACK's, and ScaLAPACK's against the reference, each within `bound`.
template <class T>
void expect_matches(const std::vector<T>& expected, const std::vector<T>& ours,
                    const std::vector<T>& scalapack, double bound, const std::string& what) {
  EXPECT_LE(max_diff(expected, ours).first, bound) << what << " vs serial reference";
  EXPECT_LE(max_diff(scalapack, ours).first, bound) << what << " vs ScaLAPACK";
  EXPECT_LE(max_diff(expected, scalapack).first, bound) << what << " (ScaLAPACK itself)";
}

/// A routine as the test's common pointer type F (the routines differ only in the pointee
/// types of their void* arguments); nullptr: a variant the element type lacks.
template <class F, class G>
F as_routine(G* routine) {
  return reinterpret_cast<F>(routine);
}
template <class F>
F as_routine(std::nullptr_t) {
  return F{};
}

/// Defines Routines<T>::get(variant, impl) for element type T: [variant][0 ScaLAPACK,
/// 1 shardmm], e.g. variant 1 the Hermitian routine (nullptr, nullptr for real types).
#define SHARDMM_TEST_ROUTINES(F, T, scalapack0, shardmm0, scalapack1, shardmm1)   \
  template <>                                                                     \
  struct Routines<T> {                                                            \
    static F get(bool variant, int impl) {                                        \
      const F own[2][2] = {{as_routine<F>(scalapack0), as_routine<F>(shardmm0)},  \
                           {as_routine<F>(scalapack1), as_routine<F>(shardmm1)}}; \
      return own[variant][impl];                                                  \
    }                                                                             \
  }

/// Every grid of the world's ranks (test_grids) in both BLACS orders, every entry of `flags`,
/// three random cases each: `run(rng, grid, flags, id)` on the grid's members. Every rank
/// draws the same cases from `seed`.
template <class FlagList, class Run>
void for_each_case(unsigned seed, const FlagList& flags, Run run) {
  std::mt19937 rng(seed);
  int id = 0;
  for (auto [p, q] : test_grids(world_size()))
    for (const char* order : {"Row", "Col"}) {
      const BlacsGrid g(p, q, order);
      for (const auto& f : flags)
        for (int rep = 0; rep < 3; ++rep, ++id) {
          std::mt19937 case_rng(rng());  // every rank draws the same case
          if (g.member()) run(case_rng, g, f, id);
        }
    }
}

/// The typed test `Suite` of a drop-in test file: for every element type, run_case<T> on the
/// cases for_each_case draws from `seed` over all_flags(is_complex_v<T>) (both the file's).
#define SHARDMM_PBLAS_CASES_TEST(Suite, seed)                                      \
  template <class T>                                                               \
  class Suite : public ::testing::Test {};                                         \
  using Suite##Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;                     \
  TYPED_TEST_SUITE(Suite, Suite##Types);                                           \
  TYPED_TEST(Suite, MatchesScaLapackAndSerialReference) {                          \
    using T = TypeParam;                                                           \
    for_each_case(seed, all_flags(is_complex_v<T>),                                \
                  [](std::mt19937& r, const BlacsGrid& g, const auto& f, int id) { \
                    run_case<T>(r, g, f, id);                                      \
                  });                                                              \
  }

}  // namespace shardmm::testing
