// The rank-local part of causal multi-head attention in the Transformer layer (layer.hpp).
//
// q, k, v, o and their gradients are [B_X, E_Y] matrices: rows = the tokens of this data
// shard's n_loc whole sequences of S tokens, columns = this model rank's h_loc whole heads of
// width dh. So every per-head product (scores, P v and their gradients) is on this rank's
// tiles alone: nothing moves. Head (n, h) is the S x dh block at row n S, column h dh of a
// tile; its S x S attention matrix P_nh is kept for the backward pass.
//
// Every per-head product goes through head_products(): a batch of equal-shape products, each a
// shardmm::gemm on a 1 x 1 mesh over MPI_COMM_SELF (views of the blocks, no copy; 16-bit
// blocks are widened to f32 inside gemm and the result rounded once).
#pragma once

#include <vector>

#include "common/util.hpp"

namespace shardmm::examples {

/// shardmm::gemm with alpha and beta given as doubles: T's own scalars for f32 / f64, f32 for
/// the 16-bit formats (whose products accumulate in f32).
template <Scalar T>
GemmReport layer_gemm(Op opA, Op opB, double alpha, const DistMatrix<T>& A, const DistMatrix<T>& B,
                      double beta, DistMatrix<T>& C, const Options& options) {
  if constexpr (is_half_v<T>) {
    return gemm(opA, opB, float(alpha), A, B, float(beta), C, options);
  } else {
    return gemm(opA, opB, T(alpha), A, B, T(beta), C, options);
  }
}

/// A batch of equal-shape blocks inside one column-major buffer: block (n, h) starts at
/// data + n * stride_n + h * stride_h and is rows x cols with leading dimension ld.
template <Scalar T>
struct HeadBlocks {
  T* data = nullptr;
  index_t rows = 0, cols = 0, ld = 1, stride_n = 0, stride_h = 0;
};

/// C[n,h] <- alpha op(A[n,h]) op(B[n,h]) + beta C[n,h] for n < batch_n, h < batch_h.
template <Scalar T>
void head_products(const Mesh& self, Op opA, Op opB, double alpha, const HeadBlocks<T>& A,
                   const HeadBlocks<T>& B, double beta, const HeadBlocks<T>& C, index_t batch_n,
                   index_t batch_h);

template <Scalar T>
class LocalAttention {
 public:
  /// n_loc sequences of S tokens, h_loc heads of width dh on this rank.
  LocalAttention(index_t n_loc, index_t h_loc, index_t S, index_t dh);
  /// o <- softmax(q k^T / sqrt(dh) + causal mask) v per sequence and head; keeps P.
  void forward(DistMatrix<T>& q, DistMatrix<T>& k, DistMatrix<T>& v, DistMatrix<T>& o);
  /// dq, dk, dv from dO (uses the P of the last forward()).
  void backward(DistMatrix<T>& q, DistMatrix<T>& k, DistMatrix<T>& v, DistMatrix<T>& dO,
                DistMatrix<T>& dq, DistMatrix<T>& dk, DistMatrix<T>& dv);

 private:
  HeadBlocks<T> blocks(DistMatrix<T>& M) const;  // the S x dh head blocks of a [B_X,E_Y] tile
  HeadBlocks<T> squares(std::vector<T>& buf);    // the S x S blocks of P_ or dS_
  void product(Op opA, Op opB, double alpha, const HeadBlocks<T>& A, const HeadBlocks<T>& B,
               const HeadBlocks<T>& C);
  void softmax_rows();                  // P_ <- causal row softmax of the scores in P_
  void softmax_backward(double scale);  // dS_ <- scale P * (dP - rowsum(dP * P)), dP in dS_

  Mesh self_;  // 1 x 1 over MPI_COMM_SELF: the per-head products move nothing
  index_t n_loc_, h_loc_, S_, dh_;
  std::vector<T> P_, dS_;  // n_loc * h_loc blocks of S x S, column-major
};

extern template class LocalAttention<float>;
extern template class LocalAttention<double>;
extern template class LocalAttention<bf16>;

}  // namespace shardmm::examples
