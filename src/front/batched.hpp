// The batched front end's internals (gemm_batched.cpp, batched_merge.cpp): one call's operands,
// each batched or shared by every batch element, and the merged form's test and run.
#pragma once

#include <optional>
#include <string>

#include "algo/algo.hpp"
#include "shardmm/batched.hpp"

namespace shardmm::front {

/// One gemm_batched call. A batched operand is read through its slices; a shared one through
/// a view of its tile on C's slice mesh (A_view / B_view; `held` keeps a copy gathered over
/// the batch's axes alive).
template <Scalar T>
struct BatchCall {
  Op opA = Op::N, opB = Op::N;
  const BatchedMatrix<T>* A = nullptr;  ///< null: A is shared (A_view)
  const BatchedMatrix<T>* B = nullptr;  ///< null: B is shared (B_view)
  std::optional<DistMatrix<T>> A_view, B_view, held;
  BatchedMatrix<T>* C = nullptr;
};

/// Why the call cannot run as one product per slice mesh (empty: it can). Global metadata
/// only: the same on every rank. Mergeable: exactly one operand shared, and the batched
/// operand's and C's dimension the batch is stacked along (rows of op(A) with a shared B,
/// columns of op(B) with a shared A) not cut on the slice mesh.
template <Scalar T>
std::string merge_obstacle(const BatchCall<T>& call);

/// The merged product of `count` stacked batch elements as gemm sees it on the slice mesh
/// (merge_obstacle empty; the shared operand's view made). Global metadata only.
template <Scalar T>
algo::Problem merged_problem(const BatchCall<T>& call, index_t count);

/// Auto's choice between the merged product and the elements one by one
/// (batched_merge.cpp): the planner's predicted time of each on the slice mesh, the merged
/// one plus its copies in and out of the workspace, each product plus a fixed cost. Global
/// metadata only (the busiest rank's batch elements): the same on every rank. `why` says it.
template <Scalar T>
bool merge_pays(const BatchCall<T>& call, const algo::Problem& element, bool reads_c,
                const Options& options, std::string& why);

/// Runs the call as one product on this rank's slice mesh: the local batch elements of the
/// batched operand and of C stacked (workspace slots MergedX, MergedC; no communication), one
/// gemm, C unstacked. Nothing when this rank holds no batch element. Collective over the
/// slice mesh.
template <Scalar T, class S>
GemmReport run_merged(BatchCall<T>& call, S alpha, S beta, const Options& options);

/// C's batch cut with X's matrix part, less the axes C's batch is cut over (a dimension that
/// loses some of its axes is blocked over the rest, or replicated). Pure.
BatchedLayout in_batch_cut_of(const BatchedLayout& X, const BatchedLayout& cut);

/// What gemm_batched moved before its products: operands regrouped into C's batch cut.
struct Regrouped {
  RedistStats moved;
  std::string text;  ///< "A <spec> moved into <spec> (N words received here)"; empty: none
};

/// X itself when it shares C's batch cut (or X is null), else `copy` made in
/// in_batch_cut_of(X, C) and filled by the batched redistribution (batched_regroup.cpp).
/// Collective over C's mesh in that case; the same decision on every rank (global metadata).
template <Scalar T>
const BatchedMatrix<T>* regrouped(const char* name, const BatchedMatrix<T>* X,
                                  const BatchedMatrix<T>& C, std::optional<BatchedMatrix<T>>& copy,
                                  Regrouped& held);

/// The report's account of the regrouping: its text and bytes (as redistribution bytes).
void report_regrouped(const Regrouped& held, BatchedReport& report);

/// gemm_batched for the scalar types (gemm_batched.cpp), each operand batched or shared (the
/// other pointer null): validate, plan the elements' product once, run the merged product or
/// the elements. The 16-bit batches widen to f32 and call it (gemm_batched_half.cpp).
template <Scalar T>
BatchedReport batched_products(Op opA, Op opB, T alpha, const BatchedMatrix<T>* A,
                               const DistMatrix<T>* A_shared, const BatchedMatrix<T>* B,
                               const DistMatrix<T>* B_shared, T beta, BatchedMatrix<T>& C,
                               const Options& options, BatchMerge merge);

}  // namespace shardmm::front
