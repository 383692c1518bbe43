// The planning half of the gemm front end: validate, describe the caller's layouts to the
// planner, turn its answers into explicit options, check the memory budget, build the
// algorithm's setup. No communication: every rank computes the same from global metadata.
#include "front/resolve.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "algo/algo.hpp"
#include "algo/sharded_plan.hpp"
#include "algo/sharded_steps.hpp"
#include "core/instantiate.hpp"
#include "core/winograd.hpp"
#include "matrix/redistribute_plan.hpp"
#include "shardmm/error.hpp"
#include "shardmm/gemm.hpp"

namespace shardmm::front {
namespace {

std::string shape_str(Op op, const Layout& L) {
  return "op" + std::string(op == Op::N ? "" : "^" + to_string(op)) + " of " + L.to_string();
}

// The operands as an error message lists them.
template <Scalar T>
std::string operands_str(Op opA, Op opB, const DistMatrix<T>& A, const DistMatrix<T>& B,
                         const Layout& C) {
  return "\n  A: " + shape_str(opA, A.layout()) + "\n  B: " + shape_str(opB, B.layout()) +
         "\n  C: " + C.to_string();
}

bool on_caller_grid(const algo::Problem& p) {
  if (p.mesh.ndims() != 2) return false;
  const algo::Setup s = algo::summa_setup(p, Options{});
  return s.A.same_distribution(p.A) && s.B.same_distribution(p.B) && s.C.same_distribution(p.C);
}

// True when the mesh is a line: exactly one axis longer than 1 (a 1 x P grid included).
bool is_line(const MeshShape& mesh) { return mesh.long_axes().size() == 1; }

// Which operands each ring form would use as they are on the caller's line.
void ring_fits(const algo::Problem& p, plan::Request& q) {
  if (!is_line(p.mesh)) return;
  for (RingForm f : {RingForm::AllGatherA, RingForm::AllGatherB, RingForm::ReduceScatter}) {
    Options o;
    o.ring_form = f;
    const algo::Setup r = algo::ring_setup(p, o);
    q.ring_in_place[static_cast<int>(f) - 1] = {
        r.A.same_distribution(p.A), r.B.same_distribution(p.B), r.C.same_distribution(p.C)};
    q.ring_streamed[static_cast<int>(f) - 1] = r.as<algo::RingSetup>().stream;
  }
}

// SUMMA C-stationary on the caller's grid: process (i, j) receives op(A)'s panels it lacks
// (its C rows x the k that process column j does not hold) and op(B)'s (its C columns x the k
// process row i does not hold). The busiest rank's words, from the actual tile extents.
double summa_words_in_place(const algo::Problem& p) {
  const DimMap &rows = p.C.row_map(), &cols = p.C.col_map();
  const DimMap &ka = p.A.map(p.opA == Op::N ? 1 : 0),
               &kb = p.B.map(p.opB == Op::N ? 0 : 1);  // k as stored
  double most = 0;
  for (int i = 0; i < rows.nprocs; ++i)
    for (int j = 0; j < cols.nprocs; ++j)
      most = std::max(most, double(rows.local_extent(i)) * double(p.k - ka.local_extent(j)) +
                                double(cols.local_extent(j)) * double(p.k - kb.local_extent(i)));
  return most;
}

// The name of the line all of the caller's ranks make: its axis names run together ("xy" for
// {x:2, y:2}), so "ring over xy (4)" says which ranks the ring spans and is never read as a
// ring over the caller's x.
std::string line_name(const MeshShape& mesh) {
  std::string name;
  for (const std::string& axis : mesh.names) name += axis;
  return name;
}

// The mesh shape a candidate runs on when it is not the caller's: a line for the ring (a line
// runs as it is), the candidate's grid for SUMMA, Cannon and Strassen.
std::optional<MeshShape> remesh_for(const algo::Problem& p, const Candidate& c) {
  if (c.algorithm == Algorithm::Ring && !is_line(p.mesh))
    return MeshShape({line_name(p.mesh)}, {c.pm});
  const bool grid = c.algorithm == Algorithm::Summa || c.algorithm == Algorithm::Cannon ||
                    (c.algorithm == Algorithm::Strassen && c.pk == 1);  // CAPS: any mesh
  if (grid && (p.mesh.ndims() != 2 || p.mesh.sizes[0] != c.pm || p.mesh.sizes[1] != c.pn))
    return MeshShape({"x", "y"}, {c.pm, c.pn});
  return std::nullopt;
}

// The busiest rank's words moving the caller's A and B into layouts A2 and B2 and C2 back.
double busiest_moving(const algo::Problem& p, const Layout& A2, const Layout& B2,
                      const Layout& C2) {
  const auto a = matrix::received_words(p.A, A2), b = matrix::received_words(p.B, B2),
             r = matrix::received_words(C2, p.C);
  double most = 0;
  for (std::size_t i = 0; i < a.size(); ++i) most = std::max(most, a[i] + b[i] + r[i]);
  return most;
}

// The layouts candidate c runs on: 2.5D's 3D layouts (it moves its inputs there itself,
// nothing when they are there already), else its setup's on the mesh it runs on. None for
// Strassen, which moves its operands inside the run, into layouts of its own (its model
// prices that).
std::optional<algo::Layouts25D> target_layouts(const algo::Problem& p, const Candidate& c) {
  if (c.algorithm == Algorithm::Strassen) return std::nullopt;
  if (c.algorithm == Algorithm::Gemm25D)
    return algo::gemm25d_layouts(p.opA, p.opB, p.m, p.n, p.k, c.pm, c.pn, c.pk);
  Options o;
  o.algorithm = c.algorithm, o.stationary = c.stationary, o.ring_form = c.ring_form;
  const auto shape = remesh_for(p, c);
  const algo::Setup s = make_setup(shape ? remeshed(p, *shape) : p, o);
  return algo::Layouts25D{s.A, s.B, s.C};
}

// The words the busiest rank receives moving the caller's A and B into the candidate's
// layouts and its C back: each move priced as the redistribution pattern it is.
double redistribution_words(const algo::Problem& p, const Candidate& c) {
  const auto l = target_layouts(p, c);
  return l ? busiest_moving(p, l->A, l->B, l->C) : -1;
}

// The same, remembered per problem and candidate: a program calls gemm on the same layouts
// again and again, and at hundreds of ranks pricing every candidate takes a tenth of a second.
double cached_redistribution_words(const algo::Problem& p, const Candidate& c) {
  static std::mutex lock;
  static std::map<std::string, double> cache;
  const std::string key = to_string(p.opA) + to_string(p.opB) + p.A.to_string() + "|" +
                          p.B.to_string() + "|" + p.C.to_string() + "|" + c.name();
  {
    const std::scoped_lock hold(lock);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  const double w = redistribution_words(p, c);
  const std::scoped_lock hold(lock);
  if (cache.size() > 4096) cache.clear();
  cache.emplace(key, w);
  return w;
}

// The sharding rules' plan for the caller's layouts, priced exactly (algo/sharded_plan.hpp).
void price_sharded(const algo::Problem& p, plan::Request& q) {
  if (p.mesh.size() < 2) return;
  const algo::sharded::Plan plan = algo::sharded::plan_product(p);
  double operands = 0;  // the caller's tiles, taken as the sharding rules take them
  for (const Layout* L : {&p.A, &p.B, &p.C})
    operands += algo::sharded::largest_tile(algo::sharded::as_block(*L));
  q.sharded = {plan.words, plan.streamed, plan.messages, plan.flops, operands + plan.memory};
}

}  // namespace

// What the caller's layouts save: SUMMA on the caller's grid, rings on the caller's line; the
// sharding rules on the caller's layouts; every candidate's redistribution, exactly.
void describe_inputs(const algo::Problem& p, plan::Request& q) {
  if (on_caller_grid(p)) {
    q.current_pm = p.mesh.sizes[0], q.current_pn = p.mesh.sizes[1];
    q.current_summa_words = summa_words_in_place(p);
  }
  ring_fits(p, q);
  price_sharded(p, q);
  q.redistribution_words = [p](const Candidate& c) { return cached_redistribution_words(p, c); };
  q.opA = p.opA, q.opB = p.opB;
  q.resident = resident_elements(p);
  q.staged_elements = [p](const Candidate& c) {
    const auto l = target_layouts(p, c);
    return l ? staged_elements(p, *l) : -1.0;
  };
}

namespace {

// Auto: the planner's cheapest candidate becomes explicit options, plus the mesh shape to run
// on when it differs from the caller's mesh.
void choose_algorithm(const algo::Problem& p, const plan::Request& q, Resolved& r) {
  const Candidate c = plan::plan_gemm(q).chosen;
  r.options.algorithm = c.algorithm;
  r.options.stationary = c.stationary;
  r.options.ring_form = c.ring_form;
  r.why = "auto: " + c.name();
  r.options.grid_m = r.options.grid_n = r.options.grid_k = 0;  // 2.5D's only
  if (c.algorithm == Algorithm::Gemm25D)
    r.options.grid_m = c.pm, r.options.grid_n = c.pn, r.options.grid_k = c.pk;
  if (c.algorithm == Algorithm::Strassen) r.options.strassen_step = strassen_step_of(c);
  r.remesh = remesh_for(p, c);  // the shape the redistribution was priced on
  if (r.remesh && c.algorithm == Algorithm::Ring) r.options.ring_axis.clear();  // its one axis
}

// 2.5D without a grid: the planner's cheapest 2.5D grid (at least two k-slices) for the full
// request (dtype, memory limit, profile); one rank has none and runs 1x1x1.
void choose_25d_grid(const plan::Request& q, Options& o) {
  o.grid_m = q.ranks, o.grid_n = 1, o.grid_k = 1;
  if (q.ranks < 2) return;
  const Candidate c = plan::cheapest_of(q, Algorithm::Gemm25D);
  o.grid_m = c.pm, o.grid_n = c.pn, o.grid_k = c.pk;
}

// SUMMA with Stationary::Auto: the planner's cheapest variant on the grid SUMMA runs on.
void choose_summa_variant(const algo::Problem& p, const plan::Request& q, Options& o) {
  Options c_stationary = o;
  c_stationary.stationary = Stationary::C;
  const algo::Setup s = algo::summa_setup(p, c_stationary);
  o.stationary = Stationary::C;
  if (q.ranks < 2) return;
  o.stationary =
      plan::cheapest_of(q, Algorithm::Summa, s.C.row_map().nprocs, s.C.col_map().nprocs).stationary;
}

}  // namespace

template <Scalar T>
algo::Problem validate(Op opA, Op opB, const DistMatrix<T>& A, const DistMatrix<T>& B,
                       const DistMatrix<T>& C) {
  if (!A.mesh().same_as(C.mesh()))
    throw InvalidArgument("gemm: A, B and C must live on the same Mesh object" +
                          operands_str(opA, opB, A, B, C.layout()));
  return validate(opA, opB, A, B, C.layout());
}

template <Scalar T>
algo::Problem validate(Op opA, Op opB, const DistMatrix<T>& A, const DistMatrix<T>& B,
                       const Layout& C) {
  const std::string all = operands_str(opA, opB, A, B, C);
  if (!A.mesh().same_as(B.mesh()))
    throw InvalidArgument("gemm: A, B and C must live on the same Mesh object" + all);
  algo::Problem p;
  p.opA = opA;
  p.opB = opB;
  p.m = opA == Op::N ? A.rows() : A.cols();
  p.k = opA == Op::N ? A.cols() : A.rows();
  const index_t kb = opB == Op::N ? B.rows() : B.cols();
  p.n = opB == Op::N ? B.cols() : B.rows();
  if (p.k != kb)
    throw DimensionMismatch("gemm: inner dimensions differ: op(A) is " + std::to_string(p.m) + "x" +
                            std::to_string(p.k) + ", op(B) is " + std::to_string(kb) + "x" +
                            std::to_string(p.n) + all);
  if (C.rows() != p.m || C.cols() != p.n)
    throw DimensionMismatch("gemm: C is " + std::to_string(C.rows()) + "x" +
                            std::to_string(C.cols()) + " but op(A)*op(B) is " +
                            std::to_string(p.m) + "x" + std::to_string(p.n) + all);
  if (A.layout().is_unreduced() || B.layout().is_unreduced())
    throw NotSupported("gemm: unreduced (pending-sum) inputs must be reduced first" + all);
  // The algorithms' block arithmetic assumes every block nb long: a layout whose first block
  // has another size (ScaLAPACK's IMB/INB, a submatrix starting inside a block) is planned as
  // its regular form, so gemm moves such an operand into it (one redistribution) first.
  p.A = A.layout().regularized();
  p.B = B.layout().regularized();
  p.C = C.regularized();
  p.mesh = A.mesh().shape();
  return p;
}

plan::Request request_for(const algo::Problem& p, const Mesh& mesh, Dtype dtype, const Options& o) {
  plan::Request q;
  q.m = p.m, q.n = p.n, q.k = p.k, q.ranks = p.mesh.size(), q.dtype = dtype;
  q.memory_limit = o.memory_limit;
  q.memory_growth = o.memory_growth;
  q.allow_fast = o.allow_fast;
  q.fast_crossover = o.fast_crossover;
  q.stationary_chunk = o.stationary_chunk;
  q.ring_chunk = o.ring_chunk;
  q.profile = MachineProfile::from_environment();
  // As the algorithms' GEMMs will (none without overlap: no next panel is in flight then).
  q.relays_in_gemm = mesh.active() && algo::polls(mesh, o.overlap);
  describe_inputs(p, q);
  return q;
}

StrassenStep strassen_step_of(const Candidate& c) {
  return c.pk == winograd::kCapsGroups ? StrassenStep::BreadthFirst : StrassenStep::DepthFirst;
}

void check_options(const Options& o) {
  for (const auto& [value, name] : {std::pair{o.panel, "panel"},
                                    {o.stationary_chunk, "stationary_chunk"},
                                    {o.ring_chunk, "ring_chunk"}})
    if (value < 0)
      throw InvalidArgument("gemm: Options::" + std::string(name) + " " + std::to_string(value) +
                            " < 0 (0: the algorithm's own width)");
  if (o.algorithm == Algorithm::Ring && o.panel != 0)
    throw InvalidArgument("gemm: Options::panel is SUMMA's panel width; the ring's chunk at "
                          "p = 2 is Options::ring_chunk (--ring-chunk)");
  if (o.algorithm == Algorithm::Strassen && (o.grid_m != 0 || o.grid_n != 0 || o.grid_k != 0))
    throw InvalidArgument("gemm: Options::grid_m/n/k are 2.5D's grid; Strassen's breadth-first "
                          "step is Options::strassen_step (--strassen-step)");
}

Resolved resolve(const algo::Problem& p, const plan::Request& q, const Options& o) {
  check_options(o);
  Resolved r{o, std::nullopt, ""};
  if (o.algorithm == Algorithm::Auto) choose_algorithm(p, q, r);
  Options& x = r.options;
  if (x.algorithm == Algorithm::Gemm25D && x.grid_m == 0 && x.grid_n == 0 && x.grid_k == 0)
    choose_25d_grid(q, x);
  if (x.algorithm == Algorithm::Strassen && x.fast_crossover == 0)
    x.fast_crossover = q.profile.strassen_crossover;  // the setup and the run use it as given
  if (x.algorithm == Algorithm::Summa && x.stationary == Stationary::Auto)
    choose_summa_variant(r.remesh ? remeshed(p, *r.remesh) : p, q, x);
  return r;
}

algo::Setup make_setup(const algo::Problem& p, const Options& o) {
  switch (o.algorithm) {
    case Algorithm::Local: return algo::local_setup(p, o);
    case Algorithm::Summa: return algo::summa_setup(p, o);
    case Algorithm::Cannon: return algo::cannon_setup(p, o);
    case Algorithm::Ring: return algo::ring_setup(p, o);
    case Algorithm::Sharded: return algo::sharded_setup(p, o);
    case Algorithm::Gemm25D: return algo::gemm25d_setup(p, o);
    case Algorithm::Strassen: return algo::strassen_setup(p, o);
    case Algorithm::Auto: break;
  }
  throw InvalidArgument("gemm: no setup for algorithm " + to_string(o.algorithm));
}

Candidate candidate_of(const algo::Problem& p, const algo::Setup& s) {
  Candidate c{s.algorithm, Stationary::C, RingForm::Auto, 1, 1, 1};
  if (s.algorithm == Algorithm::Summa || s.algorithm == Algorithm::Cannon)
    c.pm = s.C.row_map().nprocs, c.pn = s.C.col_map().nprocs;
  if (const auto* summa = std::get_if<algo::SummaSetup>(&s.own)) c.stationary = summa->stationary;
  if (const auto* ring = std::get_if<algo::RingSetup>(&s.own))
    c.ring_form = ring->form, c.pm = p.mesh.sizes[p.mesh.axis_index(ring->axis)];
  if (const auto* g = std::get_if<algo::Gemm25DSetup>(&s.own))
    c.pm = g->pm, c.pn = g->pn, c.pk = g->pk;
  if (const auto* st = std::get_if<algo::StrassenSetup>(&s.own))  // the planner's 1xQx7: the step
    c.pm = st->pm, c.pn = st->pn,
    c.pk = st->form == algo::StrassenSetup::Form::BreadthFirst ? winograd::kCapsGroups : 1;
  return c;
}

Candidate predicted(const algo::Problem& p, const algo::Setup& setup, const plan::Request& q) {
  return plan::priced(q, candidate_of(p, setup));
}

void check_memory(const algo::Problem& p, const algo::Setup& setup, const plan::Request& q) {
  const std::int64_t limit = memory_limit(q);
  if (limit == 0) return;
  const Candidate c = predicted(p, setup, q);
  if (!c.fits)
    throw OutOfMemory("gemm: " + c.name() + " needs " + std::to_string(c.memory_bytes) +
                      " bytes per rank but the memory limit is " + std::to_string(limit) +
                      " bytes (Options::memory_limit / SHARDMM_MEMORY_LIMIT)");
}

algo::Problem remeshed(const algo::Problem& p, const MeshShape& shape) {
  algo::Problem q = p;
  q.mesh = shape;
  q.A = Layout::replicated(shape, p.A.rows(), p.A.cols());
  q.B = Layout::replicated(shape, p.B.rows(), p.B.cols());
  q.C = Layout::replicated(shape, p.C.rows(), p.C.cols());
  return q;
}

#define SHARDMM_INSTANTIATE(T)                                                           \
  template algo::Problem validate<T>(Op, Op, const DistMatrix<T>&, const DistMatrix<T>&, \
                                     const DistMatrix<T>&);                              \
  template algo::Problem validate<T>(Op, Op, const DistMatrix<T>&, const DistMatrix<T>&, \
                                     const Layout&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
SHARDMM_FOR_EACH_HALF(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::front
