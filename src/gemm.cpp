// gemm front end: validate (global metadata only) -> choose algorithm -> plan layouts ->
// redistribute operands into the plan's layouts where they differ -> run -> fold the result
// into the caller's C (alpha/beta folded into the final redistribution when C moves).
#include "shardmm/gemm.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>

#include "algo/algo.hpp"
#include "blas/blas.hpp"
#include "comm/agree.hpp"
#include "comm/traffic.hpp"
#include "core/fault.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/error.hpp"
#include "shardmm/plan.hpp"
#include "shardmm/redistribute.hpp"
#include "core/instantiate.hpp"

namespace shardmm {

std::string to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Auto: return "auto";
    case Algorithm::Local: return "local";
    case Algorithm::Summa: return "summa";
    case Algorithm::Cannon: return "cannon";
    case Algorithm::Ring: return "ring";
    case Algorithm::Sharded: return "sharded";
    case Algorithm::Gemm25D: return "25d";
  }
  return "?";
}

Algorithm parse_algorithm(std::string_view text) {
  std::string t(text);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (Algorithm a : {Algorithm::Auto, Algorithm::Local, Algorithm::Summa, Algorithm::Cannon,
                      Algorithm::Ring, Algorithm::Sharded, Algorithm::Gemm25D})
    if (to_string(a) == t) return a;
  throw InvalidArgument("unknown algorithm '" + std::string(text) +
                        "' (auto, local, summa, cannon, ring, sharded, 25d)");
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

// Auto: the planner (src/plan/) picks algorithm and grid; the choice becomes explicit
// options, plus the mesh shape to run on when it differs from the caller's mesh.
struct Resolved {
  Options options;
  std::optional<MeshShape> remesh;
  std::string why;
};

bool on_caller_grid(const algo::Problem& p) {
  if (p.mesh.ndims() != 2) return false;
  const algo::Setup s = algo::summa_setup(p, Options{});
  return s.A.same_distribution(p.A) && s.B.same_distribution(p.B) && s.C.same_distribution(p.C);
}

// True when the mesh is a line: exactly one axis longer than 1 (a 1 x P grid included).
bool is_line(const MeshShape& mesh) { return mesh.long_axes().size() == 1; }

// Which operands each ring form would use as they are on the caller's line.
void ring_fits(const algo::Problem& p, PlanRequest& q) {
  if (!is_line(p.mesh)) return;
  for (RingForm f : {RingForm::AllGatherA, RingForm::AllGatherB, RingForm::ReduceScatter}) {
    Options o;
    o.ring_form = f;
    const algo::Setup r = algo::ring_setup(p, o);
    q.ring_in_place[static_cast<int>(f) - 1] = {r.A.same_distribution(p.A), r.B.same_distribution(p.B),
                                               r.C.same_distribution(p.C)};
    q.ring_streamed[static_cast<int>(f) - 1] = r.ring_stream;
  }
}

// SUMMA C-stationary on the caller's grid: process (i, j) receives op(A)'s panels it lacks
// (its C rows x the k that process column j does not hold) and op(B)'s (its C columns x the k
// process row i does not hold). The busiest rank's words, from the actual tile extents.
double summa_words_in_place(const algo::Problem& p) {
  const DimMap &rows = p.C.row_map(), &cols = p.C.col_map();
  const DimMap &ka = p.A.map(p.opA == Op::N ? 1 : 0), &kb = p.B.map(p.opB == Op::N ? 0 : 1);  // k as stored
  double most = 0;
  for (int i = 0; i < rows.nprocs; ++i)
    for (int j = 0; j < cols.nprocs; ++j)
      most = std::max(most, double(rows.local_extent(i)) * double(p.k - ka.local_extent(j)) +
                                double(cols.local_extent(j)) * double(p.k - kb.local_extent(i)));
  return most;
}

// What the caller's layouts save: SUMMA on the caller's grid, rings on the caller's line.
void describe_inputs(const algo::Problem& p, PlanRequest& q) {
  if (on_caller_grid(p)) {
    q.current_pm = p.mesh.sizes[0], q.current_pn = p.mesh.sizes[1];
    q.current_summa_words = summa_words_in_place(p);
  }
  ring_fits(p, q);
}

template <Scalar T>
Resolved resolve(const algo::Problem& p, const Options& o) {
  Resolved r{o, std::nullopt, ""};
  if (o.algorithm != Algorithm::Auto) return r;
  PlanRequest q;
  q.m = p.m, q.n = p.n, q.k = p.k, q.ranks = p.mesh.size(), q.dtype = dtype_of<T>();
  q.memory_limit = o.memory_limit;
  describe_inputs(p, q);
  const Candidate c = plan_gemm(q).chosen;
  r.options.algorithm = c.algorithm;
  r.options.stationary = c.stationary;
  r.options.ring_form = c.ring_form;
  r.why = "auto: " + c.name();
  if (c.algorithm == Algorithm::Gemm25D) {
    r.options.grid_m = c.pm, r.options.grid_n = c.pn, r.options.grid_k = c.pk;
  } else if (c.algorithm == Algorithm::Ring) {
    if (!is_line(p.mesh)) r.remesh = MeshShape({"x"}, {c.pm});  // a line runs as it is
  } else if (c.algorithm == Algorithm::Summa || c.algorithm == Algorithm::Cannon) {
    if (p.mesh.ndims() != 2 || p.mesh.sizes[0] != c.pm || p.mesh.sizes[1] != c.pn)
      r.remesh = MeshShape({"x", "y"}, {c.pm, c.pn});
  }
  return r;
}

// The memory budget: an explicitly chosen algorithm whose predicted peak per rank exceeds
// the limit fails here, on every rank (global metadata only), before anything is allocated.
template <Scalar T>
void check_memory(const algo::Problem& p, const algo::Setup& setup, const Options& o) {
  PlanRequest q;
  q.m = p.m, q.n = p.n, q.k = p.k, q.ranks = p.mesh.size(), q.dtype = dtype_of<T>();
  q.memory_limit = o.memory_limit;
  const std::int64_t limit = memory_limit(q);
  if (limit == 0 || setup.algorithm == Algorithm::Sharded) return;
  Candidate c{setup.algorithm, setup.stationary, setup.ring_form, setup.pm, setup.pn, setup.pk};
  if (setup.algorithm == Algorithm::Summa || setup.algorithm == Algorithm::Cannon)
    c.pm = setup.C.row_map().nprocs, c.pn = setup.C.col_map().nprocs;
  if (setup.algorithm == Algorithm::Ring) c.pm = p.mesh.sizes[p.mesh.axis_index(setup.ring_axis)];
  c = evaluate(q, c);
  if (!c.fits)
    throw OutOfMemory("gemm: " + c.name() + " needs " + std::to_string(c.memory_bytes) +
                      " bytes per rank but the memory limit is " + std::to_string(limit) +
                      " bytes (Options::memory_limit / SHARDMM_MEMORY_LIMIT)");
}

algo::Setup make_setup(Algorithm a, const algo::Problem& p, const Options& o) {
  switch (a) {
    case Algorithm::Local: return algo::local_setup(p, o);
    case Algorithm::Summa: return algo::summa_setup(p, o);
    case Algorithm::Cannon: return algo::cannon_setup(p, o);
    case Algorithm::Ring: return algo::ring_setup(p, o);
    case Algorithm::Sharded: return algo::sharded_setup(p, o);
    case Algorithm::Gemm25D: return algo::gemm25d_setup(p, o);
    case Algorithm::Auto: break;
  }
  throw InvalidArgument("gemm: no plan for algorithm " + to_string(a));
}

template <Scalar T>
void run(const algo::Operands<T>& x, const algo::Setup& setup, const Options& o, algo::Timers& t) {
  switch (setup.algorithm) {
    case Algorithm::Local: return algo::local_run(x, setup, o, t);
    case Algorithm::Summa: return algo::summa_run(x, setup, o, t);
    case Algorithm::Cannon: return algo::cannon_run(x, setup, o, t);
    case Algorithm::Ring: return algo::ring_run(x, setup, o, t);
    case Algorithm::Sharded: return algo::sharded_run(x, setup, o, t);
    case Algorithm::Gemm25D: return algo::gemm25d_run(x, setup, o, t);
    case Algorithm::Auto: break;
  }
}

// Operand in the plan's layout: the caller's matrix itself, or a redistributed copy in
// workspace slot `slot` (allocated on every rank before anything moves).
template <Scalar T>
const DistMatrix<T>& in_layout(const DistMatrix<T>& X, const Layout& L, memory::Slot slot,
                               std::optional<DistMatrix<T>>& tmp) {
  if (X.layout().same_distribution(L)) return X;
  comm::agreed(X.mesh().comm(), "redistribute", [&] { tmp.emplace(matrix::pooled<T>(X.mesh(), L, slot)); });
  redistribute(X, *tmp);
  return *tmp;
}

// Runs `plan` on the caller's mesh: operands move into the plan's layouts where they differ;
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
  t.events = o.timeline;
  std::optional<DistMatrix<T>> At, Bt, Ct;
  const DistMatrix<T>& Aw = in_layout(A, setup.A, memory::Slot::OperandA, At);
  const DistMatrix<T>& Bw = in_layout(B, setup.B, memory::Slot::OperandB, Bt);
  const bool c_moves = !C.layout().same_distribution(setup.C);
  if (c_moves)  // the algorithm writes C with beta = 0, so the pooled tile's contents never matter
    comm::agreed(C.mesh().comm(), "redistribute",
                 [&] { Ct.emplace(matrix::pooled<T>(C.mesh(), setup.C, memory::Slot::OperandC)); });
  double redist = algo::now() - t_start;
  if (redist > 0 && (At || Bt)) t.record("redistribute", t_start, t_start + redist);
  DistMatrix<T>& Cw = c_moves ? *Ct : C;
  {
    const comm::RedistributionRole algorithm_step(false);
    run(algo::Operands<T>{opA, opB, alpha, Aw, Bw, c_moves ? T(0) : beta, Cw}, setup, o, t);
  }
  if (c_moves) {
    const double t0 = algo::now();
    redistribute(*Ct, C, T(1), beta);
    redist += algo::now() - t0;
    t.record("redistribute", t0, algo::now());
  }
  rep.seconds_gemm = t.gemm;
  rep.seconds_comm = t.comm;
  rep.seconds_redist = redist + t.redist;
  return rep;
}

