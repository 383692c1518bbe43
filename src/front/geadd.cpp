// transpose / geadd / tradd: C <- beta C + alpha op(A) on any layouts of one mesh.
//
// What moves where:
//   op N      one redistribution of A into C's layout, alpha and beta folded in (nothing
//             moves when the layouts are the same: a local update);
//   op T / C  each rank transposes (conjugates) its own tile of A into a tile of A^T's layout
//             (Layout::transposed(): the same owners, local rows and columns swapped; no
//             communication), then that tile is redistributed into C's layout as above;
//   tradd     op(A) is redistributed into a copy in C's layout (workspace slot OperandC),
//             then each rank updates only its elements of C inside the trapezoid.
// Validation uses global metadata only (shapes, the meshes' sizes), identical on every rank.
#include <algorithm>
#include <optional>
#include <string>

#include "comm/agree.hpp"
#include "comm/wait.hpp"
#include "core/instantiate.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/blas3.hpp"
#include "shardmm/error.hpp"
#include "shardmm/redistribute.hpp"
#include "trace/call.hpp"

namespace shardmm {
namespace {

template <Scalar T>
T add_conj_if(T x, bool conj) {
  if constexpr (is_complex_v<T>) return conj ? std::conj(x) : x;
  (void)conj;
  return x;
}

template <Scalar T>
void add_check_shapes(const char* routine, Op op, const DistMatrix<T>& A, const DistMatrix<T>& C) {
  const bool t = op != Op::N;
  const index_t rows = t ? A.cols() : A.rows(), cols = t ? A.rows() : A.cols();
  if (rows != C.rows() || cols != C.cols())
    throw DimensionMismatch(std::string(routine) + ": op(A) is " + std::to_string(rows) + "x" +
                            std::to_string(cols) + " (op " + to_string(op) + " of " +
                            A.layout().to_string() + "), C is " + C.layout().to_string());
}

// op(A) (op T or C) in A^T's layout: this rank's tile transposed into workspace slot
// OperandA. No communication.
template <Scalar T>
DistMatrix<T> add_transposed_tile(const DistMatrix<T>& A, Op op) {
  std::optional<DistMatrix<T>> At;
  comm::agreed(A.mesh().comm(), "transpose", [&] {
    At.emplace(matrix::pooled<T>(A.mesh(), A.layout().transposed(), memory::Slot::OperandA));
  });
  const bool conj = op == Op::C;
  constexpr index_t kTile = 32;  // tiles of 32 x 32: both sides stay in cache
  for (index_t j0 = 0; j0 < A.local_cols(); j0 += kTile)
    for (index_t i0 = 0; i0 < A.local_rows(); i0 += kTile) {
      const index_t j1 = std::min(A.local_cols(), j0 + kTile);
      const index_t i1 = std::min(A.local_rows(), i0 + kTile);
      for (index_t j = j0; j < j1; ++j)
        for (index_t i = i0; i < i1; ++i) At->local(j, i) = add_conj_if(A.local(i, j), conj);
    }
  return std::move(*At);
}

// C <- beta C + alpha op(A), shapes checked.
template <Scalar T>
void add_op(Op op, T alpha, const DistMatrix<T>& A, T beta, DistMatrix<T>& C) {
  if (op == Op::N) {
    redistribute(A, C, alpha, beta);
    return;
  }
  const DistMatrix<T> At = add_transposed_tile(A, op);
  redistribute(At, C, alpha, beta);
}

bool add_in_trapezoid(Uplo uplo, index_t i, index_t j) {
  return uplo == Uplo::Upper ? i <= j : i >= j;
}

// C's own elements (those in `part`: nullopt is all of C) <- beta C + alpha op_tile, where
// op_tile (may be null when alpha == 0: not read) is op(A) in C's layout. No communication.
template <Scalar T>
void add_update_local(std::optional<Uplo> part, T alpha, const DistMatrix<T>* op_tile, T beta,
                      DistMatrix<T>& C) {
  for (index_t j = 0; j < C.local_cols(); ++j) {
    const index_t j_glob = C.global_col(j);
    for (index_t i = 0; i < C.local_rows(); ++i) {
      if (part && !add_in_trapezoid(*part, C.global_row(i), j_glob)) continue;
      T& c = C.local(i, j);
      const T scaled = beta == T(0) ? T(0) : beta * c;
      c = alpha == T(0) || op_tile == nullptr ? scaled : alpha * op_tile->local(i, j) + scaled;
    }
  }
}

// transpose and geadd: validated, traced as `routine`; alpha == 0 moves nothing.
template <Scalar T>
void checked_add(const char* routine, Op op, T alpha, const DistMatrix<T>& A, T beta,
                 DistMatrix<T>& C) {
  add_check_shapes(routine, op, A, C);
  const comm::WaitScope waiting;  // SHARDMM_WAIT
  const trace::Call traced(C.mesh().comm(), routine);
  if (alpha == T(0) && !C.layout().is_unreduced())  // A is not read
    return add_update_local<T>(std::nullopt, alpha, nullptr, beta, C);
  add_op(op, alpha, A, beta, C);
}

}  // namespace

template <Scalar T>
void transpose(Op op, T alpha, const DistMatrix<T>& A, T beta, DistMatrix<T>& C) {
  if (op == Op::N)
    throw InvalidArgument("transpose: op must be T or C (geadd adds A without transposing)");
  checked_add("transpose", op, alpha, A, beta, C);
}

template <Scalar T>
void geadd(Op op, T alpha, const DistMatrix<T>& A, T beta, DistMatrix<T>& C) {
  checked_add("geadd", op, alpha, A, beta, C);
}

template <Scalar T>
void tradd(Uplo uplo, Op op, T alpha, const DistMatrix<T>& A, T beta, DistMatrix<T>& C) {
  add_check_shapes("tradd", op, A, C);
  if (C.layout().is_unreduced())
    throw NotSupported("tradd: C " + C.layout().to_string() + " holds pending partial sums");
  const comm::WaitScope waiting;  // SHARDMM_WAIT
  const trace::Call traced(C.mesh().comm(), "tradd");
  if (alpha == T(0)) return add_update_local<T>(uplo, alpha, nullptr, beta, C);  // A is not read
  std::optional<DistMatrix<T>> opA;  // op(A) in C's layout
  comm::agreed(C.mesh().comm(), "tradd", [&] {
    opA.emplace(matrix::pooled<T>(C.mesh(), C.layout(), memory::Slot::OperandC));
  });
  add_op(op, T(1), A, T(0), *opA);
  add_update_local<T>(uplo, alpha, &*opA, beta, C);
}

#define SHARDMM_INSTANTIATE(T)                                                \
  template void transpose<T>(Op, T, const DistMatrix<T>&, T, DistMatrix<T>&); \
  template void geadd<T>(Op, T, const DistMatrix<T>&, T, DistMatrix<T>&);     \
  template void tradd<T>(Uplo, Op, T, const DistMatrix<T>&, T, DistMatrix<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm
