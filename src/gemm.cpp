// gemm front end: validate (global metadata only) -> resolve the planner's choices and build
// the algorithm's setup (front/resolve.cpp) -> check the memory budget -> redistribute
// operands into the setup's layouts where they differ -> run -> fold the result into the
// caller's C (alpha/beta folded into the final redistribution when C moves).
#include "shardmm/gemm.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "algo/algo.hpp"
#include "blas/blas.hpp"
#include "comm/agree.hpp"
#include "comm/traffic.hpp"
#include "comm/wait.hpp"
#include "comm/wire.hpp"
#include "core/fault.hpp"
#include "core/instantiate.hpp"
#include "front/planned.hpp"
#include "front/resolve.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/error.hpp"
#include "shardmm/redistribute.hpp"
#include "trace/call.hpp"

namespace shardmm {

std::string GemmReport::to_string() const {
  std::ostringstream s;
  s << shardmm::to_string(algorithm) << " on " << grid << " [" << detail << "]: sent " << bytes_sent
    << " B, received " << bytes_received << " B, " << messages << " messages"
    << " (redistribution " << redist_bytes_sent << " B sent); " << seconds_total << " s total, "
    << seconds_gemm << " s gemm, " << seconds_comm << " s comm wait, " << seconds_redist
    << " s redistribution";
  return s.str();
}

std::string GemmReport::to_json() const {
  return nlohmann::json{{"algorithm", shardmm::to_string(algorithm)},
                        {"grid", grid},
                        {"detail", detail},
                        {"bytes_sent", bytes_sent},
                        {"bytes_received", bytes_received},
                        {"messages", messages},
                        {"redist_bytes_sent", redist_bytes_sent},
                        {"redist_bytes_received", redist_bytes_received},
                        {"seconds_total", seconds_total},
                        {"seconds_gemm", seconds_gemm},
                        {"seconds_comm", seconds_comm},
                        {"seconds_redist", seconds_redist},
                        {"blas_threads", blas_threads}}
      .dump();
}

namespace {

template <Scalar T>
void run(const algo::Operands<T>& x, const algo::Setup& setup, const Options& o, algo::Timers& t) {
  switch (setup.algorithm) {
    case Algorithm::Local: return algo::local_run(x, setup, o, t);
    case Algorithm::Summa: return algo::summa_run(x, setup, o, t);
    case Algorithm::Cannon: return algo::cannon_run(x, setup, o, t);
    case Algorithm::Ring: return algo::ring_run(x, setup, o, t);
    case Algorithm::Sharded: return algo::sharded_run(x, setup, o, t);
    case Algorithm::Gemm25D: return algo::gemm25d_run(x, setup, o, t);
    case Algorithm::Strassen: return algo::strassen_run(x, setup, o, t, &front::sub_product<T>);
    case Algorithm::Auto: break;
  }
}

// Operand in the setup's layout: the caller's matrix itself, or a redistributed copy in
// workspace slot `slot` (allocated on every rank before anything moves). Callers pass named
// matrices that outlive the returned reference.
template <Scalar T>
const DistMatrix<T>& in_layout(const DistMatrix<T>& X, const Layout& L, memory::Slot slot,
                               std::optional<DistMatrix<T>>& tmp) {
  // NOLINTNEXTLINE(bugprone-return-const-ref-from-parameter): X is never a temporary here
  if (X.layout().same_distribution(L)) return X;
  comm::agreed(X.mesh().comm(), "redistribute",
               [&] { tmp.emplace(matrix::pooled<T>(X.mesh(), L, slot)); });
  const comm::OperandMoves operand;  // A or B: may travel in a 16-bit wire format
  redistribute(X, *tmp);
  return *tmp;
}

// Runs `setup` on the matrices' mesh: operands move into its layouts where they differ;
// when C moves, the algorithm writes a temporary and C <- C_tmp + beta C folds it back.
template <Scalar T>
GemmReport run_planned(const algo::Setup& setup, Op opA, Op opB, T alpha, const DistMatrix<T>& A,
                       const DistMatrix<T>& B, T beta, DistMatrix<T>& C, const Options& o) {
  GemmReport rep;
  rep.algorithm = setup.algorithm;
  rep.grid = setup.grid;
  rep.detail = setup.detail;
  const double t_start = algo::now();
  algo::Timers t;
  std::optional<DistMatrix<T>> At, Bt, Ct;
  const DistMatrix<T>& Aw = in_layout(A, setup.A, memory::Slot::OperandA, At);
  const DistMatrix<T>& Bw = in_layout(B, setup.B, memory::Slot::OperandB, Bt);
  const bool c_moves = !C.layout().same_distribution(setup.C);
  if (c_moves)  // the algorithm writes C with beta = 0, so the pooled tile's contents never matter
    comm::agreed(C.mesh().comm(), "redistribute",
                 [&] { Ct.emplace(matrix::pooled<T>(C.mesh(), setup.C, memory::Slot::OperandC)); });
  double redist = algo::now() - t_start;
  DistMatrix<T>& Cw = c_moves ? *Ct : C;
  {
    const comm::RedistributionRole algorithm_step(false);
    trace::Span span("multiply", trace::Cat::Phase);
    if (span) span.text("algorithm", to_string(setup.algorithm)).text("grid", setup.grid);
    run(algo::Operands<T>{opA, opB, alpha, Aw, Bw, c_moves ? T(0) : beta, Cw}, setup, o, t);
  }
  if (c_moves) {
    const double t0 = algo::now();
    redistribute(*Ct, C, T(1), beta);
    redist += algo::now() - t0;
  }
  rep.seconds_gemm = t.gemm;
  rep.seconds_comm = t.comm;
  rep.seconds_redist = redist + t.redist;
  return rep;
}

// Runs on the same ranks arranged as `shape`: operands move to the algorithm's layouts on
// that mesh, the product runs there, and C comes back with beta folded in.
template <Scalar T>
GemmReport run_remeshed(const MeshShape& shape, Op opA, Op opB, T alpha, const DistMatrix<T>& A,
                        const DistMatrix<T>& B, T beta, DistMatrix<T>& C, const Options& o,
                        const algo::Problem& p) {
  const Mesh M = C.mesh().reshaped(shape);
  const algo::Setup setup = front::make_setup(front::remeshed(p, shape), o);
  const double t0 = algo::now();
  std::optional<DistMatrix<T>> A2o, B2o, C2o;
  comm::agreed(M.comm(), "redistribute", [&] {
    A2o.emplace(matrix::pooled<T>(M, setup.A, memory::Slot::OperandA));
    B2o.emplace(matrix::pooled<T>(M, setup.B, memory::Slot::OperandB));
    C2o.emplace(matrix::pooled<T>(M, setup.C, memory::Slot::OperandC));
  });
  {
    const comm::OperandMoves operands;  // may travel in a 16-bit wire format
    redistribute(A, *A2o);
    redistribute(B, *B2o);
  }
  const double t1 = algo::now();
  GemmReport rep =
      run_planned(setup, opA, opB, alpha, *A2o, *B2o, T(0), *C2o, o);  // in place there
  const double t2 = algo::now();
  redistribute(*C2o, C, T(1), beta);
  rep.seconds_redist += (t1 - t0) + (algo::now() - t2);
  return rep;
}

// The call's plan, agreed by every rank: planning is pure except for the machine profile each
// rank reads (SHARDMM_PROFILE), so a profile one rank cannot read fails the call everywhere.
template <Scalar T>
front::Planned decide(const algo::Problem& p, const DistMatrix<T>& C, bool trivial,
                      const Options& options) {
  front::Planned d;
  auto plan = [&] { d = front::plan_product<T>(p, C.mesh(), trivial, options); };
  if (C.mesh().active()) comm::agreed(C.mesh().comm(), "plan", plan);
  else plan();
  return d;
}

}  // namespace

namespace front {

template <Scalar T>
Options wire_checked(const Options& options) {
  Options o = options;
  if (!std::is_same_v<T, float>) o.wire = Wire::F32;
  if (o.wire == Wire::F32) return o;
  if (o.algorithm == Algorithm::Strassen)
    throw NotSupported("Strassen-Winograd with a " + to_string(o.wire) +
                       " wire: its sums of operand blocks would be rounded too; use the f32 wire "
                       "or a classical algorithm");
  o.allow_fast = false;
  return o;
}

template <Scalar T>
Planned plan_product(const algo::Problem& p, const Mesh& mesh, bool trivial,
                     const Options& options) {
  const trace::Span span("plan", trace::Cat::Phase);
  Planned d{{options, std::nullopt, ""}, std::nullopt, trivial};
  fault::point("plan");
  check_options(options);  // also when nothing is left to choose
  if (trivial && options.algorithm == Algorithm::Auto) return d;  // nothing to choose
  const plan::Request q = request_for(p, mesh, dtype_of<T>(), options);
  d.how = resolve(p, q, options);
  if (d.how.remesh) return d;
  d.setup = make_setup(p, d.how.options);
  if (!trivial && options.algorithm != Algorithm::Auto) check_memory(p, *d.setup, q);
  return d;
}

template <Scalar T>
GemmReport run_product(const Planned& d, const algo::Problem& p, Op opA, Op opB, T alpha,
                       const DistMatrix<T>& A, const DistMatrix<T>& B, T beta, DistMatrix<T>& C) {
  const double t_start = algo::now();
  const Options& o = d.how.options;
  // The BLAS's thread count is process-wide: it stays so after the call (Options::blas_threads).
  if (o.blas_threads > 0) blas::set_num_threads(o.blas_threads);
  const comm::Traffic start = comm::traffic();
  const comm::Traffic redist_start = comm::redistribution_traffic();
  GemmReport rep;
  if (d.trivial) {  // k = 0 or alpha = 0: only scale C (beta == 0 never reads it)
    blas::scale(C.local_rows(), C.local_cols(), beta, C.data(), C.ld());
    if (d.setup)
      rep.algorithm = d.setup->algorithm, rep.grid = d.setup->grid, rep.detail = d.setup->detail;
    rep.detail = "k = 0 or alpha = 0: C scaled by beta";
  } else if (d.how.remesh) {
    rep = run_remeshed(*d.how.remesh, opA, opB, alpha, A, B, beta, C, o, p);
  } else {
    rep = run_planned(*d.setup, opA, opB, alpha, A, B, beta, C, o);
  }
  if (!d.how.why.empty()) rep.detail = d.how.why + "; " + rep.detail;
  const comm::Traffic total = comm::traffic() - start;
  const comm::Traffic redist = comm::redistribution_traffic() - redist_start;
  rep.redist_bytes_sent = redist.bytes_sent;
  rep.redist_bytes_received = redist.bytes_received;
  rep.bytes_sent = total.bytes_sent;
  rep.bytes_received = total.bytes_received;
  rep.messages = total.messages;
  rep.seconds_total = algo::now() - t_start;
  rep.blas_threads = blas::num_threads();
  return rep;
}

}  // namespace front

namespace {

// A validated product, its options wire_checked under their WireScope: the plan agreed by C's
// ranks, then the run; `span` (the call's, or a phase of the call that composes it) gets the
// shapes and the choice.
template <Scalar T>
GemmReport plan_and_run(const algo::Problem& p, Op opA, Op opB, T alpha, const DistMatrix<T>& A,
                        const DistMatrix<T>& B, T beta, DistMatrix<T>& C, const Options& options,
                        trace::Span& span) {
  if (span) span.arg("m", p.m).arg("n", p.n).arg("k", p.k).text("dtype", to_string(dtype_of<T>()));
  const double t_start = algo::now();  // the call's time includes planning
  const bool trivial = p.m == 0 || p.n == 0 || p.k == 0 || alpha == T(0);
  const front::Planned d = decide(p, C, trivial, options);
  GemmReport rep;
  if (d.setup)
    rep.algorithm = d.setup->algorithm, rep.grid = d.setup->grid, rep.detail = d.setup->detail;
  if (!C.mesh().active() || p.m == 0 || p.n == 0) return rep;
  rep = front::run_product(d, p, opA, opB, alpha, A, B, beta, C);
  rep.seconds_total = algo::now() - t_start;
  if (span) span.text("algorithm", to_string(rep.algorithm)).text("grid", rep.grid);
  return rep;
}

}  // namespace

namespace front {

template <Scalar T>
void sub_product(const algo::Operands<T>& x, const Options& o, algo::Timers& t) {
  const algo::Problem p = validate(x.opA, x.opB, x.A, x.B, x.C);
  const Options options = wire_checked<T>(o);
  const comm::WireScope wire(options.wire);
  trace::Span span("gemm", trace::Cat::Phase);  // a phase of the call that composes it
  const GemmReport rep =
      plan_and_run(p, x.opA, x.opB, x.alpha, x.A, x.B, x.beta, x.C, options, span);
  t.gemm += rep.seconds_gemm, t.comm += rep.seconds_comm, t.redist += rep.seconds_redist;
}

}  // namespace front

template <Scalar T>
GemmReport gemm(Op opA, Op opB, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
                DistMatrix<T>& C, const Options& caller_options) {
  const algo::Problem p = front::validate(opA, opB, A, B, C);
  const Options options = front::wire_checked<T>(caller_options);
  const comm::WireScope wire(options.wire);     // operands only: see comm/wire.hpp
  const comm::WaitScope waiting(options.wait);  // before the first message, on idle ranks too
  trace::Call call(C.mesh().active() ? C.mesh().comm() : MPI_COMM_NULL, "gemm", options.trace);
  const GemmReport rep = plan_and_run(p, opA, opB, alpha, A, B, beta, C, options, call.span());
  call.done();
  return rep;
}

template <Scalar T>
GemmReport gemm_dry_run(Op opA, Op opB, const DistMatrix<T>& A, const DistMatrix<T>& B,
                        const DistMatrix<T>& C, const Options& options) {
  const algo::Problem p = front::validate(opA, opB, A, B, C);
  const front::Resolved how =
      front::resolve(p, front::request_for(p, C.mesh(), dtype_of<T>(), options), options);
  const algo::Setup setup =
      front::make_setup(how.remesh ? front::remeshed(p, *how.remesh) : p, how.options);
  GemmReport rep;
  rep.algorithm = setup.algorithm;
  rep.grid = setup.grid;
  rep.detail = how.why.empty() ? setup.detail : how.why + "; " + setup.detail;
  return rep;
}

#define SHARDMM_INSTANTIATE(T)                                                                   \
  template Options front::wire_checked<T>(const Options&);                                       \
  template front::Planned front::plan_product<T>(const algo::Problem&, const Mesh&, bool,        \
                                                 const Options&);                                \
  template GemmReport front::run_product<T>(const front::Planned&, const algo::Problem&, Op, Op, \
                                            T, const DistMatrix<T>&, const DistMatrix<T>&, T,    \
                                            DistMatrix<T>&);                                     \
  template void front::sub_product<T>(const algo::Operands<T>&, const Options&, algo::Timers&);  \
  template GemmReport gemm<T>(Op, Op, T, const DistMatrix<T>&, const DistMatrix<T>&, T,          \
                              DistMatrix<T>&, const Options&);                                   \
  template GemmReport gemm_dry_run<T>(Op, Op, const DistMatrix<T>&, const DistMatrix<T>&,        \
                                      const DistMatrix<T>&, const Options&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm
