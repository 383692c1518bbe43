// plan_blas3 (include/shardmm/plan_blas3.hpp): the candidates of each PBLAS level-3 routine,
// priced from the operands' layouts as the routines run them (front/blas3_layouts.hpp).
//
// Words are exact per rank: each redistribution an algorithm runs is priced with
// matrix::received_words on the very layouts it moves between, trmm / trsm's step broadcasts
// as the rows (columns) of B a rank does not hold times its columns (rows); the busiest rank's
// sum is the candidate's words. symm / hemm price their gemm with plan_gemm on the operands'
// layouts (its choice and its redistributions). Time: flops at the profile's GEMM rate, words
// at its bandwidth, messages at its latency, no overlap assumed.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "front/blas3_layouts.hpp"
#include "front/plan_blas3_text.hpp"
#include "matrix/redistribute_plan.hpp"
#include "plan/blas3_routines.hpp"
#include "shardmm/error.hpp"
#include "shardmm/gemm.hpp"
#include "shardmm/plan_blas3.hpp"

namespace shardmm {
namespace {

using Words = std::vector<double>;  // per rank

// The request with its layouts bound (given, or bc(nb, nb) on the near-square grid).
struct Bound {
  const Blas3Request& q;
  Layout A, B, out;
  bool has_b = false, a_rows = true;  // a_rows: op N (op(A)'s rows are A's rows)
  index_t na = 0;                     // symm / trmm / trsm: A's order
  int P = 1;
  double elem = 8;  // bytes per element
};

// The stored extents of A, B and the output for the request's m, n, k.
struct Extents {
  index_t ar = 0, ac = 0, br = 0, bc = 0, orows = 0, ocols = 0;
};
Extents extents_of(const Blas3Request& q) {
  Extents e;
  const bool t = q.op != Op::N;
  if (plan::rank_k(q.routine)) {
    e.ar = t ? q.k : q.n, e.ac = t ? q.n : q.k, e.orows = e.ocols = q.n;
    if (plan::two_terms(q.routine)) e.br = e.ar, e.bc = e.ac;
    return e;
  }
  e.orows = q.m, e.ocols = q.n;
  if (q.routine == Blas3Routine::Tran) e.ar = q.n, e.ac = q.m;
  else if (q.routine == Blas3Routine::Geadd) e.ar = t ? q.n : q.m, e.ac = t ? q.m : q.n;
  else e.ar = e.ac = q.side == Side::Left ? q.m : q.n;
  if (plan::symmetric(q.routine)) e.br = q.m, e.bc = q.n;
  return e;
}

Bound bind(const Blas3Request& q) {
  const Extents e = extents_of(q);
  Bound b{q,
          {},
          {},
          {},
          plan::symmetric(q.routine) || plan::two_terms(q.routine),
          q.op == Op::N,
          e.ar,
          q.ranks,
          double(dtype_size(q.dtype))};
  const bool given = q.a || q.out;
  if (given && (!q.a || !q.out || (b.has_b && !q.b)))
    throw InvalidArgument("plan " + to_string(q.routine) + ": give the layouts of every " +
                          "operand (A" + (b.has_b ? ", B" : "") + " and the output), or none");
  if (given) {
    b.A = *q.a, b.out = *q.out;
    if (b.has_b) b.B = *q.b;
  } else {
    const auto f = factor_near_square(q.ranks, 2);
    const MeshShape mesh({"x", "y"}, {f[1], f[0]});  // Mesh::grid2d's
    const auto bc = [&](index_t r, index_t c) {
      return Layout::block_cyclic(mesh, r, c, q.nb, q.nb);
    };
    b.A = bc(e.ar, e.ac), b.out = bc(e.orows, e.ocols);
    if (b.has_b) b.B = bc(e.br, e.bc);
  }
  const auto fits = [](const Layout& L, index_t r, index_t c) {
    return L.rows() == r && L.cols() == c;
  };
  if (!fits(b.A, e.ar, e.ac) || !fits(b.out, e.orows, e.ocols) ||
      (b.has_b && !fits(b.B, e.br, e.bc)) || b.A.mesh().size() != q.ranks ||
      b.out.mesh().size() != q.ranks || (b.has_b && b.B.mesh().size() != q.ranks))
    throw DimensionMismatch("plan " + to_string(q.routine) + ": the layouts (A " + b.A.to_string() +
                            ", output " + b.out.to_string() +
                            ") do not fit m = " + std::to_string(q.m) +
                            ", n = " + std::to_string(q.n) + ", k = " + std::to_string(q.k) +
                            " on " + std::to_string(q.ranks) + " ranks");
  if (b.out.is_unreduced())
    throw NotSupported("plan " + to_string(q.routine) + ": the output " + b.out.to_string() +
                       " holds pending partial sums");
  return b;
}

Words operator+(Words a, const Words& b) {
  for (std::size_t r = 0; r < a.size(); ++r) a[r] += b[r];
  return a;
}
double busiest(const Words& w) { return w.empty() ? 0.0 : *std::max_element(w.begin(), w.end()); }
double tile(const Layout& L, int r) {
  const auto c = L.mesh().coords_of(r);
  return double(L.local_rows(c)) * double(L.local_cols(c));
}
// The largest sum of the given layouts' tiles on one rank, elements.
double largest_tiles(const std::vector<Layout>& ls, int P) {
  double most = 0;
  for (int r = 0; r < P; ++r) {
    double sum = 0;
    for (const Layout& L : ls) sum += tile(L, r);
    most = std::max(most, sum);
  }
  return most;
}
// One redistribution: its words per rank, its messages added to `messages`.
Words moved(const Layout& src, const Layout& dst, double& messages) {
  const matrix::RedistPlan p = matrix::plan_redistribution(src, dst);
  messages += matrix::messages(p);
  return matrix::received_words(src, dst, p);
}

Blas3Candidate named(const char* algorithm) {
  Blas3Candidate c;
  c.algorithm = algorithm;
  return c;
}

void price(const Bound& b, Blas3Candidate& c, const Words& w, double flops) {
  c.words = busiest(w);
  c.flops = flops;
  c.pr = b.out.row_map().nprocs, c.pc = b.out.col_map().nprocs;
  const MachineProfile& m = b.q.profile;
  c.seconds = flops / m.flops_per_s(b.q.dtype) + c.words * b.elem / m.bytes_per_s +
              c.messages * m.latency_s;
}

// The rank-k updates: "triangle" (C stays; op(A)'s, op(B)'s rows beside C's rows and columns)
// and "reduce" (op(A), op(B) split along k; n x n partial triangles reduced into C).
std::vector<Blas3Candidate> rank_k_candidates(const Bound& b) {
  const Layout& A = b.A;
  const Layout& B = b.has_b ? b.B : b.A;
  const double f = blas3_flops(b.q) / b.P;
  Blas3Candidate tri = named("triangle");
  const Layout X = front::rank_k_panel(A, b.out, 0, b.a_rows);
  const Layout Y = front::rank_k_panel(B, b.out, 1, b.a_rows);
  Words w = moved(A, X, tri.messages) + moved(B, Y, tri.messages);
  if (b.has_b)  // the second pass: op(B)'s rows beside C's rows, op(A)'s beside its columns
    w = w + moved(B, front::rank_k_panel(B, b.out, 0, b.a_rows), tri.messages) +
        moved(A, front::rank_k_panel(A, b.out, 1, b.a_rows), tri.messages);
  tri.memory_bytes = std::int64_t(largest_tiles({X, Y}, b.P) * b.elem);
  tri.detail = "op(A) rows -> " + X.spec().to_string() + " and " + Y.spec().to_string() +
               ", C stays in place";
  price(b, tri, w, f);
  Blas3Candidate red = named("reduce");
  const Layout Ak = front::rank_k_split(A, b.a_rows, b.q.nb);
  const Layout W = front::rank_k_partials(b.out.mesh(), b.out.rows());
  Words v = moved(A, Ak, red.messages) + moved(W, b.out, red.messages);
  std::vector<Layout> held{Ak, W, b.out};
  if (b.has_b) {
    const Layout Bk = front::rank_k_split(B, b.a_rows, b.q.nb);
    v = v + moved(B, Bk, red.messages);
    held.push_back(Bk);
  }
  red.memory_bytes = std::int64_t(largest_tiles(held, b.P) * b.elem);
  red.detail = "op(A) -> " + Ak.spec().to_string() + ", local triangles " + W.spec().to_string() +
               " -> C's layout";
  price(b, red, v, f);
  return {tri, red};
}

// trmm / trsm: "steps" (B stays; op(A)'s rows beside B's, one block broadcast per step) and
// "local" (B's columns whole on each rank, op(A) everywhere, one local BLAS call).
std::vector<Blas3Candidate> triangular_candidates(const Bound& b) {
  const int dim = b.q.side == Side::Left ? 0 : 1;
  const Layout src = b.a_rows ? b.A : b.A.transposed();  // op(A) as geadd moves it
  const double f = blas3_flops(b.q) / b.P;
  Blas3Candidate steps = named("steps");
  const Layout Pl = front::triangular_panel(b.na, b.out, dim);
  Words w = moved(src, Pl, steps.messages);
  const DimMap& map = b.out.map(dim);
  double widest = 0;
  for (int r = 0; r < b.P; ++r) {  // the step broadcasts: B's blocks this rank does not hold
    const auto c = b.out.mesh().coords_of(r);
    const double along = double(dim == 0 ? b.out.local_rows(c) : b.out.local_cols(c));
    const double across = double(dim == 0 ? b.out.local_cols(c) : b.out.local_rows(c));
    if (map.nprocs > 1) w[static_cast<std::size_t>(r)] += (double(b.na) - along) * across;
    widest = std::max(widest, across);
  }
  const index_t step = front::triangular_step_width(b.na, map);
  steps.messages += double(b.na) / double(step) * (map.nprocs - 1);
  steps.memory_bytes = std::int64_t((largest_tiles({Pl}, b.P) + double(step) * widest) * b.elem);
  steps.detail = "op(A) -> " + Pl.spec().to_string() + ", B's blocks broadcast along its " +
                 (dim == 0 ? "rows' axes" : "columns' axes");
  // The diagonal blocks' solves (products) wait on each other: na x step x across on the path.
  const bool complex = b.q.dtype == Dtype::C64 || b.q.dtype == Dtype::C128;
  price(b, steps, w, f + double(b.na) * double(step) * widest * (complex ? 4 : 1));
  Blas3Candidate loc = named("local");
  const Layout Bw = front::triangular_whole(b.out, dim, b.q.nb);
  const Layout R = Layout::replicated(b.out.mesh(), b.na, b.na);
  const Words v =
      moved(src, R, loc.messages) + moved(b.out, Bw, loc.messages) + moved(Bw, b.out, loc.messages);
  loc.memory_bytes = std::int64_t(largest_tiles({R, Bw}, b.P) * b.elem);
  loc.detail = "op(A) -> every rank, B -> " + Bw.spec().to_string() + " and back";
  price(b, loc, v, f);
  return {steps, loc};
}

// symm / hemm: A's full square in A's layout (op(A)^T moved there), then gemm's own plan.
std::vector<Blas3Candidate> symm_candidates(const Bound& b) {
  Blas3Candidate c = named("square+gemm");
  const Words w = moved(b.A.transposed(), b.A, c.messages);
  const bool left = b.q.side == Side::Left;
  PlanRequest r;
  r.m = b.q.m, r.n = b.q.n, r.k = b.na, r.ranks = b.P, r.dtype = b.q.dtype, r.profile = b.q.profile;
  r = layouts_request(r, Op::N, Op::N, left ? b.A : b.B, left ? b.B : b.A, b.out);
  const GemmPlan g = plan_gemm(r);
  c.messages += g.chosen.messages;
  c.memory_bytes = std::int64_t(largest_tiles({b.A}, b.P) * b.elem) + g.chosen.added_bytes;
  c.detail = "A^T -> A's layout, then gemm: " + g.chosen.name();
  price(b, c, w, 0);
  c.words += g.chosen.words + g.chosen.redist_words;  // gemm's busiest rank, added on top
  c.flops = g.chosen.flops;
  c.seconds += g.chosen.seconds;
  return {c};
}

// tran / geadd: op(A) (a local transpose for op T / C) redistributed into C's layout.
std::vector<Blas3Candidate> add_candidates(const Bound& b) {
  Blas3Candidate c = named("redistribute");
  const bool t = b.q.routine == Blas3Routine::Tran || !b.a_rows;
  const Layout src = t ? b.A.transposed() : b.A;
  const Words w = moved(src, b.out, c.messages);
  c.memory_bytes = std::int64_t(
      largest_tiles(t ? std::vector<Layout>{src, b.out} : std::vector<Layout>{b.out}, b.P) *
      b.elem);
  c.detail = std::string(t ? "A^T's tiles (local transpose) -> " : "A -> ") + "C's layout";
  price(b, c, w, 0);
  return {c};
}

// The bytes a candidate may add: the memory limit, else the lean cap on the caller's tiles
// (plan.hpp: memory_limit, memory_growth); 0: no cap.
std::int64_t memory_cap(const Bound& b) {
  PlanRequest r;
  r.ranks = b.P, r.memory_limit = b.q.memory_limit, r.memory_growth = b.q.memory_growth;
  if (const std::int64_t limit = memory_limit(r); limit > 0) return limit;
  const double growth = memory_growth(r);
  if (growth < 0) return 0;
  std::vector<Layout> mine{b.A, b.out};
  if (b.has_b) mine.push_back(b.B);
  return std::max<std::int64_t>(1, std::int64_t(growth * largest_tiles(mine, b.P) * b.elem));
}

}  // namespace

std::string Blas3Candidate::name() const {
  return algorithm + " " + std::to_string(pr) + "x" + std::to_string(pc);
}

Blas3Plan plan_blas3(const Blas3Request& request) {
  const Bound b = bind(request);
  Blas3Plan out;
  out.request = request;
  out.lower_bound = blas3_lower_bound(request);
  out.flops = blas3_flops(request);
  out.cap_bytes = memory_cap(b);
  const Blas3Routine r = request.routine;
  if (plan::rank_k(r)) out.candidates = rank_k_candidates(b);
  else if (plan::triangular(r)) out.candidates = triangular_candidates(b);
  else if (plan::symmetric(r)) out.candidates = symm_candidates(b);
  else out.candidates = add_candidates(b);
  for (Blas3Candidate& c : out.candidates)
    c.fits = out.cap_bytes <= 0 || c.memory_bytes <= out.cap_bytes;
  std::stable_sort(out.candidates.begin(), out.candidates.end(), [](const auto& x, const auto& y) {
    if (x.fits != y.fits) return x.fits;
    const double tie = 0.01 * std::max(x.seconds, y.seconds);  // a near tie: fewer words
    if (std::abs(x.seconds - y.seconds) > tie) return x.seconds < y.seconds;
    return x.words < y.words;
  });
  out.chosen = out.candidates.front();
  out.why = front::blas3_why(out);
  return out;
}

}  // namespace shardmm
