// One Transformer MLP block, y = GeLU(x . W1) . W2, forward and backward, on the 2D mesh
// {x: data axis X, y: model axis Y}: data parallelism over X, Megatron tensor parallelism over
// Y (W1 column-sharded, W2 row-sharded), so each pass needs one reduction over Y.
//
// Layouts (docs/EXAMPLES.md has the full table and the words each collective moves):
//   mode allreduce:  x, y, dy, dx [B_X, D]       (replicated over Y)
//   mode seqpar:     x, y, dy, dx [B_XY, D]      (Megatron sequence parallelism)
//   both:            W1, dW1 [D, F_Y]   W2, dW2 [F_Y, D]   h, a, da, dh [B_X, F_Y]
// Every product is one gemm; the sharding rules insert the collectives (seqpar: the products
// that need x or dy over the data shard gather it over Y themselves, [B_XY,D] -> [B_X,D]):
// Forward:   h = x.W1 (seqpar: AllGather_Y x)  a = GeLU(h)
//            y = a.W2: partial sums {U_Y} -> AllReduce_Y (allreduce) | ReduceScatter_Y (seqpar)
// Backward:  da = dy.W2^T (seqpar: AllGather_Y dy)  dW2 = a^T.dy -> (AllGather_Y dy +) AllReduce_X
//            dh = da * GeLU'(h)  dx = dh.W1^T -> AllReduce_Y | ReduceScatter_Y
//            dW1 = x^T.dh -> (AllGather_Y x +) AllReduce_X
// With overlap, the products that reduce over Y run as the ring matmul-ReduceScatter on the
// model axis (partial blocks circulate while the next block multiplies; in allreduce mode gemm
// then gathers the result over Y into y's layout); in seqpar mode h = x.W1 runs as the ring
// AllGather-matmul (x's row blocks circulate).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/tracker.hpp"

namespace shardmm::examples {

enum class TpMode { AllReduce, SeqParallel };

struct MlpConfig {
  index_t B = 64, D = 64, F = 256;  ///< tokens, model width, hidden width
  TpMode mode = TpMode::AllReduce;
  bool overlap = false;        ///< Algorithm::Ring on the model axis where a ring form applies
  bool bidirectional = false;  ///< ring AllGather form: halves travel both ways
};

template <Scalar T>
class MlpBlock {
 public:
  /// Collective over `mesh` (a 2D mesh with axes x, y). Throws InvalidArgument when overlap
  /// is asked and B is not a multiple of X * Y (the ring tiles must match the global ones).
  MlpBlock(const Mesh& mesh, const MlpConfig& cfg);
  /// x, W1, W2 and the incoming gradient dy, from global indices.
  void init();
  void forward(Tracker& tr);
  void backward(Tracker& tr);
  /// x W1 W2 y dy dx dW1 dW2 by name (verification, perturbation).
  DistMatrix<T>& tensor(const std::string& name) { return *tensors_.at(name); }
  /// "name  layout" lines for every tensor.
  [[nodiscard]] std::string layouts() const;

 private:
  [[nodiscard]] bool seqpar() const { return c_.mode == TpMode::SeqParallel; }
  [[nodiscard]] bool ring() const { return c_.overlap && Y_ > 1; }
  [[nodiscard]] double activation_words() const;  // one AllGather/ReduceScatter_Y of [B_X, D]
  [[nodiscard]] double gradient_words() const;    // one AllReduce_X of a [D, F_Y] weight
  [[nodiscard]] std::string on_model(const std::string& collective) const;
  [[nodiscard]] std::string on_data(const std::string& collective) const;
  static std::string both(const std::string& first, const std::string& second);
  void reduce_over_model(Tracker& tr, const std::string& name, Op opB, DistMatrix<T>& A,
                         DistMatrix<T>& Bm, DistMatrix<T>& out);
  GemmReport ring_gemm(Tracker& tr, const Step& s, RingForm form, Op opB, DistMatrix<T>& A,
                       DistMatrix<T>& Bm, DistMatrix<T>& C);
  DistMatrix<T> model_view(DistMatrix<T>& M);
  DistMatrix<T>& add(const std::string& name, const std::string& spec, index_t m, index_t n);

  Mesh mesh_;
  std::optional<Mesh> model_;  // this rank's slice along the model axis (ring only)
  MlpConfig c_;
  int X_, Y_;
  std::map<std::string, DistMatrix<T>*> tensors_;
  std::map<std::string, DistMatrix<T>> owned_;
  std::vector<std::string> order_;  // tensors in creation order
  DistMatrix<T>&x_, &W1_, &W2_, &h_, &a_, &y_, &dy_, &da_, &dh_, &dx_, &dW1_, &dW2_;
};

extern template class MlpBlock<float>;
extern template class MlpBlock<double>;

}  // namespace shardmm::examples
