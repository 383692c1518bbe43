// 16-bit storage (bf16, f16): redistribution between layouts moves the 16-bit patterns
// unchanged (and sums unreduced ones in f32); .npy '<f2' and raw bf16 files hold exactly the
// patterns, in file order; bf16 .npy files are refused on every rank.
#include <gtest/gtest.h>

#include "mpi/npy_test_util.hpp"

namespace shardmm::testing {
namespace {

using namespace npy;

template <class H>
class HalfStorage : public ::testing::Test {};
using HalfTypes = ::testing::Types<bf16, f16>;
TYPED_TEST_SUITE(HalfStorage, HalfTypes);

// Every local element of X is entry<H>(i, j, seed), bit for bit.
template <class H>
void expect_entries(const DistMatrix<H>& X, int seed, const std::string& what) {
  for (index_t j = 0; j < X.local_cols(); ++j)
    for (index_t i = 0; i < X.local_rows(); ++i)
      ASSERT_EQ(X.local(i, j).bits, entry<H>(X.global_row(i), X.global_col(j), seed).bits)
          << what << " (" << X.global_row(i) << ", " << X.global_col(j) << ")";
}

TYPED_TEST(HalfStorage, RedistributionMovesThePatterns) {
  using H = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const char* specs[] = {"A[I_X,J_Y]", "A[I_Y:c,J]", "A[I,J_XY]", "A[I,J]", "A[I_X:bc3,J_Y:bc2]"};
  DistMatrix<H> src(mesh, 17, 11, specs[0]);
  src.fill([](index_t i, index_t j) { return entry<H>(i, j, 4); });
  for (const char* to : specs) {
    DistMatrix<H> dst(mesh, 17, 11, to);
    redistribute(src, dst);
    expect_entries(dst, 4, to);
  }
  const auto all = src.gather();
  if (world_rank() != 0) return;
  for (index_t j = 0; j < 11; ++j)
    for (index_t i = 0; i < 17; ++i) ASSERT_EQ(all[i + j * 17].bits, entry<H>(i, j, 4).bits);
}

TYPED_TEST(HalfStorage, UnreducedPartialsAreSummed) {
  using H = TypeParam;
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  // every replica along x holds 1 + i + j (small integers: sums are exact in both formats)
  const Layout partial(mesh.shape(), 9, 7, "P[I,J_Y]{U_X}");
  DistMatrix<H> P(mesh, partial);
  for (index_t j = 0; j < P.local_cols(); ++j)
    for (index_t i = 0; i < P.local_rows(); ++i)
      P.local(i, j) = H(1 + P.global_row(i) + P.global_col(j));
  DistMatrix<H> S(mesh, 9, 7, "S[I_X,J]");
  redistribute(P, S);
  const float replicas = static_cast<float>(mesh.shape().sizes[0]);
  for (index_t j = 0; j < S.local_cols(); ++j)
    for (index_t i = 0; i < S.local_rows(); ++i)
      ASSERT_EQ(float(S.local(i, j)), replicas * float(1 + S.global_row(i) + S.global_col(j)));
  EXPECT_EQ(float(P.at(3, 2)), replicas * 6.0f);
}

TEST(HalfFiles, F16NpyHoldsThePatterns) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  for (bool fortran : {true, false}) {
    DistMatrix<f16> X(mesh, 13, 6, "X[I_X,J_Y]");
    X.fill([](index_t i, index_t j) { return entry<f16>(i, j, 5); });
    const std::string path = file(fortran ? "f.npy" : "c.npy");
    write_npy(path, X, fortran);
    expect_bytes(path, header("<f2", fortran, shape(13, 6)) + data_bytes<f16>(13, 6, fortran, 5),
                 "f16 npy");
    DistMatrix<f16> Y(mesh, 13, 6, "Y[I_Y:c,J_X]");
    read_npy(path, Y);
    expect_entries(Y, 5, "read back");
  }
}

TEST(HalfFiles, Bf16RawFilesHoldThePatterns) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<bf16> X(mesh, 10, 9, "X[I_X,J_Y]");
  X.fill([](index_t i, index_t j) { return entry<bf16>(i, j, 6); });
  const std::string path = file("x.bf16");
  write_raw(path, X, true);
  expect_bytes(path, data_bytes<bf16>(10, 9, true, 6), "bf16 raw");
  DistMatrix<bf16> Y(mesh, 10, 9, "Y[I,J_XY]");
  read_raw(path, Y, true);
  expect_entries(Y, 6, "read back");
}

TEST(HalfFiles, Bf16NpyIsRefusedEverywhere) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<bf16> X(mesh, 4, 4, "X[I_X,J_Y]");
  expect_same_error_everywhere<NotSupported>([&] { write_npy(file("b.npy"), X); }, "bfloat16");
  expect_same_error_everywhere<NotSupported>([&] { read_npy(file("b.npy"), X); }, "bfloat16");
}

}  // namespace
}  // namespace shardmm::testing
