#include "transformer_mlp/mlp_block.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace shardmm::examples {
namespace {

// GeLU (tanh approximation) and its derivative.
constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluA = 0.044715;

template <Scalar T>
T gelu(T v) {
  const T u = T(kGeluC) * (v + T(kGeluA) * v * v * v);
  return T(0.5) * v * (T(1) + std::tanh(u));
}

template <Scalar T>
T gelu_grad(T v) {
  const T t = std::tanh(T(kGeluC) * (v + T(kGeluA) * v * v * v));
  const T du = T(kGeluC) * (T(1) + T(3 * kGeluA) * v * v);
  return T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * du;
}

Options sharded() {
  Options o;
  o.algorithm = Algorithm::Sharded;  // the JAX sharding rules insert the collectives
  return o;
}

const char* activation_spec(TpMode m) { return m == TpMode::AllReduce ? "[B_X,D]" : "[B_XY,D]"; }

}  // namespace

template <Scalar T>
MlpBlock<T>::MlpBlock(const Mesh& mesh, const MlpConfig& cfg)
    : mesh_(mesh),
      c_(cfg),
      X_(mesh.axis_size("x")),
      Y_(mesh.axis_size("y")),
      x_(add("x", activation_spec(cfg.mode), cfg.B, cfg.D)),
      W1_(add("W1", "[D,F_Y]", cfg.D, cfg.F)),
      W2_(add("W2", "[F_Y,D]", cfg.F, cfg.D)),
      h_(add("h", "[B_X,F_Y]", cfg.B, cfg.F)),
      a_(add("a", "[B_X,F_Y]", cfg.B, cfg.F)),
      y_(add("y", activation_spec(cfg.mode), cfg.B, cfg.D)),
      dy_(add("dy", activation_spec(cfg.mode), cfg.B, cfg.D)),
      da_(add("da", "[B_X,F_Y]", cfg.B, cfg.F)),
      dh_(add("dh", "[B_X,F_Y]", cfg.B, cfg.F)),
      dx_(add("dx", activation_spec(cfg.mode), cfg.B, cfg.D)),
      dW1_(add("dW1", "[D,F_Y]", cfg.D, cfg.F)),
      dW2_(add("dW2", "[F_Y,D]", cfg.F, cfg.D)) {
  if (ring()) {
    if (cfg.B % (static_cast<index_t>(X_) * Y_) != 0)
      throw InvalidArgument("--overlap needs B (" + std::to_string(cfg.B) +
                            ") to be a multiple of the mesh size " + std::to_string(X_ * Y_));
    model_ = mesh_.slice({"y"});
  }
}

template <Scalar T>
DistMatrix<T>& MlpBlock<T>::add(const std::string& name, const std::string& spec, index_t m,
                                index_t n) {
  std::string label = name;  // names in the notation are alphanumeric
  label.erase(std::remove(label.begin(), label.end(), '_'), label.end());
  auto [it, fresh] = owned_.try_emplace(name, mesh_, Layout(mesh_.shape(), m, n, label + spec));
  tensors_[name] = &it->second;
  order_.push_back(name);
  return it->second;
}

template <Scalar T>
void MlpBlock<T>::init() {
  const double sd = 1 / std::sqrt(double(c_.D)), sf = 1 / std::sqrt(double(c_.F));
  x_.fill([](index_t i, index_t j) { return scalar<T>(hash_uniform(1, i, j)); });
  W1_.fill([sd](index_t i, index_t j) { return scalar<T>(sd * hash_uniform(2, i, j)); });
  W2_.fill([sf](index_t i, index_t j) { return scalar<T>(sf * hash_uniform(3, i, j)); });
  dy_.fill([](index_t i, index_t j) { return scalar<T>(hash_uniform(4, i, j)); });
}

template <Scalar T>
double MlpBlock<T>::activation_words() const {  // (Y-1)/Y of this data shard's [B/X, D]
  return double(Y_ - 1) / Y_ * double(c_.B) / X_ * double(c_.D);
}

template <Scalar T>
double MlpBlock<T>::gradient_words() const {  // AllReduce_X of [D, F/Y]: 2 (X-1)/X of it
  return 2.0 * double(X_ - 1) / X_ * double(c_.D) * double(c_.F) / Y_;
}

template <Scalar T>
std::string MlpBlock<T>::on_model(const std::string& collective) const {
  return Y_ > 1 ? collective + "_Y" : "none";
}

template <Scalar T>
std::string MlpBlock<T>::on_data(const std::string& collective) const {
  return X_ > 1 ? collective + "_X" : "none";
}

template <Scalar T>
std::string MlpBlock<T>::both(const std::string& first, const std::string& second) {
  if (first == "none") return second;
  return second == "none" ? first : first + " + " + second;
}

template <Scalar T>
void MlpBlock<T>::forward(Tracker& tr) {
  const double act = activation_words();
  if (seqpar() && ring()) {  // x's row blocks circulate over Y, each multiplied on arrival
    ring_gemm(tr, {"h = x.W1", "ring AllGather_Y(x), overlapped", act}, RingForm::AllGatherA, Op::N,
              x_, W1_, h_);
  } else {  // seqpar: the sharding rules gather x over Y alone ([B_XY,D] -> [B_X,D])
    tr.gemm(Step{"h = x.W1", seqpar() ? on_model("AllGather") + "(x)" : "none", seqpar() ? act : 0},
            Op::N, Op::N, T(1), x_, W1_, T(0), h_, sharded());
  }
  tr.local(Step{"a = GeLU(h)"}, [&] { zip_local([](T& a, T h) { a = gelu(h); }, a_, h_); });
  reduce_over_model(tr, "y = a.W2", Op::N, a_, W2_, y_);
}

