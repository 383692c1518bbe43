// Data-parallel training of a two-layer MLP, pred = act(X . W1 + 1 b1) . W2 + 1 b2, on a
// synthetic regression task, with pmap semantics on the mesh {x: data axis X, y: model axis Y}:
//
//   batch     X, target, pred, dpred [B_X, *]   the global batch is sharded over X
//             z1, h, dh              [B_X, H_Y]
//   params    W1 [Din, H_Y]  b1 [1, H_Y]  W2 [H_Y, Dout]  b2 [1, Dout]  (replicated over X)
//   FSDP      W1 [Din_X, H_Y]  b1 [1, H_YX]  W2 [H_YX, Dout]  b2 [1, Dout_X]  (sharded over X;
//             each product that uses one gathers it over X, gradients ReduceScatter_X back)
//
// The loss is the mean over the global batch, L = 1/(2B) sum (pred - t)^2, so each rank's
// partial gradient carries 1/B and the sum over X (AllReduce_X) is the pmean of the per-rank
// mean gradients. Every product is shardmm::gemm with the sharding rules: a weight gradient is
// a product whose contracting dimension, the batch, is sharded over X, so its partial sums
// {U_X} are reduced by the gemm into the gradient's layout -- AllReduce_X into a replicated
// one, ReduceScatter_X into an FSDP shard. Biases use the ones vector 1 [B_X, 1]: z1 += 1 . b1
// (no communication) and db1 = 1^T . dz1 (reduced like the weights). With Y > 1 (tensor
// parallelism) pred = h . W2 contracts H, sharded over Y: AllReduce_Y.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/tracker.hpp"

namespace shardmm::examples {

enum class OptimizerKind { Sgd, Adam };
enum class Activation { Tanh, Relu };

struct TrainConfig {
  index_t batch = 64, din = 16, hidden = 32, dout = 4;
  double lr = 0.1;
  OptimizerKind optimizer = OptimizerKind::Sgd;
  Activation activation = Activation::Tanh;
  bool fsdp = false;
};

template <Scalar T>
class Trainer {
 public:
  /// Collective over `mesh` (axes x, y). Parameters are initialised from global indices.
  Trainer(const Mesh& mesh, const TrainConfig& cfg);
  /// One step on global batch number `s` (samples s*B .. s*B+B-1): forward, backward,
  /// gradient reduction, optimizer update. Returns the loss before the update, on every rank.
  double step(int s, Tracker& tr);
  /// Every parameter's full value, column-major, on rank 0 (collective).
  std::vector<std::pair<std::string, std::vector<T>>> gather_params() const;
  /// "name  layout" lines for the parameters and the batch tensors.
  [[nodiscard]] std::string layouts() const;

 private:
  enum Id { W1, b1, W2, b2 };
  struct Param {
    std::string name;
    DistMatrix<T> value, grad, m, v;  // stored layout: replicated, or sharded over X (FSDP)
    double working = 0;               // elements of a rank's tile in the working layout
  };
  Param make_param(const std::string& name, const std::string& working, const std::string& shard,
                   index_t rows, index_t cols, std::uint64_t seed, double scale);
  DistMatrix<T> batch_matrix(const std::string& spec, index_t cols) const;
  void load_batch(int s, Tracker& tr);
  double forward(Tracker& tr);
  void backward(Tracker& tr);
  void update(int t, Tracker& tr);
  [[nodiscard]] double words_of(Id id, double factor) const;           // factor x the working tile
  [[nodiscard]] Step gathering(const std::string& name, Id id) const;  // FSDP: AllGather_X
  [[nodiscard]] std::string on_data(const std::string& collective) const;

  Mesh mesh_;
  TrainConfig c_;
  int X_, Y_;
  std::vector<Param> p_;  // indexed by Id
  DistMatrix<T> X_in_, target_, ones_, z1_, h_, pred_, dpred_, dh_;
};

extern template class Trainer<float>;
extern template class Trainer<double>;

}  // namespace shardmm::examples
