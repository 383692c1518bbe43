#include "dp_train/trainer.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace shardmm::examples {
namespace {

constexpr double kAdamBeta1 = 0.9, kAdamBeta2 = 0.999, kAdamEps = 1e-8;

Options sharded() {
  Options o;
  o.algorithm = Algorithm::Sharded;  // the JAX sharding rules insert the collectives
  return o;
}

// Synthetic regression data, a function of the global sample index only: features uniform in
// [-1, 1), targets t_k = sin(2 / sqrt(Din) sum_j c_kj x_j) of a fixed random teacher c.
double feature(index_t sample, index_t j) { return hash_uniform(31, sample, j); }

double teacher(index_t sample, index_t k, index_t din) {
  double s = 0;
  for (index_t j = 0; j < din; ++j) s += hash_uniform(32, k, j) * feature(sample, j);
  return std::sin(2.0 * s / std::sqrt(double(din)));
}

}  // namespace

template <Scalar T>
Trainer<T>::Trainer(const Mesh& mesh, const TrainConfig& cfg)
    : mesh_(mesh),
      c_(cfg),
      X_(mesh.axis_size("x")),
      Y_(mesh.axis_size("y")),
      X_in_(batch_matrix("X[B_X,J]", cfg.din)),
      target_(batch_matrix("t[B_X,J]", cfg.dout)),
      ones_(batch_matrix("one[B_X,J]", 1)),
      z1_(batch_matrix("z1[B_X,H_Y]", cfg.hidden)),
      h_(batch_matrix("h[B_X,H_Y]", cfg.hidden)),
      pred_(batch_matrix("pred[B_X,J]", cfg.dout)),
      dpred_(batch_matrix("dpred[B_X,J]", cfg.dout)),
      dh_(batch_matrix("dh[B_X,H_Y]", cfg.hidden)) {
  const double s1 = 1 / std::sqrt(double(cfg.din)), s2 = 1 / std::sqrt(double(cfg.hidden));
  p_.push_back(make_param("W1", "[I,H_Y]", "[I_X,H_Y]", cfg.din, cfg.hidden, 11, s1));
  p_.push_back(make_param("b1", "[I,H_Y]", "[I,H_YX]", 1, cfg.hidden, 0, 0));
  p_.push_back(make_param("W2", "[H_Y,J]", "[H_YX,J]", cfg.hidden, cfg.dout, 12, s2));
  p_.push_back(make_param("b2", "[I,J]", "[I,J_X]", 1, cfg.dout, 0, 0));
  ones_.fill([](index_t, index_t) { return T(1); });
}

template <Scalar T>
DistMatrix<T> Trainer<T>::batch_matrix(const std::string& spec, index_t cols) const {
  return DistMatrix<T>(mesh_, c_.batch, cols, spec);
}

// A parameter in its stored layout (working layout, or the FSDP shard), with its gradient and
// Adam moments in the same layout, initialised to scale * uniform[-1, 1) of (seed, i, j).
template <Scalar T>
typename Trainer<T>::Param Trainer<T>::make_param(const std::string& name,
                                                  const std::string& working,
                                                  const std::string& shard, index_t rows,
                                                  index_t cols, std::uint64_t seed, double scale) {
  const Layout stored(mesh_.shape(), rows, cols, name + (c_.fsdp ? shard : working));
  const Layout work(mesh_.shape(), rows, cols, name + working);
  const auto& c = mesh_.coords();
  Param p{name,
          DistMatrix<T>(mesh_, stored),
          DistMatrix<T>(mesh_, stored),
          DistMatrix<T>(mesh_, stored),
          DistMatrix<T>(mesh_, stored),
          double(work.local_rows(c)) * double(work.local_cols(c))};
  p.value.fill([&](index_t i, index_t j) { return scalar<T>(scale * hash_uniform(seed, i, j)); });
  return p;
}

template <Scalar T>
double Trainer<T>::step(int s, Tracker& tr) {
  load_batch(s, tr);
  const double loss = forward(tr);
  backward(tr);
  update(s + 1, tr);
  return loss;
}

template <Scalar T>
void Trainer<T>::load_batch(int s, Tracker& tr) {  // local: every rank fills its own rows
  const index_t first = index_t(s) * c_.batch, din = c_.din;
  tr.local(Step{"load batch"}, [&] {
    X_in_.fill([&](index_t i, index_t j) { return scalar<T>(feature(first + i, j)); });
    target_.fill([&](index_t i, index_t k) { return scalar<T>(teacher(first + i, k, din)); });
  });
}

// A product that uses parameter `id`: under FSDP the sharding rules gather its shard over X
// into the working layout first ((X-1)/X of the working tile), just in time, every time.
template <Scalar T>
Step Trainer<T>::gathering(const std::string& name, Id id) const {
  if (!c_.fsdp || X_ == 1) return Step{name};
  return Step{name, "AllGather_X(" + p_[id].name + ")", words_of(id, double(X_ - 1) / X_)};
}

template <Scalar T>
double Trainer<T>::forward(Tracker& tr) {
  const Options o = sharded();
  const bool relu = c_.activation == Activation::Relu;
  tr.gemm(gathering("z1 = X.W1", W1), Op::N, Op::N, T(1), X_in_, p_[W1].value, T(0), z1_, o);
  tr.gemm(gathering("z1 += 1.b1", b1), Op::N, Op::N, T(1), ones_, p_[b1].value, T(1), z1_, o);
  tr.local(Step{"h = act(z1)"}, [&] {
    zip_local([relu](T& h, T z) { h = relu ? std::max(z, T(0)) : std::tanh(z); }, h_, z1_);
  });
  const double tile = double(c_.batch) / X_ * double(c_.dout);  // this rank's pred rows
  Step pred = gathering("pred = h.W2", W2);
  if (Y_ > 1) {
    pred.collectives =
        pred.collectives == "none" ? "AllReduce_Y" : pred.collectives + " + AllReduce_Y";
    pred.formula_words += 2.0 * (Y_ - 1) / Y_ * tile;
  }
  tr.gemm(pred, Op::N, Op::N, T(1), h_, p_[W2].value, T(0), pred_, o);
  tr.gemm(gathering("pred += 1.b2", b2), Op::N, Op::N, T(1), ones_, p_[b2].value, T(1), pred_, o);
  double partial = 0;  // this rank's share of L = 1/(2B) sum (pred - t)^2
  const T inv_b = T(1) / T(c_.batch);
  tr.local(Step{"dpred = (pred - t) / B"}, [&] {
    zip_local(
        [&](T& d, T p, T t) {
          d = (p - t) * inv_b;
          partial += 0.5 * double(p - t) * double(p - t) / double(c_.batch);
        },
        dpred_, pred_, target_);
  });
  RedistStats moved;
  const double t0 = now_seconds();
  const double loss = sum_over(mesh_, {"x"}, partial, &moved);  // {U_X} scalar -> replicated
  const double dt = now_seconds() - t0;
  // The scalar travels as a double: report it in words of the tracker's size sizeof(T). An
  // AllReduce over X: 2 (X-1)/X of one word.
  tr.record(Step{"loss = sum over X", on_data("AllReduce"), 2.0 * (X_ - 1) / X_}, dt, dt,
            moved.bytes_received * std::int64_t(sizeof(T)) / std::int64_t(sizeof(double)));
  return loss;
}

