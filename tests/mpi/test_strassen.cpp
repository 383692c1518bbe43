// Strassen through gemm on 1-6 ranks: every dtype, op pairs, alpha/beta, awkward shapes and
// layouts (the caller's block-cyclic, a replicated C, a line), against a serial OpenBLAS
// reference within the Winograd normwise bound (docs/ALGORITHMS.md); a small crossover so
// small products still recurse (the report says how many levels); the memory budget counts
// the scratch; Auto takes it only when allowed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "blas/blas.hpp"
#include "core/winograd.hpp"
#include "memory/workspace.hpp"
#include "mpi/gemm_check.hpp"
#include "mpi/mpi_test_util.hpp"
#include "unit/winograd_bound.hpp"  // max_abs, winograd_bound

using namespace shardmm;
using namespace shardmm::testing;

namespace {

struct Shape {
  index_t m, n, k;
};

// Runs gemm with Strassen (crossover 4) and checks max |C - Cref| against the bound with the
// deepest level count any rank used; returns the report.
template <Scalar T>
GemmReport run_case(Op opA, Op opB, Shape s, T alpha, T beta, const Mesh& mesh,
                    const std::string& lay_c, StrassenStep step = StrassenStep::Auto) {
  const index_t ar = opA == Op::N ? s.m : s.k, ac = opA == Op::N ? s.k : s.m;
  const index_t br = opB == Op::N ? s.k : s.n, bc = opB == Op::N ? s.n : s.k;
  auto bc_layout = [&](index_t r, index_t c) {
    return mesh.shape().ndims() == 2 ? Layout::block_cyclic(mesh.shape(), r, c, 3, 2)
                                     : Layout(mesh.shape(), r, c, "[I_X:c,J]");
  };
  DistMatrix<T> A(mesh, bc_layout(ar, ac)), B(mesh, bc_layout(br, bc)),
      C(mesh, lay_c.empty() ? bc_layout(s.m, s.n) : Layout(mesh.shape(), s.m, s.n, lay_c));
  A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 3); });
  const auto C0 = C.gather();
  Options o;
  o.algorithm = Algorithm::Strassen;
  o.fast_crossover = 4, o.strassen_step = step;
  GemmReport rep = gemm(opA, opB, alpha, A, B, beta, C, o);
  const auto a = A.gather(), b = B.gather(), c = C.gather();
  // No rank's tile recurses deeper; the breadth-first step's halves are padded up to whole
  // rows per rank, which may take one level more.
  const int L =
      winograd::levels(s.m, s.n, s.k, 4) + (rep.detail.find("breadth-first") != std::string::npos);
  if (world_rank() == 0) {
    std::vector<T> ref = C0;
    blas::gemm(opA, opB, s.m, s.n, s.k, alpha, a.data(), std::max<index_t>(ar, 1), b.data(),
               std::max<index_t>(br, 1), beta, ref.data(), std::max<index_t>(s.m, 1));
    double err = 0;
    for (std::size_t i = 0; i < ref.size(); ++i)
      err = std::max(err, double(std::abs(c[i] - ref[i])));
    const double u = std::numeric_limits<real_t<T>>::epsilon() / 2, cx = is_complex_v<T> ? 4 : 1;
    const double allowed = cx * (winograd_bound(s.k, L) + double(s.k * s.k)) * u * std::abs(alpha) *
                               max_abs(a) * max_abs(b) +
                           4 * u * std::abs(beta) * max_abs(C0);
    EXPECT_LE(err, allowed) << to_string(opA) << to_string(opB) << " " << s.m << "x" << s.n << "x"
                            << s.k << " " << to_string(dtype_of<T>()) << " C " << lay_c << ": "
                            << rep.to_string();
  }
  return rep;
}

template <Scalar T>
void sweep() {
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  const Shape shapes[] = {{37, 29, 45}, {1, 9, 8}, {50, 3, 31}, {24, 40, 19}};
  T alpha = T(-1.25), beta = T(0.5);
  if constexpr (is_complex_v<T>) alpha = T(0.75, -0.5), beta = T(0.25, 1);
  const Op ops[][2] = {{Op::N, Op::N}, {Op::T, Op::N}, {Op::N, Op::C}, {Op::C, Op::T}};
  int i = 0;
  for (Shape s : shapes)
    for (const auto& op : ops) {
      const T b = (i++ % 2) ? beta : T(0);
      run_case<T>(op[0], op[1], s, alpha, b, grid, "");
    }
}

