#include "transformer_layer/attention.hpp"

#include <cmath>
#include <string>

namespace shardmm::examples {
namespace {

/// The arithmetic type of T's elementwise operations: f32 for the 16-bit formats.
template <Scalar T>
using Acc = std::conditional_t<is_half_v<T>, float, T>;

/// A batch of the N H (sequence, head) pairs of rows x cols, cut over both mesh axes.
template <Scalar T>
BatchedMatrix<T> pairs(const Mesh& mesh, const char* name, index_t batch, index_t rows,
                       index_t cols, index_t local_batch) {
  BatchedMatrix<T> M(mesh, batch, rows, cols, std::string(name) + "[B_XY,I,J]");
  if (M.local_batch() != local_batch)  // the layer checked N % X and H % Y: never
    throw InvalidArgument("attention: " + M.layout().to_string() + " holds " +
                          std::to_string(M.local_batch()) + " pairs here, not " +
                          std::to_string(local_batch));
  return M;
}

}  // namespace

template <Scalar T>
std::int64_t head_products(Op opA, Op opB, double alpha, const BatchedMatrix<T>& A,
                           const BatchedMatrix<T>& B, BatchedMatrix<T>& C) {
  const Options o;  // each product on the slice mesh (this rank alone): a local GEMM
  if constexpr (is_half_v<T>) {
    return gemm_batched(opA, opB, float(alpha), A, B, 0.0F, C, o).gemm.bytes_received;
  } else {
    return gemm_batched(opA, opB, T(alpha), A, B, T(0), C, o).gemm.bytes_received;
  }
}

template <Scalar T>
LocalAttention<T>::LocalAttention(const Mesh& mesh, index_t N, index_t H, index_t S, index_t dh)
    : n_loc_(N / mesh.axis_size("x")),
      h_loc_(H / mesh.axis_size("y")),
      S_(S),
      dh_(dh),
      q_(pairs<T>(mesh, "q", N * H, S, dh, n_loc_ * h_loc_)),
      k_(pairs<T>(mesh, "k", N * H, S, dh, n_loc_ * h_loc_)),
      v_(pairs<T>(mesh, "v", N * H, S, dh, n_loc_ * h_loc_)),
      o_(pairs<T>(mesh, "o", N * H, S, dh, n_loc_ * h_loc_)),
      dO_(pairs<T>(mesh, "dO", N * H, S, dh, n_loc_ * h_loc_)),
      dq_(pairs<T>(mesh, "dq", N * H, S, dh, n_loc_ * h_loc_)),
      dk_(pairs<T>(mesh, "dk", N * H, S, dh, n_loc_ * h_loc_)),
      dv_(pairs<T>(mesh, "dv", N * H, S, dh, n_loc_ * h_loc_)),
      P_(pairs<T>(mesh, "P", N * H, S, S, n_loc_ * h_loc_)),
      dS_(pairs<T>(mesh, "dS", N * H, S, S, n_loc_ * h_loc_)) {}

// Pair b = n h_loc + h is the S x dh block at row n S, column h dh of the tile.
template <Scalar T>
void LocalAttention<T>::pack(const DistMatrix<T>& M, BatchedMatrix<T>& heads) const {
  if (M.local_rows() != n_loc_ * S_ || M.local_cols() != h_loc_ * dh_)
    throw InvalidArgument("attention: tile of " + M.layout().to_string() + " is not " +
                          std::to_string(n_loc_) + " sequences x " + std::to_string(h_loc_) +
                          " heads");
  for (index_t n = 0; n < n_loc_; ++n)
    for (index_t h = 0; h < h_loc_; ++h) {
      T* tile = heads.data() + (n * h_loc_ + h) * heads.stride();
      for (index_t j = 0; j < dh_; ++j)
        for (index_t i = 0; i < S_; ++i)
          tile[i + j * heads.ld()] = M.local(n * S_ + i, h * dh_ + j);
    }
}

template <Scalar T>
void LocalAttention<T>::unpack(const BatchedMatrix<T>& heads, DistMatrix<T>& M) const {
  for (index_t n = 0; n < n_loc_; ++n)
    for (index_t h = 0; h < h_loc_; ++h) {
      const T* tile = heads.data() + (n * h_loc_ + h) * heads.stride();
      for (index_t j = 0; j < dh_; ++j)
        for (index_t i = 0; i < S_; ++i)
          M.local(n * S_ + i, h * dh_ + j) = tile[i + j * heads.ld()];
    }
}

// Row i of every S x S block: softmax over keys j <= i (Acc arithmetic), zero for j > i.
template <Scalar T>
void LocalAttention<T>::softmax_rows() {
  const index_t ld = P_.ld();
  for (index_t b = 0; b < P_.local_batch(); ++b) {
    T* p = P_.data() + b * P_.stride();
    for (index_t i = 0; i < S_; ++i) {
      Acc<T> top = Acc<T>(p[i]), sum = 0;
      for (index_t j = 1; j <= i; ++j) top = std::max(top, Acc<T>(p[i + j * ld]));
      for (index_t j = 0; j <= i; ++j) sum += std::exp(Acc<T>(p[i + j * ld]) - top);
      for (index_t j = 0; j < S_; ++j)
        p[i + j * ld] = T(j <= i ? std::exp(Acc<T>(p[i + j * ld]) - top) / sum : Acc<T>(0));
    }
  }
}

template <Scalar T>
void LocalAttention<T>::softmax_backward(double scale) {
  const index_t ld = P_.ld();
  for (index_t b = 0; b < P_.local_batch(); ++b) {
    const T* p = P_.data() + b * P_.stride();
    T* d = dS_.data() + b * dS_.stride();  // dP on entry, dS on exit
    for (index_t i = 0; i < S_; ++i) {
      Acc<T> row = 0;
      for (index_t j = 0; j <= i; ++j) row += Acc<T>(d[i + j * ld]) * Acc<T>(p[i + j * ld]);
      for (index_t j = 0; j < S_; ++j)
        d[i + j * ld] =
            T(j <= i ? Acc<T>(scale) * Acc<T>(p[i + j * ld]) * (Acc<T>(d[i + j * ld]) - row)
                     : Acc<T>(0));
    }
  }
}

template <Scalar T>
std::int64_t LocalAttention<T>::forward(const DistMatrix<T>& q, const DistMatrix<T>& k,
                                        const DistMatrix<T>& v, DistMatrix<T>& o) {
  pack(q, q_);
  pack(k, k_);
  pack(v, v_);
  std::int64_t bytes = head_products(Op::N, Op::T, 1 / std::sqrt(double(dh_)), q_, k_, P_);
  softmax_rows();
  bytes += head_products(Op::N, Op::N, 1.0, P_, v_, o_);  // o = P v
  unpack(o_, o);
  return bytes;
}

template <Scalar T>
std::int64_t LocalAttention<T>::backward(const DistMatrix<T>& dO, DistMatrix<T>& dq,
                                         DistMatrix<T>& dk, DistMatrix<T>& dv) {
  pack(dO, dO_);
  std::int64_t bytes = head_products(Op::N, Op::T, 1.0, dO_, v_, dS_);  // dP = dO v^T
  softmax_backward(1 / std::sqrt(double(dh_)));                         // dS, scaled
  bytes += head_products(Op::N, Op::N, 1.0, dS_, k_, dq_);              // dq = dS k
  bytes += head_products(Op::T, Op::N, 1.0, dS_, q_, dk_);              // dk = dS^T q
  bytes += head_products(Op::T, Op::N, 1.0, P_, dO_, dv_);              // dv = P^T dO
  unpack(dq_, dq);
  unpack(dk_, dk);
  unpack(dv_, dv);
  return bytes;
}

template std::int64_t head_products<float>(Op, Op, double, const BatchedMatrix<float>&,
                                           const BatchedMatrix<float>&, BatchedMatrix<float>&);
template std::int64_t head_products<double>(Op, Op, double, const BatchedMatrix<double>&,
                                            const BatchedMatrix<double>&, BatchedMatrix<double>&);
template std::int64_t head_products<bf16>(Op, Op, double, const BatchedMatrix<bf16>&,
                                          const BatchedMatrix<bf16>&, BatchedMatrix<bf16>&);

template class LocalAttention<float>;
template class LocalAttention<double>;
template class LocalAttention<bf16>;

}  // namespace shardmm::examples
