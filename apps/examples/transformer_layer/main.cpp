// transformer_layer: a whole Transformer layer (causal multi-head attention, then the MLP),
// forward and backward, on a data x model mesh (layouts and collectives: layer.hpp,
// docs/EXAMPLES.md).
//
//   mpirun -n 4 transformer_layer --mesh 2x2 -N 8 -S 64 -D 256 -H 8 -F 1024 [--dtype bf16]
//                                 [--save DIR] [--check-words] [--json FILE]
//
// Prints every tensor's layout, then per operation: time, communication time, words received
// by rank 0 beside the formula, and the median step time. --save DIR writes the inputs and
// every output (y, dx, the weight gradients) as .npy (f32 for bf16, whose values it holds
// exactly) for python/examples/layer_reference.py --check-saved DIR, the NumPy reference.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "transformer_layer/layer.hpp"

namespace shardmm::examples {
namespace {

struct Cli {
  LayerConfig layer;
  std::string mesh, dtype = "f32", json, save;
  bool check_words = false, quiet = false;
  int steps = 5, warmup = 1;
};

void add_options(CommandLine& cl, Cli& c) {
  cl.option("-N,--sequences", c.layer.N, "sequences (the batch, split over the data axis)",
            Check::Positive);
  cl.option("-S,--seq", c.layer.S, "tokens per sequence", Check::Positive);
  cl.option("-D,--dmodel", c.layer.D, "model width D", Check::Positive);
  cl.option("-H,--heads", c.layer.H, "attention heads (D % H == 0; split over the model axis)",
            Check::Positive);
  cl.option("-F,--dff", c.layer.F, "MLP hidden width F", Check::Positive);
  cl.option("--mesh", c.mesh, "DATAxMODEL ranks, e.g. 2x2 (default: all ranks on data)");
  cl.option("--dtype", c.dtype, "f32|bf16|f64 (bf16: stored and moved in 16 bits, f32 sums)",
            {"f32", "bf16", "f64"});
  cl.option("--steps", c.steps, "timed forward+backward steps", Check::Positive);
  cl.option("--warmup", c.warmup, "untimed steps first", Check::NonNegative);
  cl.option("--save", c.save, "write inputs and outputs as DIR/<name>.npy");
  cl.flag("--check-words", c.check_words,
          "exit 3 unless every operation received the words of its formula (even sizes)");
  cl.option("--json", c.json, "append one JSON record to FILE");
  cl.flag("--quiet", c.quiet, "print only the median step time");
}

/// Writes `M` as DIR/name.npy (16-bit formats widened to f32, exactly). Collective.
template <Scalar T>
void save(const std::string& dir, const std::string& name, const DistMatrix<T>& M) {
  const std::string path = dir + "/" + name + ".npy";
  if constexpr (is_half_v<T>) {
    DistMatrix<float> wide(M.mesh(), M.layout());
    for (index_t j = 0; j < M.local_cols(); ++j)
      for (index_t i = 0; i < M.local_rows(); ++i) wide.local(i, j) = float(M.local(i, j));
    write_npy(path, wide);
  } else {
    write_npy(path, M);
  }
}

template <Scalar T>
void save_all(const std::string& dir, TransformerLayer<T>& layer) {
  std::error_code ignored;  // every rank may try; the directory existing afterwards is all
  std::filesystem::create_directories(dir, ignored);
  if (!std::filesystem::is_directory(dir)) throw IoError("cannot create directory " + dir);
  for (const auto* names :
       {&TransformerLayer<T>::input_names(), &TransformerLayer<T>::output_names()})
    for (const std::string& name : *names) save(dir, name, layer.tensor(name));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0 : (n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

template <Scalar T>
void report(const Cli& cli, const Mesh& mesh, TransformerLayer<T>& layer, const Tracker& tr,
            double step_seconds) {
  const LayerConfig& c = cli.layer;
  if (!cli.quiet) {
    std::printf("transformer_layer: N=%lld S=%lld D=%lld H=%lld F=%lld %s on mesh %s "
                "(x = data, y = model)\nlayouts:\n%s",
                static_cast<long long>(c.N), static_cast<long long>(c.S),
                static_cast<long long>(c.D), static_cast<long long>(c.H),
                static_cast<long long>(c.F), cli.dtype.c_str(), mesh.shape().to_string().c_str(),
                layer.layouts().c_str());
    tr.print("operations");
  }
  std::printf("  %.3f ms per step (median of %d)\n", 1e3 * step_seconds, cli.steps);
  if (cli.json.empty()) return;
  nlohmann::json j = tr.to_json();
  j.update({{"example", "transformer_layer"},
            {"N", c.N},
            {"S", c.S},
            {"D", c.D},
            {"H", c.H},
            {"F", c.F},
            {"dtype", cli.dtype},
            {"mesh", mesh.shape().to_string()},
            {"ranks", mesh.size()},
            {"median_step_ms", 1e3 * step_seconds}});
  std::ofstream(cli.json, std::ios::app) << j.dump() << "\n";
}

template <Scalar T>
int run(const Cli& cli, const Mesh& world) {
  const Mesh mesh(MPI_COMM_WORLD, parse_mesh(cli.mesh, world.size()));
  TransformerLayer<T> layer(mesh, cli.layer);
  layer.init();
  Tracker tr(sizeof(T));
  std::vector<double> steps;
  for (int s = 0; s < cli.warmup + cli.steps; ++s) {
    if (s == cli.warmup) tr.reset();
    (void)sum_over(mesh, {"x", "y"}, 0.0);  // every rank starts the step together
    const double t0 = now_seconds();
    layer.forward(tr);
    layer.backward(tr);
    tr.next_rep();
    if (s >= cli.warmup) steps.push_back(now_seconds() - t0);
  }
  if (mesh.rank() == 0) report(cli, mesh, layer, tr, median(steps));
  if (!cli.save.empty()) save_all(cli.save, layer);
  if (!cli.check_words) return 0;
  return words_match(tr, mesh, "check") ? 0 : 3;
}

}  // namespace
}  // namespace shardmm::examples

int main(int argc, char** argv) {
  using namespace shardmm::examples;
  try {
    CommandLine line("transformer_layer: a Transformer layer (attention + MLP) forward and "
                     "backward on a data x model mesh",
                     "transformer_layer");
    Cli cli;
    add_options(line, cli);
    return run_example(argc, argv, line, [&](const shardmm::Mesh& world) {
      if (cli.dtype == "bf16") return run<shardmm::bf16>(cli, world);
      return cli.dtype == "f32" ? run<float>(cli, world) : run<double>(cli, world);
    });
  } catch (const std::exception& e) {  // setting up the command line failed
    (void)std::fprintf(stderr, "transformer_layer: error: %s\n", e.what());
    return 1;
  }
}
