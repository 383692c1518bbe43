// gemm front end: validate (global metadata only) -> choose algorithm -> plan layouts ->
// redistribute operands into the plan's layouts where they differ -> run -> fold the result
// into the caller's C (alpha/beta folded into the final redistribution when C moves).
#include "shardmm/gemm.hpp"

#include <cctype>
#include <optional>
#include <sstream>

#include "algo/algo.hpp"
#include "blas/blas.hpp"
#include "comm/traffic.hpp"
#include "shardmm/error.hpp"
#include "shardmm/redistribute.hpp"

namespace shardmm {

std::string to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Auto: return "auto";
    case Algorithm::Local: return "local";
    case Algorithm::Summa: return "summa";
    case Algorithm::Cannon: return "cannon";
    case Algorithm::Ring: return "ring";
    case Algorithm::Sharded: return "sharded";
  }
  return "?";
}

Algorithm parse_algorithm(std::string_view text) {
  std::string t(text);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (Algorithm a : {Algorithm::Auto, Algorithm::Local, Algorithm::Summa, Algorithm::Cannon,
                      Algorithm::Ring, Algorithm::Sharded})
    if (to_string(a) == t) return a;
  throw InvalidArgument("unknown algorithm '" + std::string(text) +
                        "' (auto, local, summa, cannon, ring, sharded)");
}

std::string GemmReport::to_string() const {
  std::ostringstream s;
  s << shardmm::to_string(algorithm) << " on " << grid << " [" << detail << "]: sent "
    << bytes_sent << " B, received " << bytes_received << " B, " << messages << " messages"
    << " (redistribution " << redist_bytes_sent << " B sent); " << seconds_total << " s total, "
    << seconds_gemm << " s gemm, " << seconds_comm << " s comm wait, " << seconds_redist
    << " s redistribution";
  return s.str();
}

namespace {

std::string shape_str(Op op, const Layout& L) {
  return "op" + std::string(op == Op::N ? "" : "^" + to_string(op)) + " of " + L.to_string();
}

template <Scalar T>
algo::Problem validate(Op opA, Op opB, const DistMatrix<T>& A, const DistMatrix<T>& B,
                       const DistMatrix<T>& C) {
  const std::string all = "\n  A: " + shape_str(opA, A.layout()) + "\n  B: " +
                          shape_str(opB, B.layout()) + "\n  C: " + C.layout().to_string();
  if (!A.mesh().same_as(B.mesh()) || !A.mesh().same_as(C.mesh()))
    throw InvalidArgument("gemm: A, B and C must live on the same Mesh object" + all);
  algo::Problem p;
  p.opA = opA;
  p.opB = opB;
  p.m = opA == Op::N ? A.rows() : A.cols();
  p.k = opA == Op::N ? A.cols() : A.rows();
  const index_t kb = opB == Op::N ? B.rows() : B.cols();
  p.n = opB == Op::N ? B.cols() : B.rows();
  if (p.k != kb)
    throw DimensionMismatch("gemm: inner dimensions differ: op(A) is " + std::to_string(p.m) +
                            "x" + std::to_string(p.k) + ", op(B) is " + std::to_string(kb) + "x" +
                            std::to_string(p.n) + all);
  if (C.rows() != p.m || C.cols() != p.n)
    throw DimensionMismatch("gemm: C is " + std::to_string(C.rows()) + "x" +
                            std::to_string(C.cols()) + " but op(A)*op(B) is " +
                            std::to_string(p.m) + "x" + std::to_string(p.n) + all);
  if (A.layout().is_unreduced() || B.layout().is_unreduced())
    throw NotSupported("gemm: unreduced (pending-sum) inputs must be reduced first" + all);
  p.A = A.layout();
  p.B = B.layout();
  p.C = C.layout();
  p.mesh = A.mesh().shape();
  return p;
}

// The documented Auto rule (docs/ALGORITHMS.md): one rank -> local; 1D mesh -> ring;
// square 2D mesh whose block layouts already fit Cannon -> cannon; otherwise SUMMA.
Algorithm choose_auto(const algo::Problem& p) {
  if (p.mesh.size() == 1) return Algorithm::Local;
  if (p.mesh.ndims() == 1) return Algorithm::Ring;
  return Algorithm::Summa;
}

algo::Plan make_plan(Algorithm a, const algo::Problem& p, const Options& o) {
  switch (a) {
    case Algorithm::Local: return algo::local_plan(p, o);
    case Algorithm::Summa: return algo::summa_plan(p, o);
    case Algorithm::Cannon: return algo::cannon_plan(p, o);
    case Algorithm::Ring: return algo::ring_plan(p, o);
    case Algorithm::Sharded: return algo::sharded_plan(p, o);
    case Algorithm::Auto: break;
  }
  throw InvalidArgument("gemm: no plan for algorithm " + to_string(a));
}

template <Scalar T>
void run(const algo::Operands<T>& x, const algo::Plan& plan, const Options& o, algo::Timers& t) {
  switch (plan.algorithm) {
    case Algorithm::Local: return algo::local_run(x, plan, o, t);
    case Algorithm::Summa: return algo::summa_run(x, plan, o, t);
    case Algorithm::Cannon: return algo::cannon_run(x, plan, o, t);
    case Algorithm::Ring: return algo::ring_run(x, plan, o, t);
    case Algorithm::Sharded: return algo::sharded_run(x, plan, o, t);
    case Algorithm::Auto: break;
  }
}

// Operand in the plan's layout: the caller's matrix itself, or a redistributed copy.
template <Scalar T>
const DistMatrix<T>& in_layout(const DistMatrix<T>& X, const Layout& L,
                               std::optional<DistMatrix<T>>& tmp) {
  if (X.layout().same_distribution(L)) return X;
  tmp.emplace(redistribute(X, L));
  return *tmp;
}

}  // namespace

template <Scalar T>
GemmReport gemm(Op opA, Op opB, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
                DistMatrix<T>& C, const Options& o) {
  const algo::Problem p = validate(opA, opB, A, B, C);
  GemmReport rep;
  const Algorithm chosen = o.algorithm == Algorithm::Auto ? choose_auto(p) : o.algorithm;
  const algo::Plan plan = make_plan(chosen, p, o);  // may throw NotSupported: before any MPI
  rep.algorithm = plan.algorithm;
  rep.grid = plan.grid;
  rep.detail = plan.detail;
  if (!C.mesh().active() || p.m == 0 || p.n == 0) return rep;
  const double t_start = algo::now();
  const comm::Traffic start = comm::traffic();
  if (p.k == 0 || alpha == T(0)) {  // only scale C (beta == 0 never reads it)
    blas::scale(C.local_rows(), C.local_cols(), beta, C.data(), C.ld());
    rep.detail = "k = 0 or alpha = 0: C scaled by beta";
    rep.seconds_total = algo::now() - t_start;
    return rep;
  }
  algo::Timers t;
  std::optional<DistMatrix<T>> At, Bt, Ct;
  const DistMatrix<T>& Aw = in_layout(A, plan.A, At);
  const DistMatrix<T>& Bw = in_layout(B, plan.B, Bt);
  const bool c_moves = !C.layout().same_distribution(plan.C);
  if (c_moves) Ct.emplace(C.mesh(), plan.C);
  double redist = algo::now() - t_start;
  comm::Traffic redist_traffic = comm::traffic() - start;
  DistMatrix<T>& Cw = c_moves ? *Ct : C;
  run(algo::Operands<T>{opA, opB, alpha, Aw, Bw, c_moves ? T(0) : beta, Cw}, plan, o, t);
  if (c_moves) {
    const double t0 = algo::now();
    const comm::Traffic before = comm::traffic();
    redistribute(*Ct, C, T(1), beta);
    redist += algo::now() - t0;
    redist_traffic += comm::traffic() - before;
  }
  const comm::Traffic total = comm::traffic() - start;
  rep.bytes_sent = total.bytes_sent;
  rep.bytes_received = total.bytes_received;
  rep.messages = total.messages;
  rep.redist_bytes_sent = redist_traffic.bytes_sent;
  rep.redist_bytes_received = redist_traffic.bytes_received;
  rep.seconds_gemm = t.gemm;
  rep.seconds_comm = t.comm;
  rep.seconds_redist = redist;
  rep.seconds_total = algo::now() - t_start;
  return rep;
}

#define SHARDMM_INSTANTIATE(T)                                                               \
  template GemmReport gemm<T>(Op, Op, T, const DistMatrix<T>&, const DistMatrix<T>&, T,      \
                              DistMatrix<T>&, const Options&);
SHARDMM_INSTANTIATE(float)
SHARDMM_INSTANTIATE(double)
SHARDMM_INSTANTIATE(std::complex<float>)
SHARDMM_INSTANTIATE(std::complex<double>)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm
