// Batched products against a serial reference with the normwise bound of C's format
// (batched_check.hpp): f64, f32, bf16, f16 and c128; every op pair; the batch cut over no
// axis, one axis, two axes (a 3-axis mesh) and every axis (each product on one rank); batched
// and shared operands, merged and not.
#include <gtest/gtest.h>

#include <array>

#include "mpi/batched_check.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

constexpr index_t kBatch = 5, kM = 7, kN = 6, kK = 9;
using Specs = std::array<std::string, 3>;  // A, B, C

struct Cut {
  const char* name;
  int mesh_axes;  // 2: grid2d (x, y); 3: x, y, z from factor_near_square(P, 3)
  std::vector<Specs> specs;
};

const std::vector<Cut>& cuts() {
  static const std::vector<Cut> all = {
      {"no axis",
       2,
       {{"A[B,I_X,K_Y]", "B[B,K_X,J_Y]", "C[B,I_X,J_Y]"},
        {"A[B,I,K_X]", "B[B,K_X,J]", "C[B,I_Y,J_X]"}}},
      {"one axis",
       2,
       {{"A[B_X,I_Y,K]", "B[B_X,K,J_Y]", "C[B_X,I,J_Y]"},
        {"A[B_X:c,I,K_Y]", "B[B_X:c,K_Y,J]", "C[B_X:c,I_Y,J]"}}},
      {"two axes", 3, {{"A[B_XY,I_Z,K]", "B[B_XY,K_Z,J]", "C[B_XY,I,J_Z]"}}},
      {"every axis", 2, {{"A[B_XY:c,I,K]", "B[B_XY:c,K,J]", "C[B_XY:c,I,J]"}}},
  };
  return all;
}

Mesh mesh_of(int axes) {
  if (axes == 2) return Mesh::grid2d(MPI_COMM_WORLD);
  const auto f = factor_near_square(world_size(), 3);
  return Mesh(MPI_COMM_WORLD, MeshShape({"x", "y", "z"}, f));
}

template <class T>
using Alpha = std::conditional_t<is_half_v<T>, float, T>;

template <class T>
BatchedMatrix<T> make(const Mesh& mesh, Op op, index_t r, index_t c, const std::string& spec,
                      int seed) {
  BatchedMatrix<T> X(mesh, kBatch, op == Op::N ? r : c, op == Op::N ? c : r, spec);
  X.fill([seed](index_t b, index_t i, index_t j) {
    if constexpr (is_half_v<T>) return T(entry<float>(i + 3 * b, j, seed));
    else return entry<T>(i + 3 * b, j, seed);
  });
  return X;
}

template <class T>
void run_batched(const Mesh& mesh, Op opA, Op opB, const Specs& s, Alpha<T> beta,
                 const std::string& what) {
  auto A = make<T>(mesh, opA, kM, kK, s[0], 1);
  auto B = make<T>(mesh, opB, kK, kN, s[1], 2);
  auto C = make<T>(mesh, Op::N, kM, kN, s[2], 3);
  const auto C0 = C.gather();
  const Alpha<T> alpha(1.5f);
  const auto rep = gemm_batched(opA, opB, alpha, A, B, beta, C);
  EXPECT_EQ(rep.products, C.local_batch()) << what;
  EXPECT_FALSE(rep.merged) << what;
  const double err = batched_error(opA, opB, alpha, A, B, beta, C0, C);
  EXPECT_LE(err, 1.0) << what << " " << rep.to_string();
}

// One and two ranks run every case; 3, 4 and 6 ranks (oversubscribed on the suite's 2-core
// machines) each run a different third, so every case runs at 1, 2 and one of 3, 4, 6 ranks.
bool case_selected(int i) {
  static const int P = world_size();
  if (P <= 2) return true;
  return i % 3 == (P == 3 ? 0 : P == 4 ? 1 : 2);
}

template <class T>
void sweep(bool complex_ops) {
  std::vector<std::pair<Op, Op>> ops = {
      {Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}, {Op::T, Op::T}};
  if (complex_ops) ops.insert(ops.end(), {{Op::C, Op::N}, {Op::T, Op::C}});
  int n = 0;
  for (const Cut& cut : cuts()) {
    const Mesh mesh = mesh_of(cut.mesh_axes);
    for (const Specs& s : cut.specs)
      for (auto [opA, opB] : ops) {
        const Alpha<T> beta(++n % 4 == 0 ? 0.0f : -0.5f);
        if (!case_selected(n)) continue;
        run_batched<T>(mesh, opA, opB, s, beta,
                       std::string(cut.name) + " " + s[0] + " " + s[1] + " " + s[2] + " op " +
                           to_string(opA) + to_string(opB));
      }
  }
}

TEST(BatchedGemm, F64) { sweep<double>(false); }
TEST(BatchedGemm, F32) { sweep<float>(false); }
TEST(BatchedGemm, BF16) { sweep<bf16>(false); }
TEST(BatchedGemm, F16) { sweep<f16>(false); }
TEST(BatchedGemm, C128) { sweep<std::complex<double>>(true); }

// One operand shared by the batch: merged (one product per slice mesh) and per element give
// the same bound; the merge is taken where the stacked dimension is not cut.
template <class T>
void shared_case(const Mesh& mesh, bool shared_b, Op opA, Op opB, const Specs& s, BatchMerge mode) {
  const std::string what = (shared_b ? "shared B " : "shared A ") + s[0] + " " + s[1] + " " + s[2] +
                           " op " + to_string(opA) + to_string(opB) + " merge " + to_string(mode);
  const Alpha<T> alpha(0.75f), beta(-1.0f);
  auto C = make<T>(mesh, Op::N, kM, kN, s[2], 3);
  const auto C0 = C.gather();
  BatchedReport rep;
  double err = 0;
  if (shared_b) {
    auto A = make<T>(mesh, opA, kM, kK, s[0], 1);
    DistMatrix<T> B(mesh,
                    Layout(mesh.shape(), opB == Op::N ? kK : kN, opB == Op::N ? kN : kK, s[1]));
    B.fill([](index_t i, index_t j) { return T(entry<float>(i, j, 2)); });
    rep = gemm_batched(opA, opB, alpha, A, B, beta, C, {}, mode);
    err = batched_error(opA, opB, alpha, A, B, beta, C0, C);
  } else {
    DistMatrix<T> A(mesh,
                    Layout(mesh.shape(), opA == Op::N ? kM : kK, opA == Op::N ? kK : kM, s[0]));
    A.fill([](index_t i, index_t j) { return T(entry<float>(i, j, 1)); });
    auto B = make<T>(mesh, opB, kK, kN, s[1], 2);
    rep = gemm_batched(opA, opB, alpha, A, B, beta, C, {}, mode);
    err = batched_error(opA, opB, alpha, A, B, beta, C0, C);
  }
  EXPECT_LE(err, 1.0) << what << " " << rep.to_string();
  EXPECT_EQ(rep.merged, mode == BatchMerge::Always) << what;
  EXPECT_EQ(rep.products, rep.merged ? (C.local_batch() > 0 ? 1 : 0) : C.local_batch()) << what;
}

template <class T>
void shared_sweep() {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const std::pair<Op, Op> ops[] = {{Op::N, Op::N}, {Op::T, Op::T}, {Op::N, Op::T}, {Op::T, Op::N}};
  int n = 0;
  for (auto [opA, opB] : ops)
    for (BatchMerge mode : {BatchMerge::Always, BatchMerge::Never}) {
      if (!case_selected(n++)) continue;
      // shared B, gathered over the batch's axis X first (its columns are cut over X)
      const std::string a = opA == Op::N ? "A[B_X,I,K_Y]" : "A[B_X,K_Y,I]";
      shared_case<T>(mesh, true, opA, opB, {a, "B[K_Y,J_X]", "C[B_X,I,J_Y]"}, mode);
      // shared A: op(B)'s and C's columns stay whole on the slice mesh
      const std::string b = opB == Op::N ? "B[B_Y,K_X,J]" : "B[B_Y,J,K_X]";
      shared_case<T>(mesh, false, opA, opB, {"A[I_X,K]", b, "C[B_Y,I_X,J]"}, mode);
    }
}

TEST(BatchedGemm, SharedOperandF64) { shared_sweep<double>(); }
TEST(BatchedGemm, SharedOperandBF16) { shared_sweep<bf16>(); }
TEST(BatchedGemm, SharedOperandF32) { shared_sweep<float>(); }

// Auto merges where the planner prices it cheaper: a Transformer projection x[b] W with x's
// rows whole. One element alone is under the planner's small-work threshold (2 Mflop: Auto
// goes local, replicating W), so one by one W would move for every element; the merged
// product keeps the caller's layouts, which need no move. On one rank nothing moves either
// way, and the merged product's copies cost more than the products' fixed costs they save.
TEST(BatchedGemm, AutoMergesWhereItPays) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const index_t s = 64, d = 96, f = 128;  // 1.6 Mflop per element
  BatchedMatrix<float> X(mesh, kBatch, s, d, "X[B_X,S,D]");
  X.fill([](index_t b, index_t i, index_t j) { return entry<float>(i + 3 * b, j, 1); });
  DistMatrix<float> W(mesh, Layout(mesh.shape(), d, f, "W[D,F_Y]"));
  W.fill([](index_t i, index_t j) { return entry<float>(i, j, 2); });
  BatchedMatrix<float> Y(mesh, batched_output_layout(Op::N, Op::N, X, W));
  EXPECT_EQ(Y.layout().spec().to_string(), "C[B_X,I,J_Y]");
  const auto Y0 = Y.gather();
  const auto rep = gemm_batched(Op::N, Op::N, 1.0f, X, W, 0.0f, Y);
  EXPECT_NE(rep.merge_why.find("s merged"), std::string::npos) << rep.to_string();
  if (mesh.axis_size("y") > 1) {
    EXPECT_TRUE(rep.merged) << rep.to_string();
    EXPECT_EQ(rep.gemm.bytes_sent, 0) << rep.to_string();  // nothing needs to move
  } else if (world_size() == 1) {
    EXPECT_FALSE(rep.merged) << rep.to_string();
  }
  EXPECT_LE(batched_error(Op::N, Op::N, 1.0f, X, W, 0.0f, Y0, Y), 1.0);
}

// A batch cut over every axis leaves each product on one rank: nothing moves at all.
TEST(BatchedGemm, BatchCutOverEveryAxisMovesNothing) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const index_t batch = 2 * world_size() + 1;
  BatchedMatrix<double> A(mesh, batch, kM, kK, "A[B_XY,I,K]"),
      B(mesh, batch, kK, kN, "B[B_XY,K,J]"), C(mesh, batch, kM, kN, "C[B_XY,I,J]");
  A.fill([](index_t b, index_t i, index_t j) { return entry<double>(i + b, j, 1); });
  B.fill([](index_t b, index_t i, index_t j) { return entry<double>(i, j + b, 2); });
  const auto C0 = C.gather();
  const auto rep = gemm_batched(Op::N, Op::N, 1.0, A, B, 0.0, C);
  EXPECT_EQ(rep.gemm.bytes_sent, 0) << rep.to_string();
  EXPECT_EQ(rep.gemm.bytes_received, 0) << rep.to_string();
  EXPECT_LE(batched_error(Op::N, Op::N, 1.0, A, B, 0.0, C0, C), 1.0);
}

// Gather and scatter are inverses, whatever the cut; the spec prints as it parses.
TEST(BatchedMatrix, ScatterGatherAndNotation) {
  const Mesh mesh = mesh_of(3);
  for (const char* spec : {"A[B_X,I_Y,J_Z]", "A[B_YZ:c,I_X,J]", "[B,I_XZ,J_Y:bc2]"}) {
    BatchedMatrix<float> X(mesh, 4, 5, 3, spec);
    EXPECT_EQ(BatchedSpec::parse(spec).to_string(), spec);
    std::vector<float> g;
    if (world_rank() == 0)
      for (int i = 0; i < 4 * 5 * 3; ++i) g.push_back(float(i));
    X.scatter(g);
    const auto back = X.gather();
    if (world_rank() == 0) {
      EXPECT_EQ(back, g) << spec;
    }
  }
}

}  // namespace
