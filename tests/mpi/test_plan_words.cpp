// The planner's predicted words per rank equal the words measured on real MPI runs (busiest
// rank's bytes received / sizeof(T)) when the operands already sit in the candidate's layouts.
#include <gtest/gtest.h>

#include <numeric>

#include "mpi/gemm_check.hpp"
#include "mpi/mpi_test_util.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

constexpr index_t M = 96, N = 48, K = 144;  // divisible by every grid used here

double measured_words(const GemmReport& r) {
  double w = double(r.bytes_received) / sizeof(double), mx = 0;
  MPI_Allreduce(&w, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return mx;
}

PlanRequest base_request() {
  PlanRequest r;
  r.m = M, r.n = N, r.k = K, r.ranks = world_size();
  return r;
}

double predicted(const std::string& name, const PlanRequest& r) {
  for (const Candidate& c : plan_gemm(r).candidates)
    if (c.name() == name) return c.words;
  ADD_FAILURE() << "no candidate " << name;
  return -1;
}

// Runs `algo` with A, B, C in the given layouts on `mesh` and checks the words moved.
void expect_words(const Mesh& mesh, const std::string& la, const std::string& lb,
                  const std::string& lc, const Options& o, const std::string& candidate,
                  const PlanRequest& request = base_request()) {
  DistMatrix<double> A(mesh, M, K, la), B(mesh, K, N, lb), C(mesh, M, N, lc);
  A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  const GemmReport r = gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o);
  EXPECT_EQ(r.redist_bytes_received, 0) << candidate;
  EXPECT_DOUBLE_EQ(measured_words(r), predicted(candidate, request))
      << candidate << ": " << r.to_string();
}

// Runs check(mesh, p, q) on every p x q = P grid.
template <class F>
void for_each_grid(F check) {
  const int P = world_size();
  for (int p = 1; p <= P; ++p)
    if (P % p == 0) check(Mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {p, P / p})), p, P / p);
}

Options summa_c() {
  Options o;
  o.algorithm = Algorithm::Summa;
  o.stationary = Stationary::C;
  return o;
}

TEST(PlanWords, Summa) {
  if (world_size() == 1) GTEST_SKIP() << "no communication on one rank";
  for_each_grid([](const Mesh& mesh, int p, int q) {
    expect_words(mesh, "A[I_X,J_Y]", "B[I_X,J_Y]", "C[I_X,J_Y]", summa_c(),
                 "summa(C) " + std::to_string(p) + "x" + std::to_string(q));
  });
}

// ScaLAPACK-style inputs on the caller's grid, with block sizes that split unevenly (nb 144 =
// K: one process column holds all of A's k, one process row all of B's; nb 40: 40/40/40/24):
// the prediction is the busiest rank's words from the actual tiles, as gemm's Auto plans it.
TEST(PlanWords, SummaOnUnevenBlockCyclicTiles) {
  if (world_size() == 1) GTEST_SKIP() << "no communication on one rank";
  for_each_grid([](const Mesh& mesh, int p, int q) {
    for (const index_t nb : {16, 40, 144}) {
      const std::string bc = "bc(" + std::to_string(nb) + "," + std::to_string(nb) + ")";
      expect_words(mesh, bc, bc, bc, summa_c(),
                   "summa(C) " + std::to_string(p) + "x" + std::to_string(q),
                   block_cyclic_request(base_request(), Op::N, Op::N, p, q, nb));
    }
  });
}

TEST(PlanWords, RingForms) {
  const int P = world_size();
  if (P == 1) GTEST_SKIP() << "no communication on one rank";
  Mesh mesh = Mesh::line(MPI_COMM_WORLD, "x");
  const std::pair<RingForm, const char*> forms[] = {{RingForm::AllGatherA, "AG-A"},
                                                    {RingForm::AllGatherB, "AG-B"},
                                                    {RingForm::ReduceScatter, "RS"}};
  for (auto [form, tag] : forms) {
    Options o;
    o.algorithm = Algorithm::Ring;
    o.ring_form = form;
    const bool rs = form == RingForm::ReduceScatter;
    const char* lc = form == RingForm::AllGatherA ? "C[I,J_X]" : "C[I_X,J]";
    expect_words(mesh, rs ? "A[I,K_X]" : "A[I_X,K]", rs ? "B[K_X,J]" : "B[K,J_X]", lc, o,
                 std::string("ring(") + tag + ") " + std::to_string(P));
  }
}

