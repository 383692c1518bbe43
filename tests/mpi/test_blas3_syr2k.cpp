// shardmm::syr2k / her2k on layouts the ScaLAPACK drop-in never makes (1D rows or columns,
// replicated C, cyclic, a first block of another size, A and B on other arrangements than C)
// against a serial OpenBLAS pair of products of the gathered matrices: the triangle within
// the normwise bound, the other triangle bit-for-bit untouched, her2k's diagonal real;
// alpha = 0 never reads A or B (NaN there); bad calls throw the same error on every rank.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "blas/blas.hpp"
#include "core/instantiate.hpp"
#include "mpi/mpi_test_util.hpp"
#include "mpi/rank_k_check.hpp"

namespace shardmm::testing {
namespace {

using Case = RankKCase;

// Every rank: the largest error of the triangle against its componentwise rounding scale, or
// infinity when an element outside it changed or a her2k diagonal is not real.
template <class T>
double check(const Mesh& mesh, const Case& c, index_t n, index_t k, const std::string& a_spec,
             const std::string& b_spec, const std::string& c_spec) {
  const bool t = c.op != Op::N;
  DistMatrix<T> A(mesh, t ? k : n, t ? n : k, a_spec), B(mesh, t ? k : n, t ? n : k, b_spec);
  DistMatrix<T> C(mesh, n, n, c_spec);
  A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 4); });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  const std::vector<T> a = A.gather(), b = B.gather(), c0 = C.gather();
  T alpha = T(real_t<T>(1.5));
  if constexpr (is_complex_v<T>) alpha = T(1.5, -0.75);
  const real_t<T> beta = -0.5;
  if (c.hermitian) her2k(c.uplo, c.op, alpha, A, B, beta, C);
  else syr2k(c.uplo, c.op, alpha, A, B, T(beta), C);
  const std::vector<T> got = C.gather();
  double err = 0;
  if (world_rank() == 0) {
    std::vector<T> ref = c0;
    const Op prime = c.hermitian && is_complex_v<T> ? Op::C : Op::T;
    const Op first = c.op == Op::N ? Op::N : prime, second = c.op == Op::N ? prime : Op::N;
    const index_t lda = std::max<index_t>(A.rows(), 1), ldc = std::max<index_t>(n, 1);
    T alpha2 = alpha;
    if constexpr (is_complex_v<T>) alpha2 = c.hermitian ? std::conj(alpha) : alpha;
    blas::gemm(first, second, n, n, k, alpha, a.data(), lda, b.data(), lda, T(beta), ref.data(),
               ldc);
    blas::gemm(first, second, n, n, k, alpha2, b.data(), lda, a.data(), lda, T(1), ref.data(), ldc);
    const double a1 = std::abs(alpha);
    const auto scale = rank_k_scale(c.op, n, k, a, b, a1, a1, 0.5, c0);
    err = triangle_error(c, n, got, c0, ref, scale);
  }
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return err;
}

template <class T>
class BlasSyr2k : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(BlasSyr2k, Types);

TYPED_TEST(BlasSyr2k, AnyLayoutsMatchTheSerialReference) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const std::vector<std::array<std::string, 3>> specs{
      {"A[I_x,J_y]", "B[I_y,J_x:bc2]", "C[I_x:bc3,J_y:bc2]"},
      {"A[I_xy,J]", "B[I,J_xy]", "C[I_yx,J]"},
      {"A[I_y:bc4f1,J_x]", "B[I_x,J_y]", "C[I_x:bc5f2,J_y:bc5f4]"},
      {"A[I,J]", "B[I_x,J_y]", "C[I,J]"}};
  std::vector<Case> cases;
  for (const Uplo u : {Uplo::Upper, Uplo::Lower}) {
    for (const Op op : {Op::N, Op::T}) cases.push_back({false, u, op});
    cases.push_back({true, u, Op::N});
    cases.push_back({true, u, is_complex_v<T> ? Op::C : Op::T});
  }
  for (std::size_t s = 0; s < specs.size(); ++s)
    for (std::size_t i = s % 2; i < cases.size(); i += 2) {  // each case on two layout sets
      const auto& [a, b, c] = specs[s];
      const Case& x = cases[i];
      const double err = check<T>(mesh, x, 29, 11, a, b, c);
      EXPECT_LE(err, 2.0) << (x.hermitian ? "her2k" : "syr2k") << " uplo "
                          << (x.uplo == Uplo::Upper ? "U" : "L") << " op " << to_string(x.op)
                          << " A " << a << " B " << b << " C " << c;
    }
  // k large against n: the plan's "reduce" (test_blas3_plan.cpp checks that it is chosen)
  for (const RankKCase& x :
       {RankKCase{false, Uplo::Lower, Op::T}, RankKCase{true, Uplo::Upper, Op::N}})
    EXPECT_LE(check<T>(mesh, x, 9, 400, x.op == Op::N ? "A[I_x,J_y:bc7]" : "A[I_x:bc7,J_y]",
                       x.op == Op::N ? "B[I,J_xy]" : "B[I_xy,J]", "C[I_x:bc2,J_y]"),
              2.0)
        << "reduce, hermitian " << x.hermitian;
  EXPECT_LE(check<T>(mesh, {true, Uplo::Lower, Op::N}, 1, 5, "A[I,J_x]", "B[I_x,J]", "C[I_x,J_y]"),
            2.0);
  EXPECT_LE(check<T>(mesh, {false, Uplo::Upper, Op::N}, 7, 0, "A[I_x,J]", "B[I_x,J]", "C[I_x,J_y]"),
            2.0);
}

TYPED_TEST(BlasSyr2k, ZeroAlphaReadsNothingAndBadCallsThrow) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const T nan(std::numeric_limits<real_t<T>>::quiet_NaN());
  DistMatrix<T> A(mesh, 9, 4, "A[I_x,J_y]"), B(mesh, 9, 4, "B[I_y,J_x]"),
      C(mesh, 9, 9, "C[I_y,J_x]");
  A.fill([&](index_t, index_t) { return nan; });
  B.fill([&](index_t, index_t) { return nan; });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  const std::vector<T> c0 = C.gather();
  syr2k(Uplo::Lower, Op::N, T(0), A, B, T(2), C);
  const std::vector<T> got = C.gather();
  for (std::size_t e = 0; e < got.size() && world_rank() == 0; ++e) {
    const bool in = e % 9 >= e / 9;
    ASSERT_EQ(got[e], in ? T(2) * c0[e] : c0[e]) << e;
  }
  DistMatrix<T> B2(mesh, 9, 5, "B[I_y,J_x]");
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { syr2k(Uplo::Upper, Op::N, T(1), A, B2, T(0), C); }, "syr2k");
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { her2k(Uplo::Upper, Op::N, T(1), A, B2, real_t<T>(0), C); }, "her2k");
}

}  // namespace
}  // namespace shardmm::testing