template <Scalar T>
void MlpBlock<T>::backward(Tracker& tr) {
  const double act = seqpar() ? activation_words() : 0, grad = gradient_words();
  // seqpar: every product that needs dy or x over the whole data shard gathers it over Y
  // itself (nothing gathered is kept between products, as Megatron-SP re-gathers x).
  const std::string gather_dy = seqpar() ? on_model("AllGather") + "(dy)" : "none";
  const std::string gather_x = seqpar() ? on_model("AllGather") + "(x)" : "none";
  tr.gemm(Step{"da = dy.W2^T", gather_dy, act}, Op::N, Op::T, T(1), dy_, W2_, T(0), da_, sharded());
  tr.gemm(Step{"dW2 = a^T.dy", both(gather_dy, on_data("AllReduce")), act + grad}, Op::T, Op::N,
          T(1), a_, dy_, T(0), dW2_, sharded());
  tr.local(Step{"dh = da*GeLU'(h)"},
           [&] { zip_local([](T& dh, T da, T h) { dh = da * gelu_grad(h); }, dh_, da_, h_); });
  reduce_over_model(tr, "dx = dh.W1^T", Op::T, dh_, W1_, dx_);
  tr.gemm(Step{"dW1 = x^T.dh", both(gather_x, on_data("AllReduce")), act + grad}, Op::T, Op::N,
          T(1), x_, dh_, T(0), dW1_, sharded());
}

// out <- A . op(B), contracting F, which is sharded over Y: the partial sums {U_Y} are reduced
// into out's layout. Sharded rules: local GEMM, then AllReduce_Y into [B_X,D] or
// ReduceScatter_Y into [B_XY,D]. Ring: matmul-ReduceScatter on the model axis into [B_XY,D]
// (the partial row blocks circulate, each shift overlapped with the next block's GEMM), then
// in allreduce mode an AllGather_Y back to [B_X,D] (ReduceScatter + AllGather = AllReduce).
template <Scalar T>
void MlpBlock<T>::reduce_over_model(Tracker& tr, const std::string& name, Op opB, DistMatrix<T>& A,
                                    DistMatrix<T>& Bm, DistMatrix<T>& out) {
  const double words = seqpar() ? activation_words() : 2 * activation_words();
  if (!ring()) {
    tr.gemm(Step{name, on_model(seqpar() ? "ReduceScatter" : "AllReduce"), words}, Op::N, opB, T(1),
            A, Bm, T(0), out, sharded());
    return;
  }
  const Step s{name,
               seqpar() ? "ring ReduceScatter_Y, overlapped" : "ring ReduceScatter_Y + AllGather_Y",
               words};
  // allreduce mode: out is replicated over Y, so gemm runs the ring into its own [B_XY,D]
  // tile and gathers it into out over Y (ReduceScatter + AllGather = AllReduce).
  ring_gemm(tr, s, RingForm::ReduceScatter, opB, A, Bm, out);
}

// C <- A . op(B) as the 1D ring ("collective matmul") on this rank's model-axis slice: every
// operand is viewed there with the data axis dropped (this data shard's rows only), so each
// data shard runs its own ring over Y and nothing crosses the data axis.
template <Scalar T>
GemmReport MlpBlock<T>::ring_gemm(Tracker& tr, const Step& s, RingForm form, Op opB,
                                  DistMatrix<T>& A, DistMatrix<T>& Bm, DistMatrix<T>& C) {
  Options o;
  o.algorithm = Algorithm::Ring;
  o.ring_axis = "y";
  o.ring_form = form;
  o.bidirectional = c_.bidirectional;
  const DistMatrix<T> a = model_view(A), b = model_view(Bm);
  DistMatrix<T> c = model_view(C);
  return tr.gemm(s, Op::N, opB, T(1), a, b, T(0), c, o);
}

// M's local tile as a matrix on the model-axis slice: X is dropped from M's sharding, and a
// dimension sharded over X keeps only this data shard's extent / X (B % (X Y) == 0 here).
template <Scalar T>
DistMatrix<T> MlpBlock<T>::model_view(DistMatrix<T>& M) {
  const Layout& L = M.layout();
  ShardingSpec s;
  s.name = L.spec().name;
  index_t extent[2] = {L.rows(), L.cols()};
  for (int d = 0; d < 2; ++d) {
    s.dims[d].label = L.spec().dims[d].label;
    for (int axis : L.dim_axes(d)) {
      if (L.mesh().names[axis] == "x") extent[d] /= X_;
      else s.dims[d].axes.push_back(L.mesh().names[axis]);
    }
    s.dims[d].kind = s.dims[d].axes.empty() ? DimSpec::Kind::Replicated : DimSpec::Kind::Block;
  }
  DistMatrix<T> v = DistMatrix<T>::view(*model_, Layout(model_->shape(), extent[0], extent[1], s),
                                        M.data(), M.ld());
  if (v.local_rows() != M.local_rows() || v.local_cols() != M.local_cols())
    throw InvalidArgument("model-axis view of " + L.to_string() + " does not match its tile");
  return v;
}

template <Scalar T>
std::string MlpBlock<T>::layouts() const {
  std::ostringstream out;
  for (const std::string& name : order_)
    out << "  " << std::left << std::setw(8) << name << tensors_.at(name)->layout().to_string()
        << "\n";
  return out.str();
}

template class MlpBlock<float>;
template class MlpBlock<double>;

}  // namespace shardmm::examples