// Weight and bias gradients contract the batch, sharded over X: gemm reduces the partial sums
// {U_X} into the gradient's layout (AllReduce_X replicated, ReduceScatter_X for FSDP shards).
template <Scalar T>
void Trainer<T>::backward(Tracker& tr) {
  const Options o = sharded();
  const bool fsdp = c_.fsdp, relu = c_.activation == Activation::Relu;
  const std::string red = on_data(fsdp ? "ReduceScatter" : "AllReduce");
  const double f = (fsdp ? 1.0 : 2.0) * double(X_ - 1) / X_;
  tr.gemm(Step{"dW2 = h^T.dpred", red, words_of(W2, f)}, Op::T, Op::N, T(1), h_, dpred_, T(0),
          p_[W2].grad, o);
  tr.gemm(Step{"db2 = 1^T.dpred", red, words_of(b2, f)}, Op::T, Op::N, T(1), ones_, dpred_, T(0),
          p_[b2].grad, o);
  tr.gemm(gathering("dh = dpred.W2^T", W2), Op::N, Op::T, T(1), dpred_, p_[W2].value, T(0), dh_, o);
  tr.local(Step{"dz1 = dh*act'(z1)"}, [&] {  // in place: dh becomes dz1
    zip_local([relu](T& d, T z, T h) { d *= relu ? T(z > T(0) ? 1 : 0) : T(1) - h * h; }, dh_, z1_,
              h_);
  });
  tr.gemm(Step{"dW1 = X^T.dz1", red, words_of(W1, f)}, Op::T, Op::N, T(1), X_in_, dh_, T(0),
          p_[W1].grad, o);
  tr.gemm(Step{"db1 = 1^T.dz1", red, words_of(b1, f)}, Op::T, Op::N, T(1), ones_, dh_, T(0),
          p_[b1].grad, o);
}

// Local: each rank updates the parameter elements it stores (all of them when replicated,
// its shard under FSDP, where the Adam moments are sharded too).
template <Scalar T>
void Trainer<T>::update(int t, Tracker& tr) {
  const bool adam = c_.optimizer == OptimizerKind::Adam;
  const T lr = scalar<T>(c_.lr), b1c = scalar<T>(1 - std::pow(kAdamBeta1, t)),
          b2c = scalar<T>(1 - std::pow(kAdamBeta2, t));
  tr.local(Step{adam ? "Adam update" : "SGD update"}, [&] {
    for (Param& p : p_)
      for (index_t j = 0; j < p.value.local_cols(); ++j)
        for (index_t i = 0; i < p.value.local_rows(); ++i) {
          T& w = p.value.local(i, j);
          const T g = p.grad.local(i, j);
          if (!adam) {
            w -= lr * g;
            continue;
          }
          T& m = p.m.local(i, j);
          T& v = p.v.local(i, j);
          m = T(kAdamBeta1) * m + T(1 - kAdamBeta1) * g;
          v = T(kAdamBeta2) * v + T(1 - kAdamBeta2) * g * g;
          w -= lr * (m / b1c) / (std::sqrt(v / b2c) + T(kAdamEps));
        }
  });
}

template <Scalar T>
double Trainer<T>::words_of(Id id, double factor) const {
  return factor * p_[id].working;
}

template <Scalar T>
std::string Trainer<T>::on_data(const std::string& collective) const {
  return X_ > 1 ? collective + "_X" : "none";
}

template <Scalar T>
std::vector<std::pair<std::string, std::vector<T>>> Trainer<T>::gather_params() const {
  std::vector<std::pair<std::string, std::vector<T>>> out;
  out.reserve(p_.size());
  for (const Param& p : p_) out.emplace_back(p.name, p.value.gather(0));
  return out;
}

template <Scalar T>
std::string Trainer<T>::layouts() const {
  std::ostringstream out;
  auto line = [&](const std::string& what, const DistMatrix<T>& M) {
    out << "  " << std::left << std::setw(10) << what << M.layout().to_string() << "\n";
  };
  for (const Param& p : p_) line(p.name, p.value);
  for (const DistMatrix<T>* M : {&X_in_, &target_, &ones_, &z1_, &h_, &pred_})
    line(M->layout().spec().name, *M);
  return out.str();
}

template class Trainer<float>;
template class Trainer<double>;

}  // namespace shardmm::examples
