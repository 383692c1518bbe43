// syrk / herk front end: C <- alpha op(A) op(A)' + beta C on one triangle of C, any layouts;
// syr2k / her2k: the same twice, alpha op(A) op(B)' + alpha op(B) op(A)' (her2k: conj(alpha)
// for the second term), each pass moving op(A)'s and op(B)'s rows as below.
//
// What moves where (op(A) is n x k, C n x n held in C's layout, rows over C's row axes R and
// columns over its column axes S):
//   1. op(A) is redistributed twice, into X = op(A)[I_R, K] (the rows of op(A) matching C's
//      rows, with C's own row map, replicated over S) and Y = op(A)[J_S, K] (matching C's
//      columns, replicated over R): workspace slots OperandA and OperandB. With op T / C the
//      panels keep A's orientation (A[K, I_R], A[K, J_S]) and the local GEMM transposes.
//      Words received per rank: about n k (1/|R| + 1/|S|), less what the rank held.
//   2. Each rank updates its own tile of C from X and Y with local GEMMs on the blocks that
//      touch the triangle only (algo/syrk_triangle.cpp): about half of gemm's flops.
// C itself never moves. Validation uses global metadata only (same error on every rank).
#include <algorithm>
#include <optional>
#include <string>

#include "algo/syrk.hpp"
#include "comm/agree.hpp"
#include "comm/wait.hpp"
#include "core/instantiate.hpp"
#include "front/blas3_layouts.hpp"
#include "front/syrk_reduce.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/error.hpp"
#include "shardmm/redistribute.hpp"
#include "trace/call.hpp"