// The problem on the same ranks arranged as `shape`, with layouts that fit nothing (so the
// algorithm's default layouts are used).
algo::Problem remeshed(const algo::Problem& p, const MeshShape& shape) {
  algo::Problem q = p;
  q.mesh = shape;
  q.A = Layout::replicated(shape, p.A.rows(), p.A.cols());
  q.B = Layout::replicated(shape, p.B.rows(), p.B.cols());
  q.C = Layout::replicated(shape, p.C.rows(), p.C.cols());
  return q;
}

// Runs on the same ranks arranged as `shape`: operands move to the algorithm's layouts on
// that mesh, the product runs there, and C comes back with beta folded in.
template <Scalar T>
GemmReport run_remeshed(const MeshShape& shape, Op opA, Op opB, T alpha, const DistMatrix<T>& A,
                        const DistMatrix<T>& B, T beta, DistMatrix<T>& C, const Options& o,
                        const algo::Problem& p) {
  const Mesh M = C.mesh().reshaped(shape);
  const algo::Setup setup = make_setup(o.algorithm, remeshed(p, shape), o);
  const double t0 = algo::now();
  std::optional<DistMatrix<T>> A2o, B2o, C2o;
  comm::agreed(M.comm(), "redistribute", [&] {
    A2o.emplace(matrix::pooled<T>(M, setup.A, memory::Slot::OperandA));
    B2o.emplace(matrix::pooled<T>(M, setup.B, memory::Slot::OperandB));
    C2o.emplace(matrix::pooled<T>(M, setup.C, memory::Slot::OperandC));
  });
  DistMatrix<T>& A2 = *A2o;
  DistMatrix<T>& B2 = *B2o;
  DistMatrix<T>& C2 = *C2o;
  redistribute(A, A2);
  redistribute(B, B2);
  const double t1 = algo::now();
  GemmReport rep = gemm(opA, opB, alpha, A2, B2, T(0), C2, o);
  const double t2 = algo::now();
  redistribute(C2, C, T(1), beta);
  rep.seconds_redist += (t1 - t0) + (algo::now() - t2);
  return rep;
}

}  // namespace

PlanRequest block_cyclic_request(PlanRequest request, Op opA, Op opB, int pm, int pn, index_t nb) {
  if (pm < 1 || pn < 1 || pm * pn != request.ranks)
    throw InvalidArgument("block_cyclic_request: a " + std::to_string(pm) + "x" + std::to_string(pn) +
                          " grid for " + std::to_string(request.ranks) + " ranks");
  if (nb < 1) throw InvalidArgument("block_cyclic_request: block size " + std::to_string(nb) + " < 1");
  const MeshShape mesh({"x", "y"}, {pm, pn});
  auto stored = [&](Op op, index_t rows, index_t cols) {
    return op == Op::N ? Layout::block_cyclic(mesh, rows, cols, nb, nb)
                       : Layout::block_cyclic(mesh, cols, rows, nb, nb);
  };
  algo::Problem p;
  p.opA = opA, p.opB = opB, p.m = request.m, p.n = request.n, p.k = request.k, p.mesh = mesh;
  p.A = stored(opA, p.m, p.k);
  p.B = stored(opB, p.k, p.n);
  p.C = Layout::block_cyclic(mesh, p.m, p.n, nb, nb);
  describe_inputs(p, request);
  return request;
}

template <Scalar T>
GemmReport gemm(Op opA, Op opB, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
                DistMatrix<T>& C, const Options& options) {
  const algo::Problem p = validate(opA, opB, A, B, C);
  const bool trivial = p.m == 0 || p.n == 0 || p.k == 0 || alpha == T(0);
  Resolved how{options, std::nullopt, ""};
  std::optional<algo::Setup> setup;
  // Planning is pure except for the machine profile each rank reads (SHARDMM_PROFILE): the
  // ranks agree on the outcome, so a profile one rank cannot read fails the call everywhere.
  auto decide = [&] {
    fault::point("plan");
    if (!trivial) how = resolve<T>(p, options);
    if (!how.remesh && how.options.algorithm != Algorithm::Auto)
      setup = make_setup(how.options.algorithm, p, how.options);
    if (setup && !trivial && options.algorithm != Algorithm::Auto) check_memory<T>(p, *setup, how.options);
  };
  if (C.mesh().active()) comm::agreed(C.mesh().comm(), "plan", decide);
  else decide();
  const Options& o = how.options;
  GemmReport rep;
  if (setup) rep.algorithm = setup->algorithm, rep.grid = setup->grid, rep.detail = setup->detail;
  if (!C.mesh().active() || p.m == 0 || p.n == 0) return rep;
  if (options.blas_threads > 0) blas::set_num_threads(options.blas_threads);
  const double t_start = algo::now();
  const comm::Traffic start = comm::traffic();
  const comm::Traffic redist_start = comm::redistribution_traffic();
  if (trivial) {  // k = 0 or alpha = 0: only scale C (beta == 0 never reads it)
    blas::scale(C.local_rows(), C.local_cols(), beta, C.data(), C.ld());
    rep.detail = "k = 0 or alpha = 0: C scaled by beta";
  } else if (how.remesh) {
    rep = run_remeshed(*how.remesh, opA, opB, alpha, A, B, beta, C, o, p);
  } else {
    rep = run_planned(*setup, opA, opB, alpha, A, B, beta, C, o);
  }
  if (!how.why.empty()) rep.detail = how.why + "; " + rep.detail;
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

template <Scalar T>
GemmReport gemm_dry_run(Op opA, Op opB, const DistMatrix<T>& A, const DistMatrix<T>& B,
                     const DistMatrix<T>& C, const Options& options) {
  const algo::Problem p = validate(opA, opB, A, B, C);
  const Resolved how = resolve<T>(p, options);
  const algo::Setup setup =
      make_setup(how.options.algorithm, how.remesh ? remeshed(p, *how.remesh) : p, how.options);
  GemmReport rep;
  rep.algorithm = setup.algorithm;
  rep.grid = setup.grid;
  rep.detail = how.why.empty() ? setup.detail : how.why + "; " + setup.detail;
  return rep;
}

#define SHARDMM_INSTANTIATE(T)                                                               \
  template GemmReport gemm<T>(Op, Op, T, const DistMatrix<T>&, const DistMatrix<T>&, T,      \
                              DistMatrix<T>&, const Options&);                               \
  template GemmReport gemm_dry_run<T>(Op, Op, const DistMatrix<T>&, const DistMatrix<T>&,       \
                                   const DistMatrix<T>&, const Options&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm
