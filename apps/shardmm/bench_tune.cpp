// --tune-scalapack: ScaLAPACK gets its best grid and block size among the sensible ones
// (every factorisation P = p x q, nb in 64..256) before it is compared with shardmm, which
// then runs on the same grid and the same bc(nb, nb) inputs.
#include <cstdio>

#include "bench.hpp"
#include "bench_util.hpp"
#include "commands.hpp"
#include "mpi_util.hpp"
#include "scalapack_ref.hpp"

namespace shardmm::cli {
namespace {

struct Choice {
  int p = 0, q = 0;
  index_t nb = 0;
  double median = 1e300;
};

// Median time of p?gemm on a p x q grid with bc(nb, nb) operands.
template <Scalar T>
double time_scalapack(const BenchConfig& cfg, int p, int q, index_t nb) {
  const Mesh mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {p, q}));
  const Op opA = cfg.transa, opB = cfg.transb;
  auto bc = [&](index_t r, index_t c) { return Layout::block_cyclic(mesh.shape(), r, c, nb, nb); };
  DistMatrix<T> A(mesh, opA == Op::N ? bc(cfg.m, cfg.k) : bc(cfg.k, cfg.m));
  DistMatrix<T> B(mesh, opB == Op::N ? bc(cfg.k, cfg.n) : bc(cfg.n, cfg.k));
  DistMatrix<T> C(mesh, bc(cfg.m, cfg.n));
  A.fill([](index_t i, index_t j) { return bench::entry<T>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return bench::entry<T>(i, j, 2); });
  const BlacsGrid grid(mesh.comm(), p, q);
  const T alpha = bench::value_from<T>(cfg.alpha), beta = bench::value_from<T>(cfg.beta);
  std::vector<double> times;
  const int reps = std::min(cfg.reps, 3);
  for (int r = 0; r < 1 + reps; ++r) {
    SHARDMM_CLI_MPI(MPI_Barrier(mesh.comm()));
    const double t0 = MPI_Wtime();
    scalapack_gemm(grid, opA, opB, alpha, A, B, beta, C);
    const double t = bench::max_over(MPI_Wtime() - t0, mesh.comm());
    if (r > 0) times.push_back(t);
  }
  return bench::median(times);
}

template <Scalar T>
int tune(const BenchConfig& cfg) {
  int P = 1, me = 0;
  SHARDMM_CLI_MPI(MPI_Comm_size(MPI_COMM_WORLD, &P));
  SHARDMM_CLI_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  if (cfg.blas_threads > 0) set_blas_threads(cfg.blas_threads);
  Choice best;
  for (int p = 1; p <= P; ++p) {
    if (P % p != 0) continue;
    for (const index_t nb : {64, 128, 256}) {
      const double t = time_scalapack<T>(cfg, p, P / p, nb);
      if (me == 0 && !cfg.quiet)
        std::printf("scalapack grid %dx%d nb %lld: median %.4f s\n", p, P / p, (long long)nb, t);
      if (t < best.median) best = {p, P / p, nb, t};
    }
  }
  if (me == 0)
    std::printf("scalapack best: grid %dx%d nb %lld median %.4f s\n", best.p, best.q,
                (long long)best.nb, best.median);
  return 0;
}

}  // namespace

int run_tune_scalapack(const BenchConfig& cfg) {
  return bench::with_dtype(cfg.dtype, [&]<Scalar T>() { return tune<T>(cfg); });
}

}  // namespace shardmm::cli
