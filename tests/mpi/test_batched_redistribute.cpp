// Batched redistribution between differently cut batches (batch over 0, 1, 2 axes, block,
// cyclic and block-cyclic, other slice layouts, batch sizes no axis divides, ranks with no
// batch element), checked element by element on every rank (replicas included) against
// entries made from global indices; and gemm_batched with A, B and C cut differently against
// a serial reference (batched_check.hpp), every op pair.
#include <gtest/gtest.h>

#include <array>

#include "front/batched.hpp"
#include "mpi/batched_check.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

Mesh mesh_of(int axes) {
  if (axes == 2) return Mesh::grid2d(MPI_COMM_WORLD);
  const auto f = factor_near_square(world_size(), 3);
  return Mesh(MPI_COMM_WORLD, MeshShape({"x", "y", "z"}, f));
}

template <class T>
T value(index_t b, index_t i, index_t j) {
  if constexpr (is_half_v<T>) return T(entry<float>(i + 11 * b, j, 4));
  else return entry<T>(i + 11 * b, j, 4);
}

/// Elements of X's tiles (every replica) that differ from value(b, i, j).
template <class T>
long long wrong_elements(const BatchedMatrix<T>& X) {
  long long wrong = 0;
  if (X.mesh().active()) {
    const Layout& S = X.layout().slice();
    const auto sc = X.layout().slice_coords(X.mesh().coords());
    const int pr = S.dim_coord(0, sc), pc = S.dim_coord(1, sc);
    for (index_t b = 0; b < X.local_batch(); ++b)
      for (index_t j = 0; j < X.local_cols(); ++j)
        for (index_t i = 0; i < X.local_rows(); ++i) {
          const T want = value<T>(X.global_batch(b), S.row_map().to_global(i, pr),
                                  S.col_map().to_global(j, pc));
          const T got = X.data()[b * X.stride() + i + j * X.ld()];
          if (!(got == want)) ++wrong;
        }
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return wrong;
}

struct Pair {
  int mesh_axes;
  const char* src;
  const char* dst;
};

const std::vector<Pair>& pairs() {
  static const std::vector<Pair> all = {
      {2, "X[B,I,J]", "X[B_X,I_Y,J]"},              // none -> one axis
      {2, "X[B_X,I_Y,J]", "X[B,I,J]"},              // one axis -> none (every rank all)
      {2, "X[B_X,I,J_Y]", "X[B_Y:c,I_X,J]"},        // one axis -> the other, cyclic
      {2, "X[B_X,I,J]", "X[B_X:c,I,J]"},            // only the distribution differs
      {2, "X[B_X:bc2,I_Y:c,J]", "X[B_Y,I,J_X:c]"},  // block-cyclic, cyclic slices
      {2, "X[B_XY,I,J]", "X[B_X:c,I,J_Y:bc2]"},     // two axes -> one
      {2, "X[B_YX:c,I,J]", "X[B,I_XY,J]"},          // two axes -> none, rows over both
      {2, "X[B,I_X,J_Y]", "X[B,I_Y,J_X]"},          // the batch on no axis on either side
      {2, "X[B_Y,I_X,J]", "X[B_Y,I_X,J]"},          // the same layout: nothing moves
      {3, "X[B_XY,I_Z,J]", "X[B_Z,I_X,J_Y]"},       // two axes -> one, on a 3-axis mesh
      {3, "X[B_XZ:c,I,J_Y]", "X[B,I_XYZ:c,J]"},     // two axes -> none
      {3, "X[B_Z,I,J]", "X[B_YX,I_Z,J]"},           // one axis -> two
  };
  return all;
}

template <class T>
void check_pair(const Pair& p, index_t batch, index_t m, index_t n) {
  const Mesh mesh = mesh_of(p.mesh_axes);
  const std::string what = std::string(p.src) + " -> " + p.dst + " batch " + std::to_string(batch) +
                           " " + std::to_string(m) + "x" + std::to_string(n);
  BatchedMatrix<T> src(mesh, batch, m, n, p.src), dst(mesh, batch, m, n, p.dst);
  src.fill([](index_t b, index_t i, index_t j) { return value<T>(b, i, j); });
  dst.fill([](index_t, index_t, index_t) { return T(-7.0f); });  // every element overwritten
  const RedistStats s = redistribute(src, dst);
  EXPECT_EQ(wrong_elements(dst), 0) << what;
  // each held element arrives exactly once: received or copied locally
  const std::int64_t held = dst.local_batch() * dst.local_rows() * dst.local_cols();
  EXPECT_EQ(s.bytes_received / std::int64_t(sizeof(T)) + s.elements_copied_locally, held) << what;
  if (std::string(p.src) == p.dst) {
    EXPECT_EQ(s.bytes_sent, 0) << what;
  }
}

template <class T>
void sweep_pairs() {
  const index_t P = world_size();
  for (const Pair& p : pairs()) {
    check_pair<T>(p, 5, 7, 6);  // 5: no axis longer than 1 divides it (up to 6 ranks)
    check_pair<T>(p, 1, 4, 3);  // one element: most ranks hold none
    check_pair<T>(p, 2 * P + 1, 3, 5);
  }
}

TEST(BatchedRedistribute, F64) { sweep_pairs<double>(); }
TEST(BatchedRedistribute, F32) { sweep_pairs<float>(); }
TEST(BatchedRedistribute, C64) { sweep_pairs<std::complex<float>>(); }
TEST(BatchedRedistribute, C128) { sweep_pairs<std::complex<double>>(); }
TEST(BatchedRedistribute, BF16) { sweep_pairs<bf16>(); }
TEST(BatchedRedistribute, F16) { sweep_pairs<f16>(); }

TEST(BatchedRedistribute, EmptyShapes) {
  for (const Pair& p : pairs()) {
    check_pair<double>(p, 0, 4, 3);
    check_pair<double>(p, 3, 0, 3);
    check_pair<double>(p, 3, 4, 0);
  }
}

TEST(BatchedRedistribute, BadCallsThrowEverywhere) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD), other = Mesh::grid2d(MPI_COMM_WORLD);
  BatchedMatrix<double> X(mesh, 4, 3, 5, "X[B_X,I,J]"), fewer(mesh, 3, 3, 5, "X[B_Y,I,J]"),
      wider(mesh, 4, 3, 6, "X[B,I,J]"), elsewhere(other, 4, 3, 5, "X[B_X,I,J]");
  expect_same_error_everywhere<DimensionMismatch>([&] { (void)redistribute(X, fewer); },
                                                  "differ in batch size or element shape");
  expect_same_error_everywhere<DimensionMismatch>([&] { (void)redistribute(X, wider); },
                                                  "differ in batch size or element shape");
  expect_same_error_everywhere<InvalidArgument>([&] { (void)redistribute(X, elsewhere); },
                                                "not on one mesh");
}

