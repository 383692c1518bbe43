// shardmm::symm / hemm, both sides and triangles, on 2D block-cyclic layouts (a first block of
// another size), 1D rows or columns, replicated, and A, B and C on different arrangements,
// against a serial OpenBLAS gemm of the full symmetric (Hermitian) matrix with a normwise
// bound; A's other triangle holds NaN, so reading it fails the test; hemm takes the imaginary
// parts of A's diagonal as zero; alpha = 0 reads neither A nor B; bad calls throw the same
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
  bool hermitian;
  Side side;
  Uplo uplo;
};

template <class T>
T symm_conj(T x, bool c) {
  if constexpr (is_complex_v<T>) return c ? std::conj(x) : x;
  (void)c;
  return x;
}

// Every rank: max |C - C_ref| / (eps (k + 2) (|alpha| |A| |B| + |beta| |C|)), elementwise max.
template <class T>
double check(const Mesh& mesh, const Case& c, index_t m, index_t n, const std::string& a_spec,
             const std::string& b_spec, const std::string& c_spec) {
  const index_t k = c.side == Side::Left ? m : n;
  DistMatrix<T> A(mesh, k, k, a_spec), B(mesh, m, n, b_spec), C(mesh, m, n, c_spec);
  const auto in = [&](index_t i, index_t j) { return c.uplo == Uplo::Upper ? i <= j : i >= j; };
  A.fill([&](index_t i, index_t j) {
    return in(i, j) ? entry<T>(i, j, 1) : T(std::numeric_limits<real_t<T>>::quiet_NaN());
  });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 3); });
  std::vector<T> ref = C.gather();
  const std::vector<T> b = B.gather();
  const T alpha = T(real_t<T>(1.25)), beta = T(real_t<T>(-0.5));
  if (c.hermitian) hemm(c.side, c.uplo, alpha, A, B, beta, C);
  else symm(c.side, c.uplo, alpha, A, B, beta, C);
  const std::vector<T> got = C.gather();
  double err = 0;
  if (world_rank() == 0 && m > 0 && n > 0) {
    std::vector<T> full(std::size_t(k) * k);
    for (index_t j = 0; j < k; ++j)
      for (index_t i = 0; i < k; ++i) {
        T v = in(i, j) ? entry<T>(i, j, 1) : symm_conj(entry<T>(j, i, 1), c.hermitian);
        if (c.hermitian && i == j) v = T(std::real(v));
        full[i + std::size_t(j) * k] = v;
      }
    if (c.side == Side::Left)
      blas::gemm(Op::N, Op::N, m, n, k, alpha, full.data(), k, b.data(), m, beta, ref.data(), m);
    else blas::gemm(Op::N, Op::N, m, n, k, alpha, b.data(), m, full.data(), k, beta, ref.data(), m);
    const double eps = std::numeric_limits<real_t<T>>::epsilon();
    for (std::size_t e = 0; e < ref.size(); ++e) {
      const double d = std::abs(got[e] - ref[e]);
      err = std::max(err, std::isnan(d) ? std::numeric_limits<double>::infinity()
                                        : d / (eps * double(k + 2) * 4));
    }
  }
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return err;
}

template <class T>
class BlasSymm : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(BlasSymm, Types);

TYPED_TEST(BlasSymm, AnyLayoutsMatchTheSerialReference) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const std::vector<std::array<std::string, 3>> specs{
      {"A[I_x:bc3,J_y:bc2]", "B[I_x:bc4f3,J_y:bc3]", "C[I_x:bc2,J_y:bc5f1]"},
      {"A[I_xy,J]", "B[I,J_xy]", "C[I_yx,J]"},
      {"A[I,J]", "B[I_x,J_y]", "C[I,J]"},
      {"A[I_y:c,J_x]", "B[I_x,J_y]", "C[I_y,J_x:bc2]"}};
  for (const auto& [a, b, cs] : specs)
    for (const bool h : {false, true})
      for (const Side s : {Side::Left, Side::Right})
        for (const Uplo u : {Uplo::Upper, Uplo::Lower}) {
          const Case c{h, s, u};
          EXPECT_LE(check<T>(mesh, c, 21, 16, a, b, cs), 4.0)
              << (h ? "hemm" : "symm") << " side " << (s == Side::Left ? "L" : "R") << " uplo "
              << (u == Uplo::Upper ? "U" : "L") << " " << a << " " << b << " " << cs;
        }
  EXPECT_LE(check<T>(mesh, {true, Side::Right, Uplo::Lower}, 1, 3, "A[I_x,J_y]", "B[I_x,J_y]",
                     "C[I_x,J_y]"),
            4.0);
  EXPECT_LE(check<T>(mesh, {false, Side::Left, Uplo::Upper}, 0, 3, "A[I_x,J_y]", "B[I_x,J_y]",
                     "C[I_x,J_y]"),
            4.0);
}

TYPED_TEST(BlasSymm, ZeroAlphaReadsNothingAndBadCallsThrow) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const T nan(std::numeric_limits<real_t<T>>::quiet_NaN());
  DistMatrix<T> A(mesh, 6, 6, "A[I_x,J_y]"), B(mesh, 6, 4, "B[I_y,J_x]"),
      C(mesh, 6, 4, "C[I_x,J_y]");
  A.fill([&](index_t, index_t) { return nan; });
  B.fill([&](index_t, index_t) { return nan; });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  const std::vector<T> c0 = C.gather();
  symm(Side::Left, Uplo::Lower, T(0), A, B, T(2), C);
  const std::vector<T> got = C.gather();
  for (std::size_t e = 0; e < got.size(); ++e) ASSERT_EQ(got[e], T(2) * c0[e]) << e;
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { symm(Side::Right, Uplo::Upper, T(1), A, B, T(0), C); }, "symm");
  DistMatrix<T> C2(mesh, 6, 5, "C[I_x,J_y]");
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { hemm(Side::Left, Uplo::Upper, T(1), A, B, T(0), C2); }, "hemm");
}

}  // namespace
}  // namespace shardmm::testing
