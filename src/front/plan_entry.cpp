// The public planner entries (include/shardmm/plan.hpp, gemm.hpp): a request's layouts, when
// it names them, are described here (what they save) before the pure planner (src/plan) prices
// the candidates; block_cyclic_request and layouts_request fill those layouts in.
#include <string>
#include <utility>

#include "algo/algo.hpp"
#include "front/resolve.hpp"
#include "plan/request.hpp"
#include "shardmm/error.hpp"
#include "shardmm/gemm.hpp"

namespace shardmm {
namespace front {
namespace {

std::pair<index_t, index_t> op_dims(Op op, const Layout& L) {
  return op == Op::N ? std::pair{L.rows(), L.cols()} : std::pair{L.cols(), L.rows()};
}

// Throws unless A, B and C (as stored) are on one mesh of the request's ranks and fit its
// m, n and k under its ops.
void check_layouts(const PlanRequest& r, const Layout& A, const Layout& B, const Layout& C) {
  const std::string all =
      "\n  A: " + A.to_string() + "\n  B: " + B.to_string() + "\n  C: " + C.to_string();
  if (A.mesh() != B.mesh() || A.mesh() != C.mesh() || A.mesh().size() != r.ranks)
    throw InvalidArgument("plan: the layouts of A, B and C must be on one mesh of " +
                          std::to_string(r.ranks) + " ranks" + all);
  if (op_dims(r.opA, A) != std::pair{r.m, r.k} || op_dims(r.opB, B) != std::pair{r.k, r.n} ||
      std::pair{C.rows(), C.cols()} != std::pair{r.m, r.n})
    throw DimensionMismatch("plan: the layouts do not fit m = " + std::to_string(r.m) +
                            ", n = " + std::to_string(r.n) + ", k = " + std::to_string(r.k) + all);
}

}  // namespace

// The whole request: with the caller's layouts, what they save (describe_inputs).
plan::Request caller_request(const PlanRequest& r) {
  plan::Request q(r);
  if (!r.a && !r.b && !r.c) return q;
  if (!r.a || !r.b || !r.c)
    throw InvalidArgument("plan: give the layouts of all of A, B and C, or none");
  check_layouts(r, *r.a, *r.b, *r.c);
  algo::Problem p;
  p.opA = r.opA, p.opB = r.opB, p.m = r.m, p.n = r.n, p.k = r.k, p.mesh = r.a->mesh();
  p.A = r.a->regularized();
  p.B = r.b->regularized();
  p.C = r.c->regularized();
  describe_inputs(p, q);
  return q;
}

}  // namespace front

GemmPlan plan_gemm(const PlanRequest& request) {
  return plan::plan_gemm(front::caller_request(request));
}

Candidate cheapest_of(const PlanRequest& request, Algorithm algorithm, int pm, int pn) {
  return plan::cheapest_of(front::caller_request(request), algorithm, pm, pn);
}

Candidate evaluate(const PlanRequest& request, Candidate candidate) {
  return plan::priced(front::caller_request(request), candidate);
}

std::int64_t resident_bytes(const PlanRequest& request) {
  return plan::resident_bytes(front::caller_request(request));
}

PlanRequest block_cyclic_request(PlanRequest request, Op opA, Op opB, int pm, int pn, index_t nb) {
  if (pm < 1 || pn < 1 || pm * pn != request.ranks)
    throw InvalidArgument("block_cyclic_request: a " + std::to_string(pm) + "x" +
                          std::to_string(pn) + " grid for " + std::to_string(request.ranks) +
                          " ranks");
  if (nb < 1)
    throw InvalidArgument("block_cyclic_request: block size " + std::to_string(nb) + " < 1");
  const MeshShape mesh({"x", "y"}, {pm, pn});
  auto stored = [&](Op op, index_t rows, index_t cols) {
    return op == Op::N ? Layout::block_cyclic(mesh, rows, cols, nb, nb)
                       : Layout::block_cyclic(mesh, cols, rows, nb, nb);
  };
  const Layout A = stored(opA, request.m, request.k), B = stored(opB, request.k, request.n),
               C = Layout::block_cyclic(mesh, request.m, request.n, nb, nb);
  return layouts_request(std::move(request), opA, opB, A, B, C);
}

PlanRequest layouts_request(PlanRequest request, Op opA, Op opB, const Layout& A, const Layout& B,
                            const Layout& C) {
  request.opA = opA, request.opB = opB;
  front::check_layouts(request, A, B, C);  // now, not at the first plan
  request.a = A, request.b = B, request.c = C;
  return request;
}

}  // namespace shardmm
