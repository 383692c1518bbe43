// The per-head part of causal multi-head attention in the Transformer layer (layer.hpp).
//
// q, k, v, o and their gradients are [B_X, E_Y] matrices: a rank's tile holds its data
// shard's n_loc whole sequences of S tokens (rows) x its model rank's h_loc whole heads of
// width dh (columns). So the per-head products (scores, P v and the four of the backward pass)
// need nothing from another rank. They run as batches of the N H (sequence, head) pairs, cut
// over both mesh axes, `[B_XY, S, dh]`: each rank's batch elements are its own pairs, packed
// from the tile (pair (n, h) = rows n S .., columns h dh .. of it; a local copy) into
// consecutive S x dh tiles. head_products() runs one shardmm::gemm_batched over the layer's
// mesh per product: the batch cut over every axis moves nothing, and every product is a
// local GEMM (16-bit tiles widened to f32 inside, the result rounded once). The S x S
// attention matrices P (`[B_XY, S, S]`) are kept for the backward pass.
#pragma once

#include <cstdint>

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

/// C[b] <- alpha op(A[b]) op(B[b]) for every batch element: one shardmm::gemm_batched.
/// Returns the bytes this rank received (0 when the batch is cut over every axis).
template <Scalar T>
std::int64_t head_products(Op opA, Op opB, double alpha, const BatchedMatrix<T>& A,
                           const BatchedMatrix<T>& B, BatchedMatrix<T>& C);

template <Scalar T>
class LocalAttention {
 public:
  /// N sequences of S tokens and H heads of width dh on `mesh` (axes x, y), N % X == 0 and
  /// H % Y == 0 (checked by the layer).
  LocalAttention(const Mesh& mesh, index_t N, index_t H, index_t S, index_t dh);
  /// o <- softmax(q k^T / sqrt(dh) + causal mask) v per sequence and head; keeps q, k, v
  /// and P. Returns the bytes received (0).
  std::int64_t forward(const DistMatrix<T>& q, const DistMatrix<T>& k, const DistMatrix<T>& v,
                       DistMatrix<T>& o);
  /// dq, dk, dv from dO (with the q, k, v and P of the last forward()). Returns the bytes
  /// received (0).
  std::int64_t backward(const DistMatrix<T>& dO, DistMatrix<T>& dq, DistMatrix<T>& dk,
                        DistMatrix<T>& dv);

 private:
  void pack(const DistMatrix<T>& M, BatchedMatrix<T>& heads) const;    // tile -> pairs
  void unpack(const BatchedMatrix<T>& heads, DistMatrix<T>& M) const;  // pairs -> tile
  void softmax_rows();                  // P_ <- causal row softmax of the scores in P_
  void softmax_backward(double scale);  // dS_ <- scale P * (dP - rowsum(dP * P)), dP in dS_

  index_t n_loc_, h_loc_, S_, dh_;
  BatchedMatrix<T> q_, k_, v_, o_, dO_, dq_, dk_, dv_;  // [B_XY, S, dh]
  BatchedMatrix<T> P_, dS_;                             // [B_XY, S, S]
};

extern template class LocalAttention<float>;
extern template class LocalAttention<double>;
extern template class LocalAttention<bf16>;

}  // namespace shardmm::examples