TEST(PlanWords, Gemm3D) {
  const int P = world_size();
  if (P == 1) GTEST_SKIP() << "no pm x pn x pk grid with pk >= 2 on one rank";
  for (int pm = 1; pm <= P; ++pm)
    for (int pn = 1; pm * pn <= P; ++pn) {
      if (P % (pm * pn) || P / (pm * pn) < 2) continue;
      const int pk = P / (pm * pn);
      // The caller's mesh and layouts are the algorithm's own, so nothing is redistributed.
      Mesh mesh(MPI_COMM_WORLD, MeshShape({"x", "y", "z"}, {pm, pn, pk}));
      const index_t L = std::lcm(pm, pn);
      const index_t slice = (K / pk + L - 1) / L * L;
      const index_t nb_c = (N + index_t{pn} * pk - 1) / (index_t{pn} * pk);
      const std::string bcs = ":bc" + std::to_string(slice / pn);
      Options o;
      o.algorithm = Algorithm::Gemm25D;
      o.grid_m = pm, o.grid_n = pn, o.grid_k = pk;
      expect_words(
          mesh, "A[I_X,K_ZY" + bcs + "]",
          "B[K_ZX:bc" + std::to_string(slice / pm) + ",J_Y:bc" + std::to_string(pk * nb_c) + "]",
          "C[I_X,J_YZ:bc" + std::to_string(nb_c) + "]", o,
          "25d " + std::to_string(pm) + "x" + std::to_string(pn) + "x" + std::to_string(pk));
    }
}

// preferred_layouts: operands made in the layouts it returns, on the mesh it returns, are
// multiplied by gemm's Auto with the plan it names and nothing moved into other layouts.
struct Shape {
  const char* name;
  index_t m, n, k;
  Op opA, opB;
};
constexpr Shape kShapes[] = {{"tall", 2048, 128, 128, Op::N, Op::N},
                             {"large k", 128, 128, 2048, Op::N, Op::N},
                             {"outer", 512, 512, 32, Op::N, Op::N},
                             {"square", 192, 192, 192, Op::N, Op::N},
                             {"tall TN", 2048, 128, 128, Op::T, Op::N}};

double max_over_ranks(double v) {
  double mx = 0;
  MPI_Allreduce(&v, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return mx;
}

TEST(PreferredLayouts, AutoRunsInThemWithoutRedistributing) {
  for (const Shape& s : kShapes) {
    PlanRequest r;
    r.m = s.m, r.n = s.n, r.k = s.k, r.ranks = world_size();
    r.profile = MachineProfile::from_environment();  // as gemm plans
    const PreferredLayouts pref = preferred_layouts(r, s.opA, s.opB);
    const std::string what = std::string(s.name) + " on " + pref.mesh.to_string() + ": A " +
                             pref.A.to_string() + ", B " + pref.B.to_string() + ", C " +
                             pref.C.to_string() + ", " + pref.plan.name();
    EXPECT_TRUE(pref.in_place) << what;
    const Mesh mesh(MPI_COMM_WORLD, pref.mesh);
    DistMatrix<double> A(mesh, pref.A), B(mesh, pref.B), C(mesh, pref.C);
    A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
    B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
    C.fill([](index_t i, index_t j) { return entry<double>(i, j, 3); });
    const std::vector<double> C0 = C.gather();
    const GemmReport rep = gemm(s.opA, s.opB, 1.0, A, B, 0.5, C);
    EXPECT_EQ(max_over_ranks(double(rep.redist_bytes_received)), 0) << what << "\n"
                                                                    << rep.to_string();
    EXPECT_EQ(rep.algorithm, pref.plan.algorithm) << what << "\n" << rep.to_string();
    EXPECT_LE(gemm_error(s.opA, s.opB, 1.0, A, B, 0.5, C0, C), 10.0) << what;
    // Tall (m / n = 16 >= P): one operand's n k (1 - 1/P) is the lower bound, and reached.
    if (s.m == 2048 && world_size() > 1) {
      EXPECT_LE(measured_words(rep), 1.10 * lower_bound_words(s.m, s.n, s.k, world_size()))
          << what << "\n"
          << rep.to_string();
    }
  }
}

}  // namespace
