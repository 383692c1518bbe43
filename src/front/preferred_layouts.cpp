// preferred_layouts: the layouts of A, B and C (and the arrangement of the ranks) in which
// gemm's Auto runs its cheapest plan without moving any operand. Each candidate the planner
// enumerates has its own layouts: the ones its setup builds on its own mesh (a line for the
// ring, its pm x pn grid for SUMMA, Cannon and Strassen, replicated for the local product).
// Candidates are taken cheapest first as priced with free inputs (a lower bound on what their
// layouts can give); for each one, the inputs are put in its layouts and planned as gemm
// plans them (front::request_for's description of the caller's layouts, front::resolve),
// which may pick another plan there (the sharding rules on those very layouts, say). The
// layouts whose plan moves nothing and is predicted fastest win. 2.5D's are its 3D tiles
// (algo::gemm25d_layouts), which it reads in place; Strassen's breadth-first step moves its
// inputs, so it has none. Pure: no communication.
#include <optional>
#include <string>
#include <vector>

#include "front/resolve.hpp"
#include "plan/cost_model.hpp"
#include "shardmm/error.hpp"
#include "shardmm/gemm.hpp"

namespace shardmm {
namespace {

constexpr std::size_t kMaxTrials = 8;  // distinct layouts planned at most, once one has a plan

// The mesh candidate `c` runs on as it is (gemm's front end remeshes onto the same shapes).
std::optional<MeshShape> native_mesh(const Candidate& c, int P) {
  switch (c.algorithm) {
    case Algorithm::Local:
    case Algorithm::Ring: return MeshShape({"x"}, {P});
    case Algorithm::Summa:
    case Algorithm::Cannon:
    case Algorithm::Strassen:
      if (c.pk > 1) return std::nullopt;  // the breadth-first step moves its inputs too
      return MeshShape({"x", "y"}, {c.pm, c.pn});
    case Algorithm::Gemm25D: return MeshShape({"x", "y", "z"}, {c.pm, c.pn, c.pk});
    default: return std::nullopt;  // sharded: no layouts of its own
  }
}

// The product on `mesh` with A, B and C in candidate c's own layouts there.
algo::Problem in_own_layouts(const PlanRequest& q, Op opA, Op opB, const Candidate& c,
                             const MeshShape& mesh) {
  algo::Problem p;
  p.opA = opA, p.opB = opB, p.m = q.m, p.n = q.n, p.k = q.k, p.mesh = mesh;
  p.A = Layout::replicated(mesh, opA == Op::N ? q.m : q.k, opA == Op::N ? q.k : q.m);
  p.B = Layout::replicated(mesh, opB == Op::N ? q.k : q.n, opB == Op::N ? q.n : q.k);
  p.C = Layout::replicated(mesh, q.m, q.n);
  if (c.algorithm == Algorithm::Gemm25D) {  // its 3D layouts, which it reads in place
    const algo::Layouts25D l = algo::gemm25d_layouts(opA, opB, q.m, q.n, q.k, c.pm, c.pn, c.pk);
    p.A = l.A, p.B = l.B, p.C = l.C;
    return p;
  }
  Options o;
  o.algorithm = c.algorithm, o.stationary = c.stationary, o.ring_form = c.ring_form;
  if (c.algorithm == Algorithm::Strassen) o.strassen_step = front::strassen_step_of(c);
  o.fast_crossover = q.fast_crossover > 0 ? q.fast_crossover : q.profile.strassen_crossover;
  const algo::Setup s = front::make_setup(front::remeshed(p, mesh), o);
  p.A = s.A, p.B = s.B, p.C = s.C;
  return p;
}

// The request without the caller's layouts (each trial describes its own).
plan::Request bare(const PlanRequest& r) {
  plan::Request q(r);
  q.a.reset(), q.b.reset(), q.c.reset();
  return q;
}

// gemm's Auto on the inputs of `p`: its plan, and whether it runs on them as they are.
PreferredLayouts trial(const plan::Request& base, const algo::Problem& p) {
  plan::Request q = base;
  front::describe_inputs(p, q);
  PreferredLayouts out{p.mesh, p.A, p.B, p.C, plan::plan_gemm(q).chosen, false};
  Options o;
  o.memory_limit = q.memory_limit, o.memory_growth = q.memory_growth;
  o.allow_fast = q.allow_fast;
  o.fast_crossover = q.fast_crossover;
  const front::Resolved how = front::resolve(p, q, o);
  const Options& x = how.options;
  if (how.remesh ||
      (x.algorithm == Algorithm::Strassen && x.strassen_step == StrassenStep::BreadthFirst))
    return out;  // moves its inputs
  // The layouts the run takes its operands in: 2.5D's 3D tiles, else the setup's.
  algo::Layouts25D run;
  if (x.algorithm == Algorithm::Gemm25D) {
    run = algo::gemm25d_layouts(p.opA, p.opB, p.m, p.n, p.k, x.grid_m, x.grid_n, x.grid_k);
  } else {
    const algo::Setup s = front::make_setup(p, x);
    run = {s.A, s.B, s.C};
  }
  out.in_place =
      run.A.same_distribution(p.A) && run.B.same_distribution(p.B) && run.C.same_distribution(p.C);
  return out;
}

// Layouts already tried: candidates that differ only in what their layouts do not show (a
// SUMMA variant, a panel width) give the same trial, which costs two planner runs.
struct Tried {
  std::vector<algo::Problem> seen;
  bool add(const algo::Problem& p) {
    for (const algo::Problem& q : seen)
      if (q.mesh == p.mesh && q.A.same_distribution(p.A) && q.B.same_distribution(p.B) &&
          q.C.same_distribution(p.C))
        return false;
    seen.push_back(p);
    return true;
  }
};

// The trial on candidate c's own layouts; none when they were tried already or no plan fits
// the memory limit there (moving the operands out of them takes memory too).
std::optional<PreferredLayouts> trial_in_own_layouts(const plan::Request& base, Op opA, Op opB,
                                                     const Candidate& c, const MeshShape& mesh,
                                                     Tried& tried) {
  try {
    const algo::Problem p = in_own_layouts(base, opA, opB, c, mesh);
    if (!tried.add(p)) return std::nullopt;
    return trial(base, p);
  } catch (const OutOfMemory&) {
    return std::nullopt;
  }
}

double all_words(const Candidate& c) { return c.words + c.redist_words; }

// Whether trial `a` beats the best so far: in place first, then the planner's order
// (predicted time, fewer words within 1 %).
bool better(const PreferredLayouts& a, const std::optional<PreferredLayouts>& best) {
  if (!best) return true;
  if (a.in_place != best->in_place) return a.in_place;
  const double ta = a.plan.seconds, tb = best->plan.seconds;
  if (ta <= tb * (1 + plan::kNearTie) && tb <= ta * (1 + plan::kNearTie))
    return all_words(a.plan) < all_words(best->plan);
  return ta < tb;
}

}  // namespace

PreferredLayouts preferred_layouts(const PlanRequest& request, Op opA, Op opB) {
  if (request.m < 0 || request.n < 0 || request.k < 0 || request.ranks < 1)
    throw InvalidArgument(
        "preferred_layouts: sizes must be >= 0 and ranks >= 1 (m=" + std::to_string(request.m) +
        " n=" + std::to_string(request.n) + " k=" + std::to_string(request.k) +
        " ranks=" + std::to_string(request.ranks) + ")");
  const plan::Request base = bare(request);
  plan::Request free_inputs = base;  // every candidate as if the inputs sat in its layouts
  free_inputs.redistribution_words = [](const Candidate&) { return 0.0; };
  free_inputs.staged_elements = [](const Candidate&) { return 0.0; };
  const GemmPlan plan = plan::plan_gemm(free_inputs);
  std::optional<PreferredLayouts> best;
  Tried tried;
  for (const Candidate& c : plan.candidates) {
    const auto mesh = native_mesh(c, request.ranks);
    if (!mesh || !c.fits) continue;
    // Taken cheapest first: a candidate slower than the best in-place plan found cannot
    // give a faster one (its layouts cost it nothing here already).
    if (best && best->in_place && c.seconds > best->plan.seconds * (1 + plan::kNearTie)) break;
    // Past kMaxTrials distinct layouts the rest are far down the free ranking; at thousands
    // of ranks each trial is a planner run of its own.
    if (best && tried.seen.size() >= kMaxTrials) break;
    const auto t = trial_in_own_layouts(base, opA, opB, c, *mesh, tried);
    if (t && better(*t, best)) best = t;
  }
  if (!best)
    throw NotSupported("preferred_layouts: no candidate for " + std::to_string(request.ranks) +
                       " ranks has layouts of its own");
  return *best;
}

}  // namespace shardmm
