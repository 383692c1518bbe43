// shardmm::trsm / trmm, every side, uplo, op and diag, on 2D block-cyclic layouts with blocks
// that do and do not divide the sizes, a first block of another size, 1D rows or columns, a
// replicated B and A on another arrangement than B, against a serial OpenBLAS ?trsm / ?trmm
// of the gathered matrices with a normwise bound; A's other triangle (and a unit diagonal)
// holds NaN, so reading it fails the test; alpha = 0 never reads A; bad calls throw the same
// error on every rank.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "blas/blas.hpp"
#include "core/instantiate.hpp"
#include "mpi/mpi_test_util.hpp"

namespace shardmm::testing {
namespace {

struct Case {
  bool solve;
  Side side;
  Uplo uplo;
  Op op;
  Diag diag;
};

std::string describe(const Case& c) {
  return std::string(c.solve ? "trsm" : "trmm") + " side " + (c.side == Side::Left ? "L" : "R") +
         " uplo " + (c.uplo == Uplo::Upper ? "U" : "L") + " op " + to_string(c.op) + " diag " +
         (c.diag == Diag::Unit ? "U" : "N");
}

// A well-conditioned triangle: the diagonal about n + 1, the rest of size 1 / n; NaN in the
// other triangle and (unit) on the diagonal, which must never be read.
template <class T>
T triangle_entry(const Case& c, index_t n, index_t i, index_t j) {
  const bool in = c.uplo == Uplo::Upper ? i <= j : i >= j;
  const T nan(std::numeric_limits<real_t<T>>::quiet_NaN());
  if (!in || (i == j && c.diag == Diag::Unit)) return nan;
  if (i == j) return T(real_t<T>(n + 1)) + entry<T>(i, j, 3);
  return entry<T>(i, j, 4) / T(real_t<T>(n));
}

// Every rank: max |X - X_ref| / (eps n max|X_ref|), with X_ref from one serial BLAS call.
template <class T>
double check(const Mesh& mesh, const Case& c, index_t m, index_t n, const std::string& a_spec,
             const std::string& b_spec) {
  const index_t na = c.side == Side::Left ? m : n;
  DistMatrix<T> A(mesh, na, na, a_spec), B(mesh, m, n, b_spec);
  A.fill([&](index_t i, index_t j) { return triangle_entry<T>(c, na, i, j); });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
  std::vector<T> ref = B.gather();
  const std::vector<T> a = A.gather();
  const T alpha = T(real_t<T>(0.75));
  if (c.solve) trsm(c.side, c.uplo, c.op, c.diag, alpha, A, B);
  else trmm(c.side, c.uplo, c.op, c.diag, alpha, A, B);
  const std::vector<T> got = B.gather();
  double err = 0;
  if (world_rank() == 0 && m > 0 && n > 0) {
    blas::scale(m, n, alpha, ref.data(), m);
    const bool left = c.side == Side::Left, lower = c.uplo == Uplo::Lower;
    const bool unit = c.diag == Diag::Unit;
    if (c.solve)
      blas::trsm(left, lower, c.op, unit, m, n, a.data(), std::max<index_t>(na, 1), ref.data(), m);
    else
      blas::trmm(left, lower, c.op, unit, m, n, a.data(), std::max<index_t>(na, 1), ref.data(), m);
    double norm = 0;
    for (const T& x : ref) norm = std::max(norm, double(std::abs(x)));
    const double eps = std::numeric_limits<real_t<T>>::epsilon();
    for (std::size_t e = 0; e < ref.size(); ++e) {
      const double d = std::abs(got[e] - ref[e]);
      err = std::max(err, std::isnan(d) ? std::numeric_limits<double>::infinity()
                                        : d / (eps * double(na + 2) * std::max(norm, 1e-30)));
    }
  }
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return err;
}

std::vector<Case> all_cases(bool complex) {
  std::vector<Case> cases;
  const std::vector<Op> ops =
      complex ? std::vector<Op>{Op::N, Op::T, Op::C} : std::vector<Op>{Op::N, Op::T};
  for (const bool solve : {true, false})
    for (const Side s : {Side::Left, Side::Right})
      for (const Uplo u : {Uplo::Upper, Uplo::Lower})
        for (const Op op : ops)
          for (const Diag d : {Diag::NonUnit, Diag::Unit}) cases.push_back({solve, s, u, op, d});
  return cases;
}

template <class T>
class BlasTriangular : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(BlasTriangular, Types);

TYPED_TEST(BlasTriangular, EveryFlagOnBlockCyclicLayouts) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  for (const Case& c : all_cases(is_complex_v<T>)) {
    const double err = check<T>(mesh, c, 23, 17, "A[I_x:bc3,J_y:bc2]", "B[I_x:bc4f3,J_y:bc3]");
    EXPECT_LE(err, 4.0) << describe(c);
  }
}

TYPED_TEST(BlasTriangular, OtherLayoutsAndSizes) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const std::vector<std::pair<std::string, std::string>> specs{
      {"A[I_xy,J]", "B[I_xy,J]"},
      {"A[I,J_xy]", "B[I,J_xy]"},
      {"A[I_x,J_y]", "B[I_y:c,J_x]"},
      {"A[I,J]", "B[I,J]"},
      {"A[I_y:bc5,J_x:bc2]", "B[I_x:bc7,J_y:bc5f2]"}};
  const std::vector<Case> cases = all_cases(false);
  for (const auto& [a, b] : specs)
    for (std::size_t i = 0; i < cases.size(); i += 3) {  // a third of the flags per layout pair
      const Case& c = cases[(i + specs.size()) % cases.size()];
      EXPECT_LE(check<T>(mesh, c, 19, 29, a, b), 4.0) << describe(c) << " A " << a << " B " << b;
    }
  for (const Case& c : {Case{true, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit},
                        Case{false, Side::Right, Uplo::Upper, Op::T, Diag::Unit}}) {
    EXPECT_LE(check<T>(mesh, c, 1, 5, "A[I_x,J_y]", "B[I_x,J_y]"), 4.0) << describe(c);
    EXPECT_LE(check<T>(mesh, c, 0, 3, "A[I_x,J_y]", "B[I_x,J_y]"), 4.0) << describe(c);
    EXPECT_LE(check<T>(mesh, c, 300, 7, "A[I_x:bc64,J_y:bc64]", "B[I_x:bc64,J_y]"), 4.0)
        << describe(c);
  }
  // op(A) small against B: the plan's "local" on 4 ranks and more (test_blas3_plan.cpp)
  for (const Case& c : {Case{true, Side::Left, Uplo::Upper, Op::T, Diag::NonUnit},
                        Case{false, Side::Left, Uplo::Lower, Op::N, Diag::Unit}})
    EXPECT_LE(check<T>(mesh, c, 12, 500, "A[I_xy,J]", "B[I_xy,J]"), 4.0) << describe(c);
  for (const Case& c : {Case{true, Side::Right, Uplo::Lower, Op::N, Diag::Unit},
                        Case{false, Side::Right, Uplo::Upper, Op::T, Diag::NonUnit}})
    EXPECT_LE(check<T>(mesh, c, 500, 12, "A[I,J_xy]", "B[I,J_xy]"), 4.0) << describe(c);
}

TYPED_TEST(BlasTriangular, ZeroAlphaReadsNoAAndBadCallsThrow) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<T> A(mesh, 9, 9, "A[I_x,J_y]"), B(mesh, 9, 4, "B[I_y,J_x]");
  A.fill([](index_t, index_t) { return T(std::numeric_limits<real_t<T>>::quiet_NaN()); });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  trsm(Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, T(0), A, B);
  trmm(Side::Left, Uplo::Upper, Op::T, Diag::Unit, T(0), A, B);
  for (const T& x : B.gather()) ASSERT_EQ(x, T(0));
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { trsm(Side::Right, Uplo::Upper, Op::N, Diag::NonUnit, T(1), A, B); }, "trsm");
  DistMatrix<T> A2(mesh, 9, 8, "A[I_x,J_y]");
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { trmm(Side::Left, Uplo::Upper, Op::N, Diag::NonUnit, T(1), A2, B); }, "trmm");
}

}  // namespace
}  // namespace shardmm::testing