TEST(Strassen, WithinTheBoundF32) { sweep<float>(); }
TEST(Strassen, WithinTheBoundF64) { sweep<double>(); }
TEST(Strassen, WithinTheBoundC64) { sweep<std::complex<float>>(); }
TEST(Strassen, WithinTheBoundC128) { sweep<std::complex<double>>(); }

// A replicated C (every rank would hold all of it) and a line mesh: the setup picks its own
// C layout and the front end folds the result back; the report says the levels taken.
TEST(Strassen, OtherLayoutsAndMeshes) {
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  const GemmReport rep = run_case<double>(Op::N, Op::T, {64, 48, 40}, 1.0, 2.0, grid, "C[I,J]");
  EXPECT_EQ(rep.algorithm, Algorithm::Strassen);
  EXPECT_NE(rep.detail.find("level(s)"), std::string::npos) << rep.detail;
  EXPECT_NE(rep.detail.substr(0, 2), "0 ") << rep.detail;  // at least one level at crossover 4
  const Mesh line = Mesh::line(MPI_COMM_WORLD, "x");
  run_case<float>(Op::T, Op::N, {33, 70, 27}, 2.0f, 0.0f, line, "");
}

// A 1 x P grid runs the line form (op(A)'s pieces travel, products accumulate into C), also
// with op(A) as a view whose leading dimension is wider than its tile (sent from a copy).
TEST(Strassen, LineFormOnOneByP) {
  const int P = world_size();
  const Mesh row(MPI_COMM_WORLD, MeshShape({"x", "y"}, {1, P}));
  for (Op opA : {Op::N, Op::C}) {
    const GemmReport rep = run_case<std::complex<double>>(
        opA, Op::T, {40, 37, 53}, {0.5, 1}, {2, 0}, row, "", StrassenStep::DepthFirst);
    EXPECT_EQ(rep.detail.find("round the line") != std::string::npos, P > 1) << rep.detail;
  }
  // Even sides and equal pieces: on two ranks one product over both pieces (strassen_pair),
  // every op pair, beta 0 and not.
  const Op ops[][2] = {{Op::N, Op::N}, {Op::T, Op::C}, {Op::C, Op::N}, {Op::N, Op::T}};
  for (const auto& op : ops) {
    const GemmReport rep =
        run_case<double>(op[0], op[1], {48, 40, 56}, -0.5, op[1] == Op::N ? 0.0 : 1.5, row, "",
                         StrassenStep::DepthFirst);
    EXPECT_EQ(rep.detail.find("over both pieces") != std::string::npos, P == 2) << rep.detail;
  }
  run_case<std::complex<float>>(Op::C, Op::T, {48, 40, 56}, {1, -1}, {0.5, 0}, row, "");
  const Layout la = Layout::block_cyclic(row.shape(), 45, 61, 3, 4);
  const index_t ld = la.local_rows(row.coords()) + 3;
  std::vector<double> storage(
      static_cast<std::size_t>(ld * std::max<index_t>(la.local_cols(row.coords()), 1)));
  auto A = DistMatrix<double>::view(row, la, storage.data(), ld);
  DistMatrix<double> B(row, Layout::block_cyclic(row.shape(), 61, 50, 3, 4)),
      C(row, Layout::block_cyclic(row.shape(), 45, 50, 3, 4)), R(row, C.layout());
  A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  Options o;
  o.algorithm = Algorithm::Strassen, o.fast_crossover = 4;
  gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o);
  o.algorithm = Algorithm::Local;
  gemm(Op::N, Op::N, 1.0, A, B, 0.0, R, o);
  const auto c = C.gather(), r = R.gather();
  double err = 0;
  for (std::size_t i = 0; i < c.size(); ++i) err = std::max(err, std::abs(c[i] - r[i]));
  EXPECT_LT(err, 1e-10);
}

// A P x 1 grid runs the column form (op(B)'s k pieces travel down the column, op(A)'s
// matching columns packed when they are not one run), every op pair, beta 0 and not.
TEST(Strassen, ColumnFormOnPByOne) {
  const int P = world_size();
  const Mesh column(MPI_COMM_WORLD, MeshShape({"x", "y"}, {P, 1}));
  const Op ops[][2] = {{Op::N, Op::N}, {Op::T, Op::C}, {Op::C, Op::N}, {Op::N, Op::T}};
  for (const auto& op : ops) {
    const GemmReport rep =
        run_case<double>(op[0], op[1], {41, 38, 53}, -0.5, op[1] == Op::N ? 0.0 : 1.5, column, "",
                         StrassenStep::DepthFirst);
    EXPECT_EQ(rep.detail.find("down the column") != std::string::npos, P > 1) << rep.detail;
  }
  run_case<std::complex<float>>(Op::C, Op::T, {30, 47, 36}, {1, -1}, {0.5, 0}, column, "");
}

