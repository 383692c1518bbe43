// trsm / trmm front end: B <- alpha op(A)^-1 B, alpha op(A) B (Left) or B op(A)^-1,
// alpha B op(A) (Right), A triangular, any layouts of one mesh.
//
// What moves where (Left; Right exchanges rows and columns): B is m x n in its own layout, rows
// over its row axes R, columns over S.
//   1. B <- alpha B on each rank (no communication; alpha == 0 stops here: A is not read).
//   2. op(A) is redistributed once into P: B's own row map, all m
//      columns on every rank (workspace slot OperandB), op T / C applied on the way (geadd:
//      each rank transposes its own tile into slot OperandA, then one redistribution). Words
//      received per rank: about m^2 / |R|, less what the rank held; never the whole triangle on one
//      rank unless B's rows are not split.
//   3. The step loop (algo/triangular_steps.cpp): per block of B's rows, its owners solve
//      (multiply) it with the diagonal block, one broadcast along R, one local GEMM per rank.
// B itself never moves. Validation uses global metadata only (same error on every rank).
#include <optional>
#include <string>

#include "algo/triangular.hpp"
#include "blas/blas.hpp"
#include "comm/agree.hpp"
#include "core/instantiate.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/error.hpp"
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

// op(A) with B's map along `dim` (0: rows, Left; 1: columns, Right), the other dimension whole.
template <Scalar T>
Layout triangular_panel_layout(const DistMatrix<T>& A, const DistMatrix<T>& B, int dim) {
  ShardingSpec s;
  s.name = "A";
  DimSpec b_dim = B.layout().spec().dims[dim];
  b_dim.label = dim == 0 ? "I" : "J";
  for (auto& axis : b_dim.axes)  // a bc() placeholder (#0, #1) as the axis it stands for
    if (axis.size() == 2 && axis[0] == '#') axis = B.layout().mesh().names[axis[1] - '0'];
  const DimSpec whole{dim == 0 ? "J" : "I", DimSpec::Kind::Replicated, {}, 0, 0, 0};
  s.dims = dim == 0 ? std::array<DimSpec, 2>{b_dim, whole} : std::array<DimSpec, 2>{whole, b_dim};
  return Layout(B.layout().mesh(), A.rows(), A.cols(), s);
}

// The widest step: B's blocks are used as they are, cut to at most this many indices.
constexpr index_t kWidestStep = 256;

template <Scalar T>
void triangular(const char* routine, bool solve, Side side, Uplo uplo, Op op, Diag diag, T alpha,
                const DistMatrix<T>& A, DistMatrix<T>& B) {
  triangular_validate(routine, side, A, B);
  const trace::Call traced(B.mesh().comm(), routine);
  if (B.rows() == 0 || B.cols() == 0) return;
  blas::scale(B.local_rows(), B.local_cols(), alpha, B.data(), B.ld());
  if (alpha == T(0)) return;  // A is not read
  const int dim = side == Side::Left ? 0 : 1;
  std::optional<DistMatrix<T>> P;  // op(A) beside B's rows (Left) or columns (Right)
  comm::agreed(B.mesh().comm(), routine, [&] {
    P.emplace(matrix::pooled<T>(B.mesh(), triangular_panel_layout(A, B, dim),
                                memory::Slot::OperandB));  // geadd's op T / C uses OperandA
  });
  geadd(op, T(1), A, T(0), *P);
  algo::TriangularPlan plan;
  plan.solve = solve, plan.left = side == Side::Left, plan.unit = diag == Diag::Unit;
  plan.lower = (uplo == Uplo::Lower) != (op != Op::N);  // op(A)'s triangle
  plan.widest = kWidestStep;
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
