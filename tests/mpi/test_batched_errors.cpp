// Bad batched calls: every rank throws the same exception with the same message, before any
// communication, and no rank hangs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "mpi/mpi_test_util.hpp"
#include "shardmm/batched.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

Mesh grid() { return Mesh::grid2d(MPI_COMM_WORLD); }

TEST(BatchedErrors, BatchSizesDiffer) {
  const Mesh mesh = grid();
  BatchedMatrix<double> A(mesh, 4, 3, 5, "A[B_X,I,K]"), B(mesh, 3, 5, 2, "B[B_X,K,J]"),
      C(mesh, 4, 3, 2, "C[B_X,I,J]");
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { (void)gemm_batched(Op::N, Op::N, 1.0, A, B, 0.0, C); }, "batch sizes differ");
}

TEST(BatchedErrors, ShapesDiffer) {
  const Mesh mesh = grid();
  BatchedMatrix<float> A(mesh, 4, 3, 5, "A[B,I_X,K]"), B(mesh, 4, 6, 2, "B[B,K,J_Y]"),
      C(mesh, 4, 3, 2, "C[B,I,J]");
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { (void)gemm_batched(Op::N, Op::N, 1.0f, A, B, 0.0f, C); }, "op(B) 6x2");
  BatchedMatrix<bf16> Ah(mesh, 4, 3, 5, "A[B_X,I,K]"), Bh(mesh, 4, 5, 2, "B[B_X,K,J]"),
      Ch(mesh, 4, 2, 3, "C[B_X,I,J]");
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { (void)gemm_batched(Op::N, Op::N, 1.0f, Ah, Bh, 0.0f, Ch); }, "per batch element");
}

// A batch cut unlike C's is no error: B is moved into C's cut first, and the report says so
// (test_batched_redistribute.cpp checks the values).
TEST(BatchedErrors, BatchCutDiffersIsMovedNotRefused) {
  const Mesh mesh = grid();
  BatchedMatrix<double> A(mesh, 4, 3, 5, "A[B_X,I,K]"), B(mesh, 4, 5, 2, "B[B_X:c,K,J]"),
      C(mesh, 4, 3, 2, "C[B_X,I,J]");
  // over one process, block and cyclic are the same cut: that process holds every element
  const bool same = mesh.shape().sizes[0] == 1;
  const BatchedReport rep = gemm_batched(Op::N, Op::N, 1.0, A, B, 0.0, C);
  EXPECT_EQ(rep.regrouped.empty(), same) << rep.to_string();
  BatchedMatrix<double> fewer(mesh, 3, 5, 2, "B[B_Y,K,J]");  // other cut and batch size
  expect_same_error_everywhere<DimensionMismatch>(
      [&] { (void)gemm_batched(Op::N, Op::N, 1.0, A, fewer, 0.0, C); }, "batch sizes differ");
}

TEST(BatchedErrors, MergeImpossible) {
  const Mesh mesh = grid();
  BatchedMatrix<double> A(mesh, 4, 3, 5, "A[B,I,K]"), B(mesh, 4, 5, 2, "B[B,K,J]"),
      C(mesh, 4, 3, 2, "C[B,I,J]");
  expect_same_error_everywhere<NotSupported>(
      [&] { (void)gemm_batched(Op::N, Op::N, 1.0, A, B, 0.0, C, {}, BatchMerge::Always); },
      "both A and B are batched");
  DistMatrix<double> W(mesh, Layout(mesh.shape(), 5, 2, "W[K,J]"));
  BatchedMatrix<double> Ar(mesh, 4, 3, 5, "A[B,I_XY,K]");
  const bool cut = world_size() > 1;
  if (cut)
    expect_same_error_everywhere<NotSupported>(
        [&] { (void)gemm_batched(Op::N, Op::N, 1.0, Ar, W, 0.0, C, {}, BatchMerge::Always); },
        "rows of op(A) are cut");
}

TEST(BatchedErrors, SharedOperandOnAnotherMesh) {
  const Mesh mesh = grid(), other = grid();
  BatchedMatrix<double> A(mesh, 4, 3, 5, "A[B_X,I,K]"), C(mesh, 4, 3, 2, "C[B_X,I,J]");
  DistMatrix<double> W(other, Layout(other.shape(), 5, 2, "W[K,J]"));
  expect_same_error_everywhere<InvalidArgument>(
      [&] { (void)gemm_batched(Op::N, Op::N, 1.0, A, W, 0.0, C); }, "not on C's mesh");
}

// The batch's one plan fails on the last rank alone (SHARDMM_FAULT_INJECT at "plan"): every
// rank throws that rank's error, named by the call's plan agreement (per element: the last
// rank) or by its run agreement (merged: the plan is the merged gemm's own, agreed on the
// slice mesh first, so every rank of that slice fails), and none waits in a product.
TEST(BatchedErrors, PlanFailingOnOneRankFailsEveryRank) {
  const Mesh mesh = grid();
  const int last = world_size() - 1;
  const std::string spec = "plan@" + std::to_string(last) + ":error";
  BatchedMatrix<double> A(mesh, 6, 3, 5, "A[B_X,I,K]"), B(mesh, 6, 5, 2, "B[B_X,K,J]"),
      C(mesh, 6, 3, 2, "C[B_X,I,J]");
  DistMatrix<double> W(mesh, Layout(mesh.shape(), 5, 2, "W[K,J]"));
  const std::string rank = "first failing rank " + std::to_string(last) + " of ";
  ASSERT_EQ(setenv("SHARDMM_FAULT_INJECT", spec.c_str(), 1), 0);
  expect_same_error_everywhere<Error>([&] { (void)gemm_batched(Op::N, Op::N, 1.0, A, B, 0.0, C); },
                                      "[plan batched products: " + rank);
  expect_same_error_everywhere<Error>(
      [&] { (void)gemm_batched(Op::N, Op::N, 1.0, A, W, 0.0, C, {}, BatchMerge::Always); },
      "[batched products: first failing rank ");  // the lowest rank of the failing slice
  ASSERT_EQ(unsetenv("SHARDMM_FAULT_INJECT"), 0);
  EXPECT_NO_THROW((void)gemm_batched(Op::N, Op::N, 1.0, A, B, 0.0, C));  // nobody left waiting
}

TEST(BatchedErrors, BadNotation) {
  const Mesh mesh = grid();
  expect_same_error_everywhere<ParseError>(
      [&] { (void)BatchedMatrix<float>(mesh, 4, 3, 5, "A[B_X,I_X,K]"); }, "cuts both");
  expect_same_error_everywhere<ParseError>(
      [&] { (void)BatchedMatrix<float>(mesh, 4, 3, 5, "A[I,K]"); }, "batch");
  expect_same_error_everywhere<ParseError>(
      [&] { (void)BatchedMatrix<float>(mesh, 4, 3, 5, "A[B_X,I,K]{U_Y}"); }, "partial sums");
  expect_same_error_everywhere<InvalidArgument>(
      [&] { (void)BatchedMatrix<float>(mesh, -1, 3, 5, "A[B_X,I,K]"); }, "negative");
  EXPECT_THROW((void)parse_batch_merge("sometimes"), InvalidArgument);
}

}  // namespace
