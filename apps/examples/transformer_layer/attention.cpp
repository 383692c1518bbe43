#include "transformer_layer/attention.hpp"

#include <cmath>

namespace shardmm::examples {
namespace {

/// The arithmetic type of T's elementwise operations: f32 for the 16-bit formats.
template <Scalar T>
using Acc = std::conditional_t<is_half_v<T>, float, T>;

/// One block of a batch as a matrix on the 1 x 1 mesh (a view: no copy).
template <Scalar T>
DistMatrix<T> block_view(const Mesh& self, const HeadBlocks<T>& M, index_t n, index_t h) {
  return DistMatrix<T>::view(self, Layout::replicated(self.shape(), M.rows, M.cols),
                             M.data + n * M.stride_n + h * M.stride_h, M.ld);
}

}  // namespace

template <Scalar T>
void head_products(const Mesh& self, Op opA, Op opB, double alpha, const HeadBlocks<T>& A,
                   const HeadBlocks<T>& B, double beta, const HeadBlocks<T>& C, index_t batch_n,
                   index_t batch_h) {
  Options o;
  o.algorithm = Algorithm::Local;  // one rank: the local GEMM alone
  for (index_t n = 0; n < batch_n; ++n)
    for (index_t h = 0; h < batch_h; ++h) {
      const DistMatrix<T> a = block_view(self, A, n, h), b = block_view(self, B, n, h);
      DistMatrix<T> c = block_view(self, C, n, h);
      layer_gemm(opA, opB, alpha, a, b, beta, c, o);
    }
}

template <Scalar T>
LocalAttention<T>::LocalAttention(index_t n_loc, index_t h_loc, index_t S, index_t dh)
    : self_(MPI_COMM_SELF, MeshShape({"x", "y"}, {1, 1})),
      n_loc_(n_loc),
      h_loc_(h_loc),
      S_(S),
      dh_(dh),
      P_(static_cast<std::size_t>(n_loc * h_loc * S * S)),
      dS_(P_.size()) {}

template <Scalar T>
HeadBlocks<T> LocalAttention<T>::blocks(DistMatrix<T>& M) const {
  if (M.local_rows() != n_loc_ * S_ || M.local_cols() != h_loc_ * dh_)
    throw InvalidArgument("attention: tile of " + M.layout().to_string() + " is not " +
                          std::to_string(n_loc_) + " sequences x " + std::to_string(h_loc_) +
                          " heads");
  return {M.data(), S_, dh_, M.ld(), S_, dh_ * M.ld()};
}

template <Scalar T>
HeadBlocks<T> LocalAttention<T>::squares(std::vector<T>& buf) {
  return {buf.data(), S_, S_, S_, h_loc_ * S_ * S_, S_ * S_};
}

template <Scalar T>
void LocalAttention<T>::product(Op opA, Op opB, double alpha, const HeadBlocks<T>& A,
                                const HeadBlocks<T>& B, const HeadBlocks<T>& C) {
  head_products(self_, opA, opB, alpha, A, B, 0.0, C, n_loc_, h_loc_);
}

// Row i of every S x S block: softmax over keys j <= i (Acc arithmetic), zero for j > i.
template <Scalar T>
void LocalAttention<T>::softmax_rows() {
  for (std::size_t base = 0; base < P_.size(); base += static_cast<std::size_t>(S_ * S_)) {
    T* p = P_.data() + base;
    for (index_t i = 0; i < S_; ++i) {
      Acc<T> top = Acc<T>(p[i]), sum = 0;
      for (index_t j = 1; j <= i; ++j) top = std::max(top, Acc<T>(p[i + j * S_]));
      for (index_t j = 0; j <= i; ++j) sum += std::exp(Acc<T>(p[i + j * S_]) - top);
      for (index_t j = 0; j < S_; ++j)
        p[i + j * S_] = T(j <= i ? std::exp(Acc<T>(p[i + j * S_]) - top) / sum : Acc<T>(0));
    }
  }
}

template <Scalar T>
void LocalAttention<T>::softmax_backward(double scale) {
  for (std::size_t base = 0; base < P_.size(); base += static_cast<std::size_t>(S_ * S_)) {
    const T* p = P_.data() + base;
    T* d = dS_.data() + base;  // dP on entry, dS on exit
    for (index_t i = 0; i < S_; ++i) {
      Acc<T> row = 0;
      for (index_t j = 0; j <= i; ++j) row += Acc<T>(d[i + j * S_]) * Acc<T>(p[i + j * S_]);
      for (index_t j = 0; j < S_; ++j)
        d[i + j * S_] =
            T(j <= i ? Acc<T>(scale) * Acc<T>(p[i + j * S_]) * (Acc<T>(d[i + j * S_]) - row)
                     : Acc<T>(0));
    }
  }
}

template <Scalar T>
void LocalAttention<T>::forward(DistMatrix<T>& q, DistMatrix<T>& k, DistMatrix<T>& v,
                                DistMatrix<T>& o) {
  const double scale = 1 / std::sqrt(double(dh_));
  product(Op::N, Op::T, scale, blocks(q), blocks(k), squares(P_));  // scores q k^T / sqrt(dh)
  softmax_rows();
  product(Op::N, Op::N, 1.0, squares(P_), blocks(v), blocks(o));  // o = P v
}

template <Scalar T>
void LocalAttention<T>::backward(DistMatrix<T>& q, DistMatrix<T>& k, DistMatrix<T>& v,
                                 DistMatrix<T>& dO, DistMatrix<T>& dq, DistMatrix<T>& dk,
                                 DistMatrix<T>& dv) {
  product(Op::N, Op::T, 1.0, blocks(dO), blocks(v), squares(dS_));  // dP = dO v^T
  softmax_backward(1 / std::sqrt(double(dh_)));                     // dS, scaled
  product(Op::N, Op::N, 1.0, squares(dS_), blocks(k), blocks(dq));  // dq = dS k
  product(Op::T, Op::N, 1.0, squares(dS_), blocks(q), blocks(dk));  // dk = dS^T q
  product(Op::T, Op::N, 1.0, squares(P_), blocks(dO), blocks(dv));  // dv = P^T dO
}

template void head_products<float>(const Mesh&, Op, Op, double, const HeadBlocks<float>&,
                                   const HeadBlocks<float>&, double, const HeadBlocks<float>&,
                                   index_t, index_t);
template void head_products<double>(const Mesh&, Op, Op, double, const HeadBlocks<double>&,
                                    const HeadBlocks<double>&, double, const HeadBlocks<double>&,
                                    index_t, index_t);
template void head_products<bf16>(const Mesh&, Op, Op, double, const HeadBlocks<bf16>&,
                                  const HeadBlocks<bf16>&, double, const HeadBlocks<bf16>&, index_t,
                                  index_t);

template class LocalAttention<float>;
template class LocalAttention<double>;
template class LocalAttention<bf16>;

}  // namespace shardmm::examples
