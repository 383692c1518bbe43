// shardmm::transpose / geadd / tradd on DistMatrix layouts the ScaLAPACK drop-in never makes
// (1D blocks, cyclic, replicated, a first block of another size, A and C on different
// arrangements of one mesh, unreduced A) against a serial reference from the gathered
// matrices; alpha = 0 never reads A (NaN there), beta = 0 never reads C; bad shapes throw the
// same error on every rank.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/instantiate.hpp"
#include "mpi/mpi_test_util.hpp"

namespace shardmm::testing {
namespace {

template <class T>
T conj_of(T x) {
  if constexpr (is_complex_v<T>) return std::conj(x);
  return x;
}

// The serial result: C0 (m x n column-major) updated with op(A) (A0 column-major).
template <class T>
std::vector<T> expected(int part, Op op, T alpha, const std::vector<T>& A0, index_t lda, T beta,
                        std::vector<T> C0, index_t m, index_t n) {
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      if ((part == 1 && i > j) || (part == 2 && i < j)) continue;  // 1 Upper, 2 Lower
      const T a = op == Op::N ? A0[i + j * lda] : A0[j + i * lda];
      const T opa = op == Op::C ? conj_of(a) : a;
      T& c = C0[i + j * m];
      c = (beta == T(0) ? T(0) : beta * c) + alpha * opa;
    }
  return C0;
}

template <class T>
double worst(const std::vector<T>& a, const std::vector<T>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
  return d;
}

template <class T>
class BlasAdd : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(BlasAdd, Types);

// part: 0 geadd (or transpose for op != N), 1 tradd Upper, 2 tradd Lower.
template <class T>
void check(const Mesh& mesh, int part, Op op, const std::string& a_spec, const std::string& c_spec,
           T alpha, T beta) {
  const index_t m = 13, n = 9;
  const bool t = op != Op::N;
  DistMatrix<T> A(mesh, t ? n : m, t ? m : n, a_spec);
  DistMatrix<T> C(mesh, m, n, c_spec);
  A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  const std::vector<T> A0 = A.gather(), C0 = C.gather();
  if (part == 0 && t) transpose(op, alpha, A, beta, C);
  if (part == 0 && !t) geadd(op, alpha, A, beta, C);
  if (part != 0) tradd(part == 1 ? Uplo::Upper : Uplo::Lower, op, alpha, A, beta, C);
  const std::vector<T> got = C.gather();
  if (world_rank() != 0) return;
  const auto want = expected(part, op, alpha, A0, A.rows(), beta, C0, m, n);
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  EXPECT_LE(worst(want, got), 8 * eps)
      << "part " << part << " op " << to_string(op) << " A " << a_spec << " C " << c_spec;
}

TYPED_TEST(BlasAdd, AnyLayoutsMatchTheSerialReference) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const std::string src = std::to_string(1 % mesh.shape().sizes[1]);  // a valid source
  const std::vector<std::pair<std::string, std::string>> specs{
      {"A[I_x,J_y]", "C[I_x,J_y]"},
      {"A[I_xy,J]", "C[I,J_yx]"},
      {"A[I,J]", "C[I_y:c,J_x]"},
      {"A[I_x:bc2f1,J_y:bc3+" + src + "]", "C[I_y:bc2,J_x:bc4f3]"},
      {"A[I,J_y]{U_x}", "C[I_x:bc2,J]"},
      {"A[I_y,J_x]", "C[I,J]"}};
  for (const auto& [a, c] : specs)
    for (const Op op : {Op::N, Op::T, Op::C})
      for (int part = 0; part < 3; ++part) check<T>(mesh, part, op, a, c, T(2), T(-0.5));
  check<T>(mesh, 0, Op::T, "A[I_x,J_y]", "C[I_y,J_x]", T(1), T(0));
  check<T>(mesh, 1, Op::N, "A[I_x,J_y]", "C[I_y,J_x]", T(0), T(3));
}

TYPED_TEST(BlasAdd, ZeroAlphaAndBetaReadNothing) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const T nan = T(std::numeric_limits<real_t<T>>::quiet_NaN());
  for (int part = 0; part < 3; ++part) {
    DistMatrix<T> A(mesh, 9, 13, "A[I_x,J_y]"), C(mesh, 13, 9, "C[I_y,J_x]");
    A.fill([&](index_t, index_t) { return nan; });  // alpha = 0: A is not read
    C.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
    const std::vector<T> C0 = C.gather();
    if (part == 0) transpose(Op::T, T(0), A, T(2), C);
    if (part != 0) tradd(part == 1 ? Uplo::Upper : Uplo::Lower, Op::T, T(0), A, T(2), C);
    const std::vector<T> got = C.gather();
    for (std::size_t e = 0; e < got.size() && world_rank() == 0; ++e) {
      const index_t i = index_t(e) % 13, j = index_t(e) / 13;
      const bool in = part == 0 || (part == 1 ? i <= j : i >= j);
      ASSERT_EQ(got[e], in ? T(2) * C0[e] : C0[e])
          << "part " << part << " (" << i << "," << j << ")";
    }
    C.fill([&](index_t, index_t) { return nan; });  // beta = 0: C is not read
    A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
    geadd(Op::T, T(1), A, T(0), C);
    for (const T& x : C.gather()) ASSERT_FALSE(std::isnan(std::abs(x)));
  }
}

TYPED_TEST(BlasAdd, ShapeMismatchThrowsEverywhere) {
  using T = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<T> A(mesh, 9, 13, "A[I_x,J_y]"), C(mesh, 9, 13, "C[I_y,J_x]");
  expect_same_error_everywhere<DimensionMismatch>([&] { transpose(Op::T, T(1), A, T(0), C); },
                                                  "transpose");
  expect_same_error_everywhere<InvalidArgument>([&] { transpose(Op::N, T(1), A, T(0), C); },
                                                "op must be T or C");
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { tradd(Uplo::Lower, Op::C, T(1), A, T(0), C); }, "tradd");
}

}  // namespace
}  // namespace shardmm::testing
