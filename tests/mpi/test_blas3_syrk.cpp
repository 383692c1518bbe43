// shardmm::syrk / herk on layouts the ScaLAPACK drop-in never makes (1D rows or columns,
// replicated C, cyclic, a first block of another size, A on another arrangement than C)
// against a serial OpenBLAS product of the gathered matrices: the triangle within the
// normwise bound, the other triangle bit-for-bit untouched, herk's diagonal real; alpha = 0
// never reads A (NaN there); bad calls throw the same error on every rank.
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
// infinity when an element outside it changed or a herk diagonal is not real.
template <class T>
double check(const Mesh& mesh, const Case& c, index_t n, index_t k, const std::string& a_spec,
             const std::string& c_spec) {
  const bool t = c.op != Op::N;
  DistMatrix<T> A(mesh, t ? k : n, t ? n : k, a_spec), C(mesh, n, n, c_spec);
  A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  const std::vector<T> a = A.gather(), c0 = C.gather();
  const real_t<T> alpha = 1.5, beta = -0.5;
  if (c.hermitian) herk(c.uplo, c.op, alpha, A, beta, C);
  if (!c.hermitian) syrk(c.uplo, c.op, T(alpha), A, T(beta), C);
  const std::vector<T> got = C.gather();
  double err = 0;
  if (world_rank() == 0) {
    std::vector<T> ref = c0;
    const Op prime = c.hermitian && is_complex_v<T> ? Op::C : Op::T;
    const Op first = c.op == Op::N ? Op::N : prime, second = c.op == Op::N ? prime : Op::N;
    const index_t lda = std::max<index_t>(A.rows(), 1);
    blas::gemm(first, second, n, n, k, T(alpha), a.data(), lda, a.data(), lda, T(beta), ref.data(),
               std::max<index_t>(n, 1));
    const auto scale = rank_k_scale(c.op, n, k, a, a, alpha, 0, 0.5, c0);
    err = triangle_error(c, n, got, c0, ref, scale);
  }
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return err;
}

template <class T>
class BlasSyrk : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(BlasSyrk, Types);

TYPED_TEST(BlasSyrk, AnyLayoutsMatchTheSerialReference) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const std::vector<std::pair<std::string, std::string>> specs{
      {"A[I_x,J_y]", "C[I_x:bc3,J_y:bc2]"},
      {"A[I_xy,J]", "C[I_yx,J]"},
      {"A[I,J_x]", "C[I,J_xy:c]"},
      {"A[I_y:bc4f1,J_x]", "C[I_x:bc5f2,J_y:bc5f4]"},
      {"A[I,J]", "C[I,J]"},
      {"A[I_x,J_y]", "C[I_y:c,J_x:bc2]"}};
  std::vector<Case> cases;
  for (const Uplo u : {Uplo::Upper, Uplo::Lower}) {
    for (const Op op : {Op::N, Op::T}) cases.push_back({false, u, op});
    cases.push_back({true, u, Op::N});
    cases.push_back({true, u, is_complex_v<T> ? Op::C : Op::T});
  }
  for (const auto& [a, c] : specs)
    for (const Case& x : cases) {
      const double err = check<T>(mesh, x, 37, 11, a, c);
      EXPECT_LE(err, 2.0) << (x.hermitian ? "herk" : "syrk") << " uplo "
                          << (x.uplo == Uplo::Upper ? "U" : "L") << " op " << to_string(x.op)
                          << " A " << a << " C " << c;
    }
  // k large against n: the plan's "reduce" (test_blas3_plan.cpp checks that it is chosen)
  for (const Case& x : {Case{false, Uplo::Upper, Op::T}, Case{true, Uplo::Lower, Op::N}})
    EXPECT_LE(check<T>(mesh, x, 10, 400, x.op == Op::N ? "A[I_x,J_y:bc9]" : "A[I_xy,J]",
                       "C[I_y:bc3,J_x]"),
              2.0)
        << "reduce, hermitian " << x.hermitian;
  EXPECT_LE(check<T>(mesh, {false, Uplo::Lower, Op::N}, 1, 5, "A[I,J_x]", "C[I_x,J_y]"), 2.0);
  EXPECT_LE(check<T>(mesh, {true, Uplo::Upper, Op::N}, 0, 3, "A[I_x,J]", "C[I_x,J_y]"), 2.0);
}

TYPED_TEST(BlasSyrk, ZeroAlphaReadsNoAAndBadCallsThrow) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<T> A(mesh, 9, 4, "A[I_x,J_y]"), C(mesh, 9, 9, "C[I_y,J_x]");
  A.fill([](index_t, index_t) { return T(std::numeric_limits<real_t<T>>::quiet_NaN()); });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  const std::vector<T> c0 = C.gather();
  syrk(Uplo::Lower, Op::N, T(0), A, T(2), C);
  const std::vector<T> got = C.gather();
  for (std::size_t e = 0; e < got.size() && world_rank() == 0; ++e) {
    const bool in = e % 9 >= e / 9;
    ASSERT_EQ(got[e], in ? T(2) * c0[e] : c0[e]) << e;
  }
  DistMatrix<T> C2(mesh, 9, 8, "C[I_y,J_x]");
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { syrk(Uplo::Upper, Op::N, T(1), A, T(0), C2); }, "syrk");
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { herk(Uplo::Upper, Op::N, real_t<T>(1), A, real_t<T>(0), C2); }, "herk");
  if constexpr (is_complex_v<T>) {
    DistMatrix<T> At(mesh, 4, 9, "A[I_x,J_y]");
    expect_same_error_everywhere<InvalidArgument>(
        [&] { syrk(Uplo::Upper, Op::C, T(1), At, T(0), C); }, "use herk");
    expect_same_error_everywhere<InvalidArgument>(
        [&] { herk(Uplo::Upper, Op::T, real_t<T>(1), At, real_t<T>(0), C); }, "use syrk");
  }
}

}  // namespace
}  // namespace shardmm::testing