// gemm_batched with A, B and C cut differently: A and B are moved into C's cut first.
using Specs = std::array<const char*, 3>;  // A, B, C (A and B for op N; transposed for T)

template <class T>
using Alpha = std::conditional_t<is_half_v<T>, float, T>;

template <class T>
BatchedMatrix<T> operand(const Mesh& mesh, Op op, index_t r, index_t c, const char* spec,
                         int seed) {
  BatchedMatrix<T> X(mesh, 5, op == Op::N ? r : c, op == Op::N ? c : r, spec);
  X.fill([seed](index_t b, index_t i, index_t j) {
    if constexpr (is_half_v<T>) return T(entry<float>(i + 3 * b, j, seed));
    else return entry<T>(i + 3 * b, j, seed);
  });
  return X;
}

template <class T>
void differently_cut(int mesh_axes, const Specs& s, Op opA, Op opB) {
  const Mesh mesh = mesh_of(mesh_axes);
  const std::string what =
      std::string(s[0]) + " " + s[1] + " " + s[2] + " op " + to_string(opA) + to_string(opB);
  auto A = operand<T>(mesh, opA, 7, 9, s[0], 1);
  auto B = operand<T>(mesh, opB, 9, 6, s[1], 2);
  auto C = operand<T>(mesh, Op::N, 7, 6, s[2], 3);
  const auto C0 = C.gather();
  const Alpha<T> alpha(1.25f), beta(-0.5f);
  const BatchedReport rep = gemm_batched(opA, opB, alpha, A, B, beta, C);
  const bool moves =
      !A.layout().same_batch_cut(C.layout()) || !B.layout().same_batch_cut(C.layout());
  EXPECT_EQ(!rep.regrouped.empty(), moves) << what << ": " << rep.to_string();
  if (moves) {
    EXPECT_NE(rep.to_string().find("words received here"), std::string::npos) << rep.to_string();
  }
  EXPECT_EQ(rep.products, C.local_batch()) << what;
  EXPECT_LE(batched_error(opA, opB, alpha, A, B, beta, C0, C), 1.0)
      << what << " " << rep.to_string();
  // the operands themselves are untouched
  EXPECT_EQ(A.layout().spec().to_string(), BatchedSpec::parse(s[0]).to_string());
}

