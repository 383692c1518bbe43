// trsm / trmm front end: B <- alpha op(A)^-1 B, alpha op(A) B (Left) or B op(A)^-1,
// alpha B op(A) (Right), A triangular, any layouts of one mesh.
//
// The plan (plan_blas3, front/plan_blas3.cpp) picks "steps" or "local" from the layouts.
// What moves where (Left; Right exchanges rows and columns): B is m x n in its own layout, rows
// over its row axes R, columns over S.
//   1. B <- alpha B on each rank (no communication; alpha == 0 stops here: A is not read).
//   "local": op(A) goes to every rank (slot OperandB, through geadd), B into [I, J_all] (whole
//      columns, split over every mesh axis; slot OperandC), one local ?trsm / ?trmm, and B
//      back into its layout: cheaper when op(A) is small against B.
//   "steps":
//   2. op(A) is redistributed once into P: B's own row map, all m
//      columns on every rank (workspace slot OperandB), op T / C applied on the way (geadd:
//      each rank transposes its own tile into slot OperandA, then one redistribution). Words
//      received per rank: about m^2 / |R|, less what the rank held; never the whole triangle on one
//      rank unless B's rows are not split.
//   3. The step loop (algo/triangular_steps.cpp): per block of B's rows, its owners solve
//      (multiply) it with the diagonal block, one broadcast along R, one local GEMM per rank.
//   B itself never moves. Validation uses global metadata only (same error on every rank).
#include <optional>
#include <string>

#include "algo/triangular.hpp"
#include "blas/blas.hpp"
#include "comm/agree.hpp"
#include "comm/wait.hpp"
#include "core/instantiate.hpp"
#include "front/blas3_layouts.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/error.hpp"
#include "shardmm/plan_blas3.hpp"
#include "shardmm/redistribute.hpp"
#include "trace/call.hpp"

namespace shardmm {
namespace {

template <Scalar T>
void triangular_validate(const char* routine, Side side, const DistMatrix<T>& A,
                         const DistMatrix<T>& B) {
  const std::string r = routine;
  const index_t n_b = side == Side::Left ? B.rows() : B.cols();
  if (A.rows() != A.cols() || A.rows() != n_b)
    throw DimensionMismatch(r + ": A " + A.layout().to_string() + " must be square with as many " +
                            (side == Side::Left ? "rows as B's rows" : "columns as B's columns") +
                            " (B " + B.layout().to_string() + ")");
  if (B.layout().is_unreduced())
    throw NotSupported(r + ": B " + B.layout().to_string() + " holds pending partial sums");
}

// plan_blas3 for trsm / trmm on these operands' layouts (the profile of SHARDMM_PROFILE).
template <Scalar T>
Blas3Plan triangular_plan(const char* routine, Side side, Uplo uplo, Op op, const DistMatrix<T>& A,
                          const DistMatrix<T>& B) {
  Blas3Request q;
  q.routine = parse_blas3_routine(routine);
  q.side = side, q.uplo = uplo, q.op = op, q.m = B.rows(), q.n = B.cols();
  q.ranks = B.mesh().size(), q.dtype = dtype_of<T>();
  q.profile = MachineProfile::from_environment();
  q.a = A.layout(), q.out = B.layout();
  return plan_blas3(q);
}

// "local": B's dimension `dim` whole on every rank, the other one split over every mesh axis
// (workspace slot OperandC), one local ?trsm / ?trmm with all of op(A) (P, replicated), then
// back into B's layout. Words: B's two redistributions.
template <Scalar T>
void triangular_local(bool solve, int dim, bool lower, bool unit, const DistMatrix<T>& P,
                      DistMatrix<T>& B, index_t nb) {
  std::optional<DistMatrix<T>> W;
  comm::agreed(B.mesh().comm(), "triangular local", [&] {
    W.emplace(matrix::pooled<T>(B.mesh(), front::triangular_whole(B.layout(), dim, nb),
                                memory::Slot::OperandC));
  });
  redistribute(B, *W);
  if (solve)
    blas::trsm(dim == 0, lower, Op::N, unit, W->local_rows(), W->local_cols(), P.data(), P.ld(),
               W->data(), W->ld());
  else
    blas::trmm(dim == 0, lower, Op::N, unit, W->local_rows(), W->local_cols(), P.data(), P.ld(),
               W->data(), W->ld());
  redistribute(*W, B);
}

template <Scalar T>
void triangular(const char* routine, bool solve, Side side, Uplo uplo, Op op, Diag diag, T alpha,
                const DistMatrix<T>& A, DistMatrix<T>& B) {
  triangular_validate(routine, side, A, B);
  const comm::WaitScope waiting;  // SHARDMM_WAIT
  const trace::Call traced(B.mesh().comm(), routine);
  if (B.rows() == 0 || B.cols() == 0) return;
  blas::scale(B.local_rows(), B.local_cols(), alpha, B.data(), B.ld());
  if (alpha == T(0)) return;  // A is not read
  const int dim = side == Side::Left ? 0 : 1;
  const Blas3Plan chosen = triangular_plan(routine, side, uplo, op, A, B);
  const bool local = chosen.chosen.algorithm == "local";
  std::optional<DistMatrix<T>> P;  // op(A) beside B's rows (Left) or columns (Right), or whole
  comm::agreed(B.mesh().comm(), routine, [&] {
    const Layout p_layout = local ? Layout::replicated(B.mesh().shape(), A.rows(), A.rows())
                                  : front::triangular_panel(A.rows(), B.layout(), dim);
    P.emplace(matrix::pooled<T>(B.mesh(), p_layout, memory::Slot::OperandB));
  });  // geadd's op T / C uses OperandA
  geadd(op, T(1), A, T(0), *P);
  const bool lower = (uplo == Uplo::Lower) != (op != Op::N);  // op(A)'s triangle
  if (local)
    return triangular_local(solve, dim, lower, diag == Diag::Unit, *P, B, chosen.request.nb);
  algo::TriangularPlan plan;
  plan.solve = solve, plan.left = side == Side::Left, plan.unit = diag == Diag::Unit;
  plan.lower = lower;
  plan.widest = front::kWidestTriangularStep;
  algo::triangular_steps_run(plan, *P, B);
}

}  // namespace

template <Scalar T>
void trsm(Side side, Uplo uplo, Op op, Diag diag, T alpha, const DistMatrix<T>& A,
          DistMatrix<T>& B) {
  triangular("trsm", true, side, uplo, op, diag, alpha, A, B);
}

template <Scalar T>
void trmm(Side side, Uplo uplo, Op op, Diag diag, T alpha, const DistMatrix<T>& A,
          DistMatrix<T>& B) {
  triangular("trmm", false, side, uplo, op, diag, alpha, A, B);
}

#define SHARDMM_INSTANTIATE(T)                                                          \
  template void trsm<T>(Side, Uplo, Op, Diag, T, const DistMatrix<T>&, DistMatrix<T>&); \
  template void trmm<T>(Side, Uplo, Op, Diag, T, const DistMatrix<T>&, DistMatrix<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm
