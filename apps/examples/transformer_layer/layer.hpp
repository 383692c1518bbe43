// A whole Transformer layer, forward and backward, on the 2D mesh {x: data axis X, y: model
// axis Y}: causal multi-head attention, then the MLP, each with a residual connection (no
// normalisation, no biases: they are rank-local row operations that move nothing):
//
//   q, k, v = x Wq, x Wk, x Wv;  o_nh = softmax(q_nh k_nh^T / sqrt(dh) + causal mask) v_nh
//   x1 = x + o Wo;  y = x1 + GeLU(x1 W1) W2
//
// N sequences of S tokens (T = N S rows), model width D, H heads of width dh = D / H (E = D
// columns of q, k, v, o), MLP width F. Data parallel over X (whole sequences), tensor parallel
// over Y (Megatron: whole heads and a slice of F per model rank):
//   x, x1, y, dy, dx1, dx, attn, m   [B_X, D]      (B = the T token rows)
//   Wq, Wk, Wv [D, E_Y] (column-parallel)  Wo [E_Y, D] (row-parallel)
//   W1 [D, F_Y] (column-parallel)          W2 [F_Y, D] (row-parallel)
//   q, k, v, o, do, dq, dk, dv [B_X, E_Y]  h, a, da, dh [B_X, F_Y]
//   every weight gradient in its weight's layout
// Every projection and MLP product is one gemm with the sharding rules (Algorithm::Sharded),
// which insert the collectives from the layouts:
// Forward:   q/k/v = x.W: none          attention: per head, rank-local (attention.hpp)
//            attn = o.Wo: {U_Y} -> AllReduce_Y     h = x1.W1: none
//            m = a.W2: {U_Y} -> AllReduce_Y
// Backward:  dW2 = a^T.dy, dW1 = x1^T.dh, dWo = o^T.dx1, dWq/k/v = x^T.dq/k/v: {U_X} ->
//            AllReduce_X;  da = dy.W2^T, do = dx1.Wo^T: none;
//            dx1 = dy + dh.W1^T, dx = dx1 + dq.Wq^T + dk.Wk^T + dv.Wv^T: {U_Y} -> AllReduce_Y
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/tracker.hpp"
#include "transformer_layer/attention.hpp"

namespace shardmm::examples {

struct LayerConfig {
  index_t N = 4, S = 16, D = 64, H = 4, F = 256;  ///< sequences, tokens each, widths, heads
};

template <Scalar T>
class TransformerLayer {
 public:
  /// Collective over `mesh` (axes x, y). Throws InvalidArgument on every rank, before any
  /// allocation, unless N % X == 0, H % Y == 0 and D % H == 0 (whole sequences and heads).
  TransformerLayer(const Mesh& mesh, const LayerConfig& cfg);
  /// x, the weights and the incoming gradient dy, from hashes of the global indices.
  void init();
  void forward(Tracker& tr);
  void backward(Tracker& tr);
  DistMatrix<T>& tensor(const std::string& name) { return owned_.at(name); }
  /// x, Wq, Wk, Wv, Wo, W1, W2, dy; and y, dx and the six weight gradients.
  static const std::vector<std::string>& input_names();
  static const std::vector<std::string>& output_names();
  /// "name  layout" lines for every tensor.
  [[nodiscard]] std::string layouts() const;

 private:
  DistMatrix<T>& add(const std::string& name, const std::string& spec, index_t m, index_t n);
  DistMatrix<T>& t(const std::string& name) { return owned_.at(name); }
  void product(Tracker& tr, const Step& s, Op opA, Op opB, const std::string& A,
               const std::string& B, double beta, const std::string& C);
  [[nodiscard]] Step on_model(const std::string& name) const;  // AllReduce_Y of [B_X, D]
  [[nodiscard]] Step on_data(const std::string& name, index_t rows, index_t cols) const;
  void attention_backward_projections(Tracker& tr);

  Mesh mesh_;
  LayerConfig c_;
  int X_, Y_;
  std::map<std::string, DistMatrix<T>> owned_;
  std::vector<std::string> order_;  // tensors in creation order
  LocalAttention<T> attention_;
};

extern template class TransformerLayer<float>;
extern template class TransformerLayer<double>;
extern template class TransformerLayer<bf16>;

}  // namespace shardmm::examples
