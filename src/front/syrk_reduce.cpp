// syrk / herk / syr2k / her2k, "reduce" (front/syrk_reduce.hpp), and the rank-k plan.
//
// What moves where (op(A) is n x k, C n x n in C's layout, P ranks):
//   1. op(A) (and op(B)) are redistributed into A[I, K_all] (A's orientation: k split over
//      every mesh axis in blocks of nb, n whole): workspace slots OperandA (OperandB). Words
//      per rank: about n k / P, less what the rank held.
//   2. Each rank computes alpha op(A)_l op(A)_l' over its slice l of k, on the triangle only,
//      into an n x n partial sum W[I,J]{U_all} (slot StagedC0; algo/syrk_triangle.cpp). No
//      communication.
//   3. W is reduced into S, a copy of C's layout (slot OperandC): one redistribution (a
//      reduce-scatter when C is split over every axis), about n^2 words per rank.
//   4. Each rank folds S into its own elements of C's triangle: C = beta C + S.
// Cheaper than "triangle" when k is large against n (the plan compares them); W costs n^2
// elements per rank, which the plan's memory cap weighs.
#include "front/syrk_reduce.hpp"

#include <algorithm>
#include <optional>

#include "comm/agree.hpp"
#include "core/instantiate.hpp"
#include "front/blas3_layouts.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/redistribute.hpp"

namespace shardmm::front {
namespace {

// Every rank's partial triangle: W <- alpha X Y' [+ alpha2 Y X'] over this rank's slice of k.
template <Scalar T>
void partial_triangle(Uplo uplo, RankKAlphas<T> alphas, bool a_rows, const DistMatrix<T>& X,
                      const DistMatrix<T>* Y, DistMatrix<T>& W, bool hermitian) {
  const index_t n = W.rows();
  std::fill_n(W.data(), W.ld() * n, T(0));
  const index_t kl = a_rows ? X.local_cols() : X.local_rows();
  if (kl == 0 || n == 0) return;
  algo::TileIndex all;
  for (index_t i = 0; i < n; ++i) all.rows.push_back(i), all.cols.push_back(i);
  const index_t chunk = std::clamp<index_t>(n / 8, 4, 256);
  const DistMatrix<T>& Z = Y != nullptr ? *Y : X;
  const algo::TrianglePanels first{X.data(), Z.data(), X.ld(), Z.ld(), kl, a_rows, hermitian};
  algo::syrk_triangle(uplo, alphas.first, first, T(0), W.data(), W.ld(), all, chunk);
  if (Y == nullptr) return;
  const algo::TrianglePanels second{Z.data(), X.data(), Z.ld(), X.ld(), kl, a_rows, hermitian};
  algo::syrk_triangle(uplo, alphas.second, second, T(1), W.data(), W.ld(), all, chunk);
}

// C's triangle on this rank <- beta C + S (beta == 0 does not read C); hermitian: the diagonal
// real.
template <Scalar T>
void fold_triangle(Uplo uplo, T beta, const DistMatrix<T>& S, DistMatrix<T>& C, bool hermitian,
                   const algo::TileIndex& index) {
  for (std::size_t j = 0; j < index.cols.size(); ++j)
    for (std::size_t i = 0; i < index.rows.size(); ++i) {
      const index_t ig = index.rows[i], jg = index.cols[j];
      if (uplo == Uplo::Upper ? ig > jg : ig < jg) continue;
      const auto il = static_cast<index_t>(i), jl = static_cast<index_t>(j);
      T& c = C.local(il, jl);
      c = (beta == T(0) ? T(0) : beta * c) + S.local(il, jl);
      if constexpr (is_complex_v<T>) {
        if (hermitian && ig == jg) c = T(c.real(), 0);
      }
    }
}

}  // namespace

template <Scalar T>
Blas3Plan rank_k_plan(const char* routine, Uplo uplo, Op op, const DistMatrix<T>& A,
                      const DistMatrix<T>* B, const DistMatrix<T>& C) {
  Blas3Request q;
  q.routine = parse_blas3_routine(routine);
  q.uplo = uplo, q.op = op;
  q.m = q.n = C.rows(), q.k = op == Op::N ? A.cols() : A.rows();
  q.ranks = C.mesh().size(), q.dtype = dtype_of<T>();
  q.profile = MachineProfile::from_environment();
  q.a = A.layout(), q.out = C.layout();
  if (B != nullptr) q.b = B->layout();
  return plan_blas3(q);
}

template <Scalar T>
void syrk_reduce(Uplo uplo, Op op, RankKAlphas<T> alphas, const DistMatrix<T>& A,
                 const DistMatrix<T>* B, T beta, DistMatrix<T>& C, bool hermitian,
                 const algo::TileIndex& index, index_t nb) {
  const bool a_rows = op == Op::N;
  const Mesh& mesh = C.mesh();
  std::optional<DistMatrix<T>> X, Y, W, S;  // op(A), op(B) split along k; partials; C's copy
  comm::agreed(mesh.comm(), "syrk reduce", [&] {
    X.emplace(
        matrix::pooled<T>(mesh, rank_k_split(A.layout(), a_rows, nb), memory::Slot::OperandA));
    if (B != nullptr)
      Y.emplace(
          matrix::pooled<T>(mesh, rank_k_split(B->layout(), a_rows, nb), memory::Slot::OperandB));
    W.emplace(
        matrix::pooled<T>(mesh, rank_k_partials(mesh.shape(), C.rows()), memory::Slot::StagedC0));
    S.emplace(matrix::pooled<T>(mesh, C.layout(), memory::Slot::OperandC));
  });
  redistribute(A, *X);
  if (B != nullptr) redistribute(*B, *Y);
  partial_triangle(uplo, alphas, a_rows, *X, Y ? &*Y : nullptr, *W, hermitian);
  redistribute(*W, *S);  // the sum over every rank, in C's layout
  fold_triangle(uplo, beta, *S, C, hermitian, index);
}

#define SHARDMM_INSTANTIATE(T)                                                   \
  template Blas3Plan rank_k_plan<T>(const char*, Uplo, Op, const DistMatrix<T>&, \
                                    const DistMatrix<T>*, const DistMatrix<T>&); \
  template void syrk_reduce<T>(Uplo, Op, RankKAlphas<T>, const DistMatrix<T>&,   \
                               const DistMatrix<T>*, T, DistMatrix<T>&, bool,    \
                               const algo::TileIndex&, index_t);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::front