// The column and grid forms add at most the local A + B + C: the workspace pool's high-water
// mark (it never shrinks: memory::held_bytes() after the call) on P x 1 and on the
// near-square grid (2 x 2, 2 x 3 at 4, 6 ranks), with block-cyclic and block operands.
TEST(Strassen, WorkspaceAtMostLocalOperands) {
  const int P = world_size();
  const index_t s = 192;
  for (const Mesh& mesh :
       {Mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {P, 1})), Mesh::grid2d(MPI_COMM_WORLD)})
    for (const bool cyclic : {true, false}) {
      auto layout = [&](const std::string& spec) {
        return cyclic ? Layout::block_cyclic(mesh.shape(), s, s, 8, 8)
                      : Layout(mesh.shape(), s, s, spec);
      };
      auto spec = [&](const char* name, const char* row, const char* col) {  // X[row_x,col_y]
        std::string out(name);
        out.append("[").append(row).append("_").append(mesh.shape().names[0]);
        out.append(",").append(col).append("_").append(mesh.shape().names[1]).append("]");
        return out;
      };
      DistMatrix<double> A(mesh, layout(spec("A", "I", "K"))), B(mesh, layout(spec("B", "K", "J"))),
          C(mesh, layout(spec("C", "I", "J")));
      A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
      B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
      C.fill([](index_t i, index_t j) { return entry<double>(i, j, 3); });
      const auto C0 = C.gather();
      Options o;
      o.algorithm = Algorithm::Strassen;
      o.fast_crossover = 16;
      o.strassen_step = StrassenStep::DepthFirst;  // the classical distribution's forms
      memory::release();
      const GemmReport rep = gemm(Op::N, Op::N, 1.0, A, B, 0.5, C, o);
      const auto held = double(memory::held_bytes());
      const double abc = double(A.local_rows() * A.local_cols() + B.local_rows() * B.local_cols() +
                                C.local_rows() * C.local_cols()) *
                         sizeof(double);
      EXPECT_LE(held, abc) << "cyclic " << cyclic << ": " << held / abc << " x local A+B+C, "
                           << rep.to_string();
      if (s / P >= 16) {  // a rank's pieces reach the crossover (not at 49 ranks, say)
        EXPECT_NE(rep.detail.substr(0, 2), "0 ") << rep.detail;
      }
      const bool grid = mesh.shape().sizes[0] > 1 && mesh.shape().sizes[1] > 1;
      EXPECT_EQ(rep.detail.find("along the grid") != std::string::npos, grid) << rep.detail;
      EXPECT_LE(gemm_error(Op::N, Op::N, 1.0, A, B, 0.5, C0, C), 100.0) << rep.to_string();
    }
}

// The scratch is counted: a limit below what Strassen needs fails on every rank, before
// anything moves.
TEST(Strassen, MemoryLimitCountsTheScratch) {
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> A(grid, 96, 96, "bc(8,8)"), B(grid, 96, 96, "bc(8,8)"),
      C(grid, 96, 96, "bc(8,8)");
  Options o;
  o.algorithm = Algorithm::Strassen;
  o.fast_crossover = 8;
  // The operands alone (a rank's A, B and C tiles of 96 x 96 / P): nothing left for the rest.
  o.memory_limit = std::int64_t{3} * 96 * 96 * 8 / world_size();
  expect_same_error_everywhere<OutOfMemory>([&] { gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o); },
                                            "strassen");
}

// The breadth-first step (CAPS) on 7 Q ranks (two steps at 49): odd shapes, the smallest m and n it
// takes (2P), a replicated C, every op pair, against the reference (run_case); the pool holds no
// more than the planner's estimate (and at one step at least 0.9 x of it); off below the crossover
// (on when asked for: BreadthFirst) or with DepthFirst; asked for on other rank counts, the same
// NotSupported on every rank; a grid (2.5D's option, once this step's) the same InvalidArgument.
TEST(Strassen, BreadthFirstStepOnSevenGroups) {
  const int P = world_size();
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  if (P % 7 != 0) {
    DistMatrix<double> A(grid, 64, 64, "bc(8,8)"), B(grid, 64, 64, "bc(8,8)"),
        C(grid, 64, 64, "bc(8,8)");
    Options o;
    o.algorithm = Algorithm::Strassen, o.strassen_step = StrassenStep::BreadthFirst;
    expect_same_error_everywhere<NotSupported>([&] { gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o); },
                                               "breadth-first");
    o.strassen_step = StrassenStep::Auto, o.grid_k = 7;
    expect_same_error_everywhere<InvalidArgument>([&] { gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o); },
                                                  "strassen_step");
    return;
  }
  const index_t p = P;
  const Shape shapes[] = {
      {8 * p + 5, 6 * p + 3, 38}, {2 * p, 2 * p + 1, 5}, {3 * p + 1, 5 * p - 1, 2 * p + 3}};
  const Op ops[][2] = {{Op::N, Op::N}, {Op::T, Op::C}, {Op::C, Op::N}, {Op::N, Op::T}};
  for (const Shape& s : shapes)
    for (const auto& op : ops) {
      const GemmReport rep = run_case<double>(op[0], op[1], s, 1.5, -0.5, grid, "");
      EXPECT_NE(rep.detail.find("breadth-first"), std::string::npos) << rep.detail;
    }
  run_case<std::complex<float>>(Op::C, Op::T, {40, 37, 29}, {0.5, 1}, {0, 1}, grid, "C[I,J]");
  EXPECT_EQ(
      run_case<double>(Op::N, Op::N, {61, 45, 38}, 1.0, 0.0, grid, "", StrassenStep::DepthFirst)
          .detail.find("breadth-first"),
      std::string::npos);
  // The pool's high-water mark against the planner's estimate of the step.
  DistMatrix<double> A(grid, 280, 210, "bc(8,8)"), B(grid, 210, 245, "bc(8,8)"),
      C(grid, 280, 245, "bc(8,8)");
  A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  Options o;
  o.algorithm = Algorithm::Strassen, o.fast_crossover = 300;  // above the smallest side: off
  EXPECT_EQ(gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o).detail.find("breadth-first"),
            std::string::npos);
  o.strassen_step = StrassenStep::BreadthFirst;  // asked for: taken below the crossover too
  EXPECT_NE(gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o).detail.find("breadth-first"),
            std::string::npos);
  o.strassen_step = StrassenStep::Auto;
  o.fast_crossover = 16;
  memory::release();
  const GemmReport rep = gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o);
  PlanRequest r;
  r.m = 280, r.n = 245, r.k = 210, r.ranks = P, r.allow_fast = true, r.fast_crossover = 16;
  Candidate caps{Algorithm::Strassen, Stationary::C, RingForm::Auto, 1, P / 7, 7};
  caps = evaluate(r, caps);
  const auto local = [](const DistMatrix<double>& X) { return X.local_rows() * X.local_cols(); };
  // The estimate: the busiest rank's A, B and C (bc(8,8) deals them unevenly) plus what the
  // step adds.
  const double mine = double(local(A) + local(B) + local(C));
  const double held_here = double(memory::held_bytes()) + mine * sizeof(double);
  double most[2] = {0, 0};  // the busiest rank's operands, and pool plus operands
  const double here[2] = {mine, held_here};
  ASSERT_EQ(MPI_Allreduce(here, most, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
  const double estimate = most[0] * sizeof(double) + double(caps.added_bytes);
  EXPECT_LE(most[1], estimate) << rep.to_string();
  if (rep.detail.rfind("1+", 0) == 0) {  // one step: all in the pool (a second owns its own)
    EXPECT_GE(most[1], 0.9 * estimate) << rep.to_string();
  }
  bool priced = false;
  for (const Candidate& c : plan_gemm(r).candidates) priced |= c.name() == caps.name();
  EXPECT_TRUE(priced) << caps.name();
}

// Auto: never Strassen unless allow_fast; allowed, gemm runs what the planner (with fast
// candidates) chooses for these block-cyclic inputs.
TEST(Strassen, AutoOnlyWhenAllowed) {
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> A(grid, 300, 300, "bc(16,16)"), B(grid, 300, 300, "bc(16,16)"),
      C(grid, 300, 300, "bc(16,16)");
  Options o;
  EXPECT_NE(gemm_dry_run(Op::N, Op::N, A, B, C, o).algorithm, Algorithm::Strassen);
  o.allow_fast = true;
  PlanRequest r;
  r.m = r.n = r.k = 300, r.ranks = world_size(), r.allow_fast = true;
  r = block_cyclic_request(r, Op::N, Op::N, grid.shape().sizes[0], grid.shape().sizes[1], 16);
  bool priced = false;
  for (const Candidate& c : plan_gemm(r).candidates) priced |= c.algorithm == Algorithm::Strassen;
  EXPECT_TRUE(priced);
  const Algorithm chosen = plan_gemm(r).chosen.algorithm;
  EXPECT_EQ(gemm_dry_run(Op::N, Op::N, A, B, C, o).algorithm, chosen);
}

}  // namespace