namespace shardmm {
namespace {

template <Scalar T>
void syrk_validate(const char* routine, bool hermitian, Op op, const DistMatrix<T>& A,
                   const DistMatrix<T>& C) {
  const std::string r = routine;
  const bool two = r.find("2k") != std::string::npos;  // syr2k / her2k
  if (hermitian && is_complex_v<T> && op == Op::T)
    throw InvalidArgument(r + ": op must be N or C (A^T A is not Hermitian; use " +
                          (two ? "syr2k" : "syrk") + ")");
  if (!hermitian && is_complex_v<T> && op == Op::C)
    throw InvalidArgument(r + ": op must be N or T (use " + (two ? "her2k" : "herk") +
                          " for A^H A)");
  const index_t n_a = op == Op::N ? A.rows() : A.cols();
  if (C.rows() != C.cols() || n_a != C.rows())
    throw DimensionMismatch(r + ": C " + C.layout().to_string() + " must be square with op(A) (" +
                            A.layout().to_string() + ", op " + to_string(op) + ") as many rows");
  if (C.layout().is_unreduced())
    throw NotSupported(r + ": C " + C.layout().to_string() + " holds pending partial sums");
}

template <Scalar T>
algo::TileIndex syrk_tile_index(const DistMatrix<T>& C) {
  algo::TileIndex index;
  for (index_t i = 0; i < C.local_rows(); ++i) index.rows.push_back(C.global_row(i));
  for (index_t j = 0; j < C.local_cols(); ++j) index.cols.push_back(C.global_col(j));
  return index;
}

// C <- alpha op(A) op(B)' + beta C on the triangle: op(A)'s rows for C's rows, op(B)'s for
// C's columns (syrk: B is A).
template <Scalar T>
void syrk_update(Uplo uplo, Op op, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
                 DistMatrix<T>& C, bool hermitian, const algo::TileIndex& index) {
  const bool a_rows = op == Op::N;
  std::optional<DistMatrix<T>> X, Y;  // op(A)'s rows for C's rows, op(B)'s for C's columns
  comm::agreed(C.mesh().comm(), "syrk panels", [&] {
    X.emplace(matrix::pooled<T>(C.mesh(), front::rank_k_panel(A.layout(), C.layout(), 0, a_rows),
                                memory::Slot::OperandA));
    Y.emplace(matrix::pooled<T>(C.mesh(), front::rank_k_panel(B.layout(), C.layout(), 1, a_rows),
                                memory::Slot::OperandB));
  });
  redistribute(A, *X);
  redistribute(B, *Y);
  const algo::TrianglePanels p{X->data(), Y->data(), X->ld(), Y->ld(), a_rows ? A.cols() : A.rows(),
                               a_rows,    hermitian};
  const index_t chunk = std::clamp<index_t>(C.local_cols() / 8, 4, 256);
  algo::syrk_triangle(uplo, alpha, p, beta, C.data(), C.ld(), index, chunk);
}

template <Scalar T>
void syrk_rank_k(const char* routine, bool hermitian, Uplo uplo, Op op, T alpha,
                 const DistMatrix<T>& A, T beta, DistMatrix<T>& C) {
  syrk_validate(routine, hermitian, op, A, C);
  const comm::WaitScope waiting;  // SHARDMM_WAIT
  const trace::Call traced(C.mesh().comm(), routine);
  const index_t k = op == Op::N ? A.cols() : A.rows();
  if (C.rows() == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return;
  const algo::TileIndex index = syrk_tile_index(C);
  if (alpha == T(0) || k == 0)  // A is not read
    return algo::scale_triangle(uplo, beta, hermitian, C.data(), C.ld(), index);
  const Blas3Plan plan = front::rank_k_plan<T>(routine, uplo, op, A, nullptr, C);
  if (plan.chosen.algorithm == "reduce")
    return front::syrk_reduce<T>(uplo, op, {alpha, T(0)}, A, nullptr, beta, C, hermitian, index,
                                 plan.request.nb);
  syrk_update(uplo, op, alpha, A, A, beta, C, hermitian, index);
}

// syr2k / her2k: C <- alpha op(A) op(B)' + alpha2 op(B) op(A)' + beta C on the triangle, as
// two passes of the rank-k update (the second with beta = 1; herk's diagonal stays real).
template <Scalar T>
void syrk_rank_2k(const char* routine, bool hermitian, Uplo uplo, Op op, T alpha, T alpha2,
                  const DistMatrix<T>& A, const DistMatrix<T>& B, T beta, DistMatrix<T>& C) {
  syrk_validate(routine, hermitian, op, A, C);
  if (A.rows() != B.rows() || A.cols() != B.cols())
    throw DimensionMismatch(std::string(routine) + ": A " + A.layout().to_string() + " and B " +
                            B.layout().to_string() + " must have the same shape");
  const comm::WaitScope waiting;  // SHARDMM_WAIT
  const trace::Call traced(C.mesh().comm(), routine);
  const index_t k = op == Op::N ? A.cols() : A.rows();
  if (C.rows() == 0 || ((alpha == T(0) || k == 0) && beta == T(1))) return;
  const algo::TileIndex index = syrk_tile_index(C);
  if (alpha == T(0) || k == 0)  // neither A nor B is read
    return algo::scale_triangle(uplo, beta, hermitian, C.data(), C.ld(), index);
  const Blas3Plan plan = front::rank_k_plan<T>(routine, uplo, op, A, &B, C);
  if (plan.chosen.algorithm == "reduce")
    return front::syrk_reduce<T>(uplo, op, {alpha, alpha2}, A, &B, beta, C, hermitian, index,
                                 plan.request.nb);
  syrk_update(uplo, op, alpha, A, B, beta, C, hermitian, index);
  syrk_update(uplo, op, alpha2, B, A, T(1), C, hermitian, index);
}

}  // namespace

template <Scalar T>
void syrk(Uplo uplo, Op op, T alpha, const DistMatrix<T>& A, T beta, DistMatrix<T>& C) {
  syrk_rank_k("syrk", false, uplo, op, alpha, A, beta, C);
}

template <Scalar T>
void herk(Uplo uplo, Op op, real_t<T> alpha, const DistMatrix<T>& A, real_t<T> beta,
          DistMatrix<T>& C) {
  syrk_rank_k("herk", true, uplo, op, T(alpha), A, T(beta), C);
}

template <Scalar T>
void syr2k(Uplo uplo, Op op, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
           DistMatrix<T>& C) {
  syrk_rank_2k("syr2k", false, uplo, op, alpha, alpha, A, B, beta, C);
}

template <Scalar T>
void her2k(Uplo uplo, Op op, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B,
           real_t<T> beta, DistMatrix<T>& C) {
  T alpha2 = alpha;
  if constexpr (is_complex_v<T>) alpha2 = std::conj(alpha);
  syrk_rank_2k("her2k", true, uplo, op, alpha, alpha2, A, B, T(beta), C);
}

#define SHARDMM_INSTANTIATE(T)                                                                 \
  template void syrk<T>(Uplo, Op, T, const DistMatrix<T>&, T, DistMatrix<T>&);                 \
  template void herk<T>(Uplo, Op, real_t<T>, const DistMatrix<T>&, real_t<T>, DistMatrix<T>&); \
  template void syr2k<T>(Uplo, Op, T, const DistMatrix<T>&, const DistMatrix<T>&, T,           \
                         DistMatrix<T>&);                                                      \
  template void her2k<T>(Uplo, Op, T, const DistMatrix<T>&, const DistMatrix<T>&, real_t<T>,   \
                         DistMatrix<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm
