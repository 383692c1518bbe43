// dp_train: data-parallel training (pmap semantics, or FSDP) of a two-layer MLP on a
// synthetic regression task; layouts and collectives in trainer.hpp and docs/EXAMPLES.md.
//
//   mpirun -n 4 dp_train [--mesh 4x1 | 2x2] [--fsdp] [--optimizer sgd|adam] [--steps 50]
//                        [--check] [--json FILE]
//
// Prints the loss curve and, per operation of a step, time, communication time and words
// received by rank 0 beside the guide's formula. --check trains the same model with the same
// global batches on rank 0 alone (a 1 x 1 mesh over MPI_COMM_SELF) and compares the loss
// curves and the final parameters; exit 3 on a mismatch or when the loss did not decrease.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "dp_train/trainer.hpp"

namespace shardmm::examples {
namespace {

struct Cli {
  TrainConfig model;
  std::string mesh, dtype = "f64", optimizer = "sgd", activation = "tanh", json;
  int steps = 50, log_every = 0;
  double tol = 0;
  bool check = false, quiet = false;
};

void add_options(CommandLine& cl, Cli& c) {
  cl.option("-B,--batch", c.model.batch, "global batch size", Check::Positive);
  cl.option("--din", c.model.din, "input features", Check::Positive);
  cl.option("--hidden", c.model.hidden, "hidden units", Check::Positive);
  cl.option("--dout", c.model.dout, "outputs", Check::Positive);
  cl.option("--steps", c.steps, "training steps", Check::Positive);
  cl.option("--lr", c.model.lr, "learning rate (default 0.1 sgd, 0.01 adam)", Check::Positive);
  cl.option("--optimizer", c.optimizer, "sgd|adam", {"sgd", "adam"});
  cl.option("--activation", c.activation, "tanh|relu", {"tanh", "relu"});
  cl.flag("--fsdp", c.model.fsdp, "shard parameters over the data axis (ZeRO-3 style)");
  cl.option("--mesh", c.mesh, "DATAxMODEL ranks, e.g. 2x2 (default: all ranks on data)");
  cl.option("--dtype", c.dtype, "f32|f64", {"f32", "f64"});
  cl.flag("--check", c.check, "compare with 1-rank training; exit 3 on mismatch");
  cl.option("--tol", c.tol, "max relative difference for --check (default 1e-9 f64, 1e-4 f32)");
  cl.option("--log-every", c.log_every, "print the loss every N steps (default: ~20 lines)");
  cl.option("--json", c.json, "append one JSON record to FILE");
  cl.flag("--quiet", c.quiet, "print only the check");
}

// Trains on rank 0 alone with the same global batches (plain replicated parameters) and
// compares loss curves and final parameters. Every rank returns rank 0's verdict.
template <Scalar T>
bool check(const Trainer<T>& dist, const std::vector<double>& losses, const TrainConfig& cfg,
           const Mesh& mesh, double tol) {
  const auto got = dist.gather_params();
  double failures = 0;
  if (mesh.rank() == 0) {
    const Mesh one(MPI_COMM_SELF, MeshShape({"x", "y"}, {1, 1}));
    TrainConfig rc = cfg;
    rc.fsdp = false;
    Trainer<T> ref(one, rc);
    Tracker ignored(sizeof(T));
    std::vector<double> want;
    want.reserve(losses.size());
    for (std::size_t s = 0; s < losses.size(); ++s) want.push_back(ref.step(int(s), ignored));
    const double loss_err = max_rel_error(losses, want);
    std::printf("check: loss curve max relative difference vs 1 rank %.3e (tolerance %.1e)\n",
                loss_err, tol);
    failures += loss_err <= tol ? 0 : 1;
    const auto ref_params = ref.gather_params();
    for (std::size_t k = 0; k < got.size(); ++k) {
      const double err = max_rel_error(got[k].second, ref_params[k].second);
      std::printf("check: %-3s after %zu steps: max relative difference %.3e\n",
                  got[k].first.c_str(), losses.size(), err);
      failures += err <= tol ? 0 : 1;
    }
    const bool learned = losses.back() < losses.front();
    std::printf("check: loss %.6g -> %.6g (%s)\n", losses.front(), losses.back(),
                learned ? "decreased" : "DID NOT DECREASE");
    failures += learned ? 0 : 1;
    std::printf("check: %s\n", failures == 0 ? "PASSED" : "FAILED");
  }
  return sum_over(mesh, {"x", "y"}, failures) == 0;
}

template <Scalar T>
void report(const Cli& cli, const Mesh& mesh, const Tracker& tr,
            const std::vector<double>& losses) {
  if (!cli.quiet) tr.print("operations");
  if (cli.json.empty()) return;
  nlohmann::json j = tr.to_json();
  j.update({{"example", "dp_train"},
            {"batch", cli.model.batch},
            {"din", cli.model.din},
            {"hidden", cli.model.hidden},
            {"dout", cli.model.dout},
            {"dtype", cli.dtype},
            {"mesh", mesh.shape().to_string()},
            {"ranks", mesh.size()},
            {"fsdp", cli.model.fsdp},
            {"optimizer", cli.optimizer},
            {"steps", cli.steps},
            {"losses", losses}});
  std::ofstream(cli.json, std::ios::app) << j.dump() << "\n";
}

template <Scalar T>
int run(Cli cli, const Mesh& world) {
  const Mesh mesh(MPI_COMM_WORLD, parse_mesh(cli.mesh, world.size()));
  TrainConfig& cfg = cli.model;
  cfg.optimizer = cli.optimizer == "adam" ? OptimizerKind::Adam : OptimizerKind::Sgd;
  cfg.activation = cli.activation == "relu" ? Activation::Relu : Activation::Tanh;
  const bool root = mesh.rank() == 0, talk = root && !cli.quiet;
  Trainer<T> trainer(mesh, cfg);
  if (talk)
    std::printf(
        "dp_train: MLP %lld -> %lld (%s) -> %lld, global batch %lld, %s lr %g, %s, mesh %s "
        "(x = data, y = model), parameters %s\nlayouts:\n%s",
        static_cast<long long>(cfg.din), static_cast<long long>(cfg.hidden), cli.activation.c_str(),
        static_cast<long long>(cfg.dout), static_cast<long long>(cfg.batch), cli.optimizer.c_str(),
        cfg.lr, cli.dtype.c_str(), mesh.shape().to_string().c_str(),
        cfg.fsdp ? "sharded over x (FSDP)" : "replicated (pmap)", trainer.layouts().c_str());
  const int every = cli.log_every > 0 ? cli.log_every : std::max(1, cli.steps / 20);
  Tracker tr(sizeof(T));
  std::vector<double> losses;
  for (int s = 0; s < cli.steps; ++s) {
    if (s == 1) tr.reset();  // the first step (allocations, first communicators) is warm-up
    losses.push_back(trainer.step(s, tr));
    tr.next_rep();
    if (talk && (s % every == 0 || s + 1 == cli.steps))
      std::printf("step %5d  loss %.10f\n", s, losses.back());
  }
  if (root) report<T>(cli, mesh, tr, losses);
  if (!cli.check) return 0;
  bool ok = check(trainer, losses, cfg, mesh, cli.tol > 0 ? cli.tol : default_tolerance<T>());
  // The formulas assume tiles that divide evenly (docs/EXAMPLES.md).
  const index_t X = mesh.axis_size("x"), Y = mesh.axis_size("y");
  if (cfg.batch % X == 0 && cfg.hidden % (X * Y) == 0 &&
      (!cfg.fsdp || (cfg.din % X == 0 && cfg.dout % X == 0)))
    ok = words_match(tr, mesh, "check") && ok;
  return ok ? 0 : 3;
}

}  // namespace
}  // namespace shardmm::examples

int main(int argc, char** argv) {
  using namespace shardmm::examples;
  try {
    CommandLine line("dp_train: data-parallel (pmap / FSDP) training of a small MLP", "dp_train");
    Cli cli;
    add_options(line, cli);
    return run_example(argc, argv, line, [&](const shardmm::Mesh& world) {
      if (!line.given("--lr") && cli.optimizer == "adam") cli.model.lr = 0.01;
      return cli.dtype == "f32" ? run<float>(cli, world) : run<double>(cli, world);
    });
  } catch (const std::exception&
               e) {  // setting up the command line failed (run_example catches the rest)
    (void)std::fprintf(stderr, "dp_train: error: %s\n", e.what());
    return 1;
  }
}