const std::vector<std::pair<int, Specs>>& gemm_cuts() {
  static const std::vector<std::pair<int, Specs>> all = {
      {2, {"A[B_X,I_Y,K]", "B[B_Y:c,K,J]", "C[B,I_X,J_Y]"}},
      {2, {"A[B,I,K_X]", "B[B_XY,K,J]", "C[B_Y,I_X,J]"}},       // B's slice loses nothing
      {2, {"A[B_Y,I_X,K]", "B[B_X,K,J_Y]", "C[B_X:c,I_Y,J]"}},  // A's rows lose X (C's batch axis)
      {3, {"A[B_Z,I_X,K]", "B[B_XY,K,J_Z]", "C[B_XY:c,I_Z,J]"}},
  };
  return all;
}

template <class T>
void gemm_sweep() {
  const std::pair<Op, Op> ops[] = {{Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}, {Op::T, Op::T}};
  for (const auto& [axes, s] : gemm_cuts())
    for (auto [opA, opB] : ops) differently_cut<T>(axes, s, opA, opB);
}

TEST(BatchedGemmCuts, F64) { gemm_sweep<double>(); }
TEST(BatchedGemmCuts, F32) { gemm_sweep<float>(); }
TEST(BatchedGemmCuts, BF16) {
  differently_cut<bf16>(2, {"A[B_X,I_Y,K]", "B[B_Y:c,K,J]", "C[B,I_X,J_Y]"}, Op::N, Op::T);
}

// A shared B with a batched A cut unlike C: A moves into C's cut, B is viewed as before.
TEST(BatchedGemmCuts, SharedOperand) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  auto A = operand<double>(mesh, Op::N, 7, 9, "A[B_Y,I,K_X]", 1);
  auto C = operand<double>(mesh, Op::N, 7, 6, "C[B_X,I,J_Y]", 3);
  DistMatrix<double> W(mesh, Layout(mesh.shape(), 9, 6, "W[K,J_Y]"));
  W.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  const auto C0 = C.gather();
  for (BatchMerge mode : {BatchMerge::Never, BatchMerge::Auto}) {
    const BatchedReport rep = gemm_batched(Op::N, Op::N, 1.0, A, W, 0.0, C, {}, mode);
    EXPECT_EQ(!rep.regrouped.empty(), !A.layout().same_batch_cut(C.layout())) << rep.to_string();
    EXPECT_LE(batched_error(Op::N, Op::N, 1.0, A, W, 0.0, C0, C), 1.0) << rep.to_string();
  }
}

}  // namespace
