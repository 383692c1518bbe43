// Local: every operand replicated on every rank; each rank computes the whole product with
// one BLAS call. No communication inside the algorithm (the front end's redistribution
// replicates the inputs). For tiny problems and single-rank meshes.
#include "algo/algo.hpp"
#include "blas/blas.hpp"

namespace shardmm::algo {

Setup local_setup(const Problem& p, const Options&) {
  Setup setup;
  setup.algorithm = Algorithm::Local;
  setup.A = Layout::replicated(p.mesh, p.opA == Op::N ? p.m : p.k, p.opA == Op::N ? p.k : p.m);
  setup.B = Layout::replicated(p.mesh, p.opB == Op::N ? p.k : p.n, p.opB == Op::N ? p.n : p.k);
  setup.C = Layout::replicated(p.mesh, p.m, p.n);
  setup.grid = "replicated on " + std::to_string(p.mesh.size()) + " rank(s)";
  setup.detail = "one local GEMM per rank";
  return setup;
}

template <Scalar T>
void local_run(const Operands<T>& x, const Setup&, const Options&, Timers& t) {
  prologue(x.C.mesh().comm(), [] {});  // nothing to allocate; C's redistribution may follow
  const index_t k = x.opA == Op::N ? x.A.cols() : x.A.rows();
  t.timed(&Timers::gemm, [&] {
    blas::gemm(x.opA, x.opB, x.C.local_rows(), x.C.local_cols(), k, x.alpha, x.A.data(), x.A.ld(),
               x.B.data(), x.B.ld(), x.beta, x.C.data(), x.C.ld());
  });
}

SHARDMM_INSTANTIATE_RUN(local_run)

}  // namespace shardmm::algo
