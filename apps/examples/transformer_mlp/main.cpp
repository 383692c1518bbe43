// transformer_mlp: one Transformer MLP block, y = GeLU(x . W1) . W2, forward and backward, on a
// data x model mesh (layouts and collectives: mlp_block.hpp, docs/EXAMPLES.md).
//
//   mpirun -n 4 transformer_mlp --mesh 2x2 -B 256 -D 512 -F 2048 [--mode seqpar] [--overlap]
//                               [--verify] [--json FILE]
//
// Prints every tensor's layout, then per operation: time, communication time, words received
// by rank 0 beside the guide's formula, and the communication share of the step. --verify
// recomputes the block on one rank (the same code on a 1 x 1 mesh over MPI_COMM_SELF),
// compares y, dx, dW1 and dW2, and checks the gradients by central differences (f64); the
// exit code is 3 when an error is above the tolerance.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "transformer_mlp/mlp_block.hpp"

namespace shardmm::examples {
namespace {

struct Cli {
  index_t B = 64, D = 64, F = 256;
  std::string mesh, mode = "allreduce", dtype = "f64", json;
  bool overlap = false, bidirectional = false, verify = false, quiet = false;
  int steps = 5, warmup = 1;
  double tol = 0;
};

void add_options(CommandLine& cl, Cli& c) {
  cl.option("-B,--batch", c.B, "tokens B (rows of x)", Check::Positive);
  cl.option("-D,--dmodel", c.D, "model width D", Check::Positive);
  cl.option("-F,--dff", c.F, "hidden width F", Check::Positive);
  cl.option("--mesh", c.mesh, "DATAxMODEL ranks, e.g. 2x2 (default: all ranks on data)");
  cl.option("--mode", c.mode, "allreduce: x,y [B_X,D]; seqpar: x,y [B_XY,D]",
            {"allreduce", "seqpar"});
  cl.flag("--overlap", c.overlap, "ring collective matmul on the model axis where it applies");
  cl.flag("--bidirectional", c.bidirectional, "ring AllGather form: halves travel both ways");
  cl.option("--dtype", c.dtype, "f32|f64", {"f32", "f64"});
  cl.option("--steps", c.steps, "timed forward+backward steps", Check::Positive);
  cl.option("--warmup", c.warmup, "untimed steps first", Check::NonNegative);
  cl.flag("--verify", c.verify, "compare with a 1-rank computation; exit 3 on mismatch");
  cl.option("--tol", c.tol, "max relative error for --verify (default 1e-9 f64, 1e-4 f32)");
  cl.option("--json", c.json, "append one JSON record to FILE");
  cl.flag("--quiet", c.quiet, "print only the verification");
}

// Central differences of L(x, W1, W2) = <y, dy> along a hashed direction V: returns
// |fd - g| / |g| with g = <dx, Vx> + <dW1, VW1> + <dW2, VW2> from the backward pass.
// One rank, after forward() and backward().
template <Scalar T>
double gradient_check(MlpBlock<T>& blk) {
  const std::vector<std::pair<std::string, std::string>> params = {
      {"x", "dx"}, {"W1", "dW1"}, {"W2", "dW2"}};
  double g = 0;
  for (std::size_t p = 0; p < params.size(); ++p)
    for_each_local(blk.tensor(params[p].second), [&](T& v, index_t i, index_t j) {
      g += double(v) * hash_uniform(10 + p, i, j);
    });
  auto loss_at = [&](double eps) {
    auto shift = [&](double by) {
      for (std::size_t p = 0; p < params.size(); ++p)
        for_each_local(blk.tensor(params[p].first), [&](T& v, index_t i, index_t j) {
          v += scalar<T>(by * hash_uniform(10 + p, i, j));
        });
    };
    shift(eps);
    Tracker ignored(sizeof(T));
    blk.forward(ignored);
    double L = 0;
    zip_local([&L](T& y, T dy) { L += double(y) * double(dy); }, blk.tensor("y"), blk.tensor("dy"));
    shift(-eps);
    return L;
  };
  const double eps = 1e-5, fd = (loss_at(eps) - loss_at(-eps)) / (2 * eps);
  return std::abs(fd - g) / std::max(std::abs(g), 1e-300);
}

// Gathers y, dx, dW1, dW2 to rank 0 and compares them with the same block computed there on
// a 1 x 1 mesh. All ranks return rank 0's verdict (shared with a library sum).
template <Scalar T>
bool verify(MlpBlock<T>& dist, const MlpConfig& cfg, const Mesh& mesh, double tol) {
  const std::vector<std::string> outputs = {"y", "dx", "dW1", "dW2"};
  std::vector<std::vector<T>> got;
  got.reserve(outputs.size());
  for (const auto& name : outputs) got.push_back(dist.tensor(name).gather(0));
  double failures = 0;
  if (mesh.rank() == 0) {
    const Mesh one(MPI_COMM_SELF, MeshShape({"x", "y"}, {1, 1}));
    MlpConfig rc = cfg;
    rc.mode = TpMode::AllReduce;
    rc.overlap = false;
    MlpBlock<T> ref(one, rc);
    ref.init();
    Tracker ignored(sizeof(T));
    ref.forward(ignored);
    ref.backward(ignored);
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      const double err = max_rel_error(got[k], ref.tensor(outputs[k]).gather(0));
      std::printf("verify: %-4s max relative error vs 1 rank %.3e (tolerance %.1e)\n",
                  outputs[k].c_str(), err, tol);
      failures += err <= tol ? 0 : 1;
    }
    if constexpr (std::is_same_v<T, double>) {
      const double fd = gradient_check(ref);
      std::printf(
          "verify: gradients vs central differences: relative error %.3e (tolerance 1e-5)\n", fd);
      failures += fd <= 1e-5 ? 0 : 1;
    }
    std::printf("verify: %s\n", failures == 0 ? "PASSED" : "FAILED");
  }
  return sum_over(mesh, {"x", "y"}, failures) == 0;
}

template <Scalar T>
void report(const Cli& cli, const Mesh& mesh, MlpBlock<T>& blk, const Tracker& tr) {
  const double flops = 12.0 * double(cli.B) * double(cli.D) * double(cli.F);  // 6 GEMMs
  const double t = tr.seconds_per_rep();
  if (!cli.quiet) {
    std::printf("transformer_mlp: B=%lld D=%lld F=%lld %s on mesh %s (x = data, y = model), "
                "mode %s, overlap %s\n",
                static_cast<long long>(cli.B), static_cast<long long>(cli.D),
                static_cast<long long>(cli.F), cli.dtype.c_str(), mesh.shape().to_string().c_str(),
                cli.mode.c_str(),
                cli.overlap ? (cli.bidirectional ? "bidirectional ring" : "ring") : "off");
    std::printf("layouts:\n%s", blk.layouts().c_str());
    tr.print("operations");
    std::printf("  %.3f ms per step, %.2f GFLOP/s per rank\n", 1e3 * t,
                flops / mesh.size() / t * 1e-9);
  }
  if (cli.json.empty()) return;
  nlohmann::json j = tr.to_json();
  j.update({{"example", "transformer_mlp"},
            {"B", cli.B},
            {"D", cli.D},
            {"F", cli.F},
            {"dtype", cli.dtype},
            {"mesh", mesh.shape().to_string()},
            {"ranks", mesh.size()},
            {"mode", cli.mode},
            {"overlap", cli.overlap},
            {"bidirectional", cli.bidirectional},
            {"gflops_per_rank", flops / mesh.size() / t * 1e-9}});
  std::ofstream(cli.json, std::ios::app) << j.dump() << "\n";
}

template <Scalar T>
int run(const Cli& cli, const Mesh& world) {
  const Mesh mesh(MPI_COMM_WORLD, parse_mesh(cli.mesh, world.size()));
  const MlpConfig cfg{cli.B,       cli.D,
                      cli.F,       cli.mode == "seqpar" ? TpMode::SeqParallel : TpMode::AllReduce,
                      cli.overlap, cli.bidirectional};
  MlpBlock<T> blk(mesh, cfg);
  blk.init();
  Tracker tr(sizeof(T));
  for (int s = 0; s < cli.warmup + cli.steps; ++s) {
    if (s == cli.warmup) tr.reset();
    blk.forward(tr);
    blk.backward(tr);
    tr.next_rep();
  }
  if (mesh.rank() == 0) report(cli, mesh, blk, tr);
  if (!cli.verify) return 0;
  bool ok = verify(blk, cfg, mesh, cli.tol > 0 ? cli.tol : default_tolerance<T>());
  // The formulas assume tiles that divide evenly (docs/EXAMPLES.md).
  const index_t X = mesh.axis_size("x"), Y = mesh.axis_size("y");
  if (cli.B % (X * Y) == 0 && cli.F % Y == 0) ok = words_match(tr, mesh, "verify") && ok;
  return ok ? 0 : 3;
}

}  // namespace
}  // namespace shardmm::examples

int main(int argc, char** argv) {
  using namespace shardmm::examples;
  try {
    CommandLine line("transformer_mlp: a Transformer MLP block on a data x model mesh",
                     "transformer_mlp");
    Cli cli;
    add_options(line, cli);
    return run_example(argc, argv, line, [&](const shardmm::Mesh& world) {
      return cli.dtype == "f32" ? run<float>(cli, world) : run<double>(cli, world);
    });
  } catch (const std::exception&
               e) {  // setting up the command line failed (run_example catches the rest)
    (void)std::fprintf(stderr, "transformer_mlp: error: %s\n", e.what());
    return 1;
  }
}
