#include "transformer_layer/layer.hpp"

#include <cmath>
#include <iomanip>
#include <numbers>
#include <sstream>

namespace shardmm::examples {
namespace {

template <Scalar T>
using Arith = std::conditional_t<is_half_v<T>, float, T>;  // elementwise arithmetic type

// GeLU (tanh approximation) and its derivative.
constexpr double kTanhGeluC = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kTanhGeluA = 0.044715;

template <class A>
A gelu_value(A v) {
  return A(0.5) * v * (A(1) + std::tanh(A(kTanhGeluC) * (v + A(kTanhGeluA) * v * v * v)));
}

template <class A>
A gelu_slope(A v) {
  const A t = std::tanh(A(kTanhGeluC) * (v + A(kTanhGeluA) * v * v * v));
  const A du = A(kTanhGeluC) * (A(1) + A(3 * kTanhGeluA) * v * v);
  return A(0.5) * (A(1) + t) + A(0.5) * v * (A(1) - t * t) * du;
}

/// The three input projections q = x.Wq, k = x.Wk, v = x.Wv: names of their tensors and steps.
struct Projection {
  const char *out, *weight, *forward, *grad, *weight_grad, *weight_grad_step, *input_grad_step;
};
constexpr Projection kProjections[] = {
    {"q", "Wq", "q = x.Wq", "dq", "dWq", "dWq = x^T.dq", "dx += dq.Wq^T"},
    {"k", "Wk", "k = x.Wk", "dk", "dWk", "dWk = x^T.dk", "dx += dk.Wk^T"},
    {"v", "Wv", "v = x.Wv", "dv", "dWv", "dWv = x^T.dv", "dx += dv.Wv^T"}};

/// cfg, after checking on global metadata that sequences and heads are whole on every rank.
LayerConfig checked(const Mesh& mesh, const LayerConfig& c) {
  const index_t X = mesh.axis_size("x"), Y = mesh.axis_size("y");
  if (c.N % X != 0 || c.H % Y != 0 || c.H <= 0 || c.D % c.H != 0)
    throw InvalidArgument(
        "transformer_layer: need N % X == 0, H % Y == 0 and D % H == 0 (N=" + std::to_string(c.N) +
        " X=" + std::to_string(X) + " H=" + std::to_string(c.H) + " Y=" + std::to_string(Y) +
        " D=" + std::to_string(c.D) + ")");
  return c;
}

}  // namespace

template <Scalar T>
TransformerLayer<T>::TransformerLayer(const Mesh& mesh, const LayerConfig& cfg)
    : mesh_(mesh),
      c_(checked(mesh, cfg)),
      X_(mesh.axis_size("x")),
      Y_(mesh.axis_size("y")),
      attention_(mesh, c_.N, c_.H, c_.S, c_.D / c_.H) {
  const index_t B = c_.N * c_.S, D = c_.D, F = c_.F;
  for (const char* n : {"x", "x1", "y", "dy", "dx1", "dx", "attn", "m"}) add(n, "[B_X,D]", B, D);
  for (const char* n : {"Wq", "Wk", "Wv", "dWq", "dWk", "dWv"}) add(n, "[D,E_Y]", D, D);
  for (const char* n : {"Wo", "dWo"}) add(n, "[E_Y,D]", D, D);
  for (const char* n : {"W1", "dW1"}) add(n, "[D,F_Y]", D, F);
  for (const char* n : {"W2", "dW2"}) add(n, "[F_Y,D]", F, D);
  for (const char* n : {"q", "k", "v", "o", "do", "dq", "dk", "dv"}) add(n, "[B_X,E_Y]", B, D);
  for (const char* n : {"h", "a", "da", "dh"}) add(n, "[B_X,F_Y]", B, F);
}

template <Scalar T>
DistMatrix<T>& TransformerLayer<T>::add(const std::string& name, const std::string& spec, index_t m,
                                        index_t n) {
  std::string label;  // names in the notation are alphanumeric: x1 -> x1, dWq -> dWq
  for (char ch : name) label += std::isalnum(static_cast<unsigned char>(ch)) ? ch : 'x';
  order_.push_back(name);
  return owned_.try_emplace(name, mesh_, Layout(mesh_.shape(), m, n, label + spec)).first->second;
}

template <Scalar T>
const std::vector<std::string>& TransformerLayer<T>::input_names() {
  static const std::vector<std::string> names = {"x", "Wq", "Wk", "Wv", "Wo", "W1", "W2", "dy"};
  return names;
}

template <Scalar T>
const std::vector<std::string>& TransformerLayer<T>::output_names() {
  static const std::vector<std::string> names = {"y",   "dx",  "dWq", "dWk",
                                                 "dWv", "dWo", "dW1", "dW2"};
  return names;
}

template <Scalar T>
void TransformerLayer<T>::init() {
  const std::vector<std::pair<std::string, double>> scaled = {{"x", 1.0},
                                                              {"Wq", 1 / std::sqrt(double(c_.D))},
                                                              {"Wk", 1 / std::sqrt(double(c_.D))},
                                                              {"Wv", 1 / std::sqrt(double(c_.D))},
                                                              {"Wo", 1 / std::sqrt(double(c_.D))},
                                                              {"W1", 1 / std::sqrt(double(c_.D))},
                                                              {"W2", 1 / std::sqrt(double(c_.F))},
                                                              {"dy", 1.0}};
  for (std::size_t s = 0; s < scaled.size(); ++s) {
    const double sd = std::numbers::sqrt3 * scaled[s].second;  // uniform [-1, 1) has variance 1/3
    t(scaled[s].first).fill([sd, s](index_t i, index_t j) {
      return static_cast<T>(sd * hash_uniform(20 + s, i, j));
    });
  }
}

// C <- op(A) op(B) + beta C with the sharding rules, recorded in `tr` under `s`.
template <Scalar T>
void TransformerLayer<T>::product(Tracker& tr, const Step& s, Op opA, Op opB, const std::string& A,
                                  const std::string& B, double beta, const std::string& C) {
  Options o;
  o.algorithm = Algorithm::Sharded;  // the JAX sharding rules insert the collectives
  const GemmReport r = layer_gemm(opA, opB, 1.0, t(A), t(B), beta, t(C), o);
  tr.record(s, r.seconds_total, r.seconds_comm + r.seconds_redist, r.bytes_received);
}

// A product whose contraction is sharded over Y into a [B_X, D] result replicated over Y:
// AllReduce_Y of this data shard's [T/X, D], 2 (Y-1)/Y of it. The partial sums travel in f32
// for the 16-bit formats: twice the words of the storage type.
template <Scalar T>
Step TransformerLayer<T>::on_model(const std::string& name) const {
  const double partial = is_half_v<T> ? 2.0 : 1.0;
  const double words = 2.0 * (Y_ - 1) / Y_ * double(c_.N * c_.S) / X_ * double(c_.D) * partial;
  return {name, Y_ > 1 ? "AllReduce_Y" : "none", words};
}

// A weight gradient rows x cols sharded over Y on one side, summed over the data axis.
template <Scalar T>
Step TransformerLayer<T>::on_data(const std::string& name, index_t rows, index_t cols) const {
  const double partial = is_half_v<T> ? 2.0 : 1.0;
  const double words = 2.0 * (X_ - 1) / X_ * double(rows) * double(cols) / Y_ * partial;
  return {name, X_ > 1 ? "AllReduce_X" : "none", words};
}

template <Scalar T>
void TransformerLayer<T>::forward(Tracker& tr) {
  for (const auto& p : kProjections)  // column-parallel: every model rank its heads
    product(tr, {p.forward}, Op::N, Op::N, "x", p.weight, 0, p.out);
  const double t0 = now_seconds();  // batched per-head products: nothing moves
  const std::int64_t bytes = attention_.forward(t("q"), t("k"), t("v"), t("o"));
  tr.record(Step{"o = softmax(q.k^T) v (heads)"}, now_seconds() - t0, 0, bytes);
  product(tr, on_model("attn = o.Wo"), Op::N, Op::N, "o", "Wo", 0, "attn");
  tr.local(Step{"x1 = x + attn"}, [&] {
    zip_local([](T& x1, T x, T at) { x1 = T(Arith<T>(x) + Arith<T>(at)); }, t("x1"), t("x"),
              t("attn"));
  });
  product(tr, {"h = x1.W1"}, Op::N, Op::N, "x1", "W1", 0, "h");
  tr.local(Step{"a = GeLU(h)"},
           [&] { zip_local([](T& a, T h) { a = T(gelu_value(Arith<T>(h))); }, t("a"), t("h")); });
  product(tr, on_model("m = a.W2"), Op::N, Op::N, "a", "W2", 0, "m");
  tr.local(Step{"y = x1 + m"}, [&] {
    zip_local([](T& y, T x1, T m) { y = T(Arith<T>(x1) + Arith<T>(m)); }, t("y"), t("x1"), t("m"));
  });
}

template <Scalar T>
void TransformerLayer<T>::backward(Tracker& tr) {
  const index_t D = c_.D, F = c_.F;
  product(tr, on_data("dW2 = a^T.dy", F, D), Op::T, Op::N, "a", "dy", 0, "dW2");
  product(tr, {"da = dy.W2^T"}, Op::N, Op::T, "dy", "W2", 0, "da");
  tr.local(Step{"dh = da*GeLU'(h)"}, [&] {
    zip_local([](T& dh, T da, T h) { dh = T(Arith<T>(da) * gelu_slope(Arith<T>(h))); }, t("dh"),
              t("da"), t("h"));
  });
  product(tr, on_data("dW1 = x1^T.dh", D, F), Op::T, Op::N, "x1", "dh", 0, "dW1");
  product(tr, on_model("dx1 = dh.W1^T"), Op::N, Op::T, "dh", "W1", 0, "dx1");
  tr.local(Step{"dx1 += dy"}, [&] {
    zip_local([](T& d, T dy) { d = T(Arith<T>(d) + Arith<T>(dy)); }, t("dx1"), t("dy"));
  });
  product(tr, on_data("dWo = o^T.dx1", D, D), Op::T, Op::N, "o", "dx1", 0, "dWo");
  product(tr, {"do = dx1.Wo^T"}, Op::N, Op::T, "dx1", "Wo", 0, "do");
  const double t0 = now_seconds();
  const std::int64_t bytes = attention_.backward(t("do"), t("dq"), t("dk"), t("dv"));
  tr.record(Step{"dq, dk, dv (heads)"}, now_seconds() - t0, 0, bytes);
  attention_backward_projections(tr);
}

// dW = x^T.d (AllReduce_X) and dx = dx1 + sum of d.W^T (AllReduce_Y each) for q, k and v.
template <Scalar T>
void TransformerLayer<T>::attention_backward_projections(Tracker& tr) {
  tr.local(Step{"dx = dx1"}, [&] { zip_local([](T& dx, T dx1) { dx = dx1; }, t("dx"), t("dx1")); });
  for (const auto& p : kProjections) {
    product(tr, on_data(p.weight_grad_step, c_.D, c_.D), Op::T, Op::N, "x", p.grad, 0,
            p.weight_grad);
    product(tr, on_model(p.input_grad_step), Op::N, Op::T, p.grad, p.weight, 1.0, "dx");
  }
}

template <Scalar T>
std::string TransformerLayer<T>::layouts() const {
  std::ostringstream out;
  for (const std::string& name : order_)
    out << "  " << std::left << std::setw(6) << name << owned_.at(name).layout().to_string()
        << "\n";
  return out.str();
}

template class TransformerLayer<float>;
template class TransformerLayer<double>;
template class TransformerLayer<bf16>;

}  // namespace shardmm::examples
