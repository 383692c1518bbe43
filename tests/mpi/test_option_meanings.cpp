// One meaning per option name: Options::panel cuts SUMMA C-stationary's k-panels and nothing
// else, Options::stationary_chunk SUMMA A/B-stationary's chunks, Options::ring_chunk the
// two-rank ring's swap and a longer ring's passes; each is seen in the messages of
// its own algorithm and in no other's. Bad values (negative widths, a panel given to the ring, a
// grid given to Strassen) fail with the same InvalidArgument on every rank before anything moves.
#include <gtest/gtest.h>

#include "mpi/gemm_check.hpp"
#include "mpi/mpi_test_util.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

// op(A) op(B) on `mesh` with A, B and C in layouts `a`, `b`, `c` under options `o`: this rank's
// messages (the product is checked against the reference too).
std::int64_t messages(const Mesh& mesh, const char* a, const char* b, const char* c,
                      const Options& o) {
  const index_t m = 30, n = 26, k = 34;
  DistMatrix<double> A(mesh, m, k, a), B(mesh, k, n, b), C(mesh, m, n, c);
  A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<double>(i, j, 3); });
  const auto C0 = C.gather();
  const GemmReport rep = gemm(Op::N, Op::N, 1.5, A, B, -0.5, C, o);
  EXPECT_LE(gemm_error(Op::N, Op::N, 1.5, A, B, -0.5, C0, C), 10.0) << rep.to_string();
  return rep.messages;
}

struct Widths {
  index_t panel = 0, stationary_chunk = 0, ring_chunk = 0;
};

Options with(Options o, const Widths& w) {
  o.panel = w.panel, o.stationary_chunk = w.stationary_chunk, o.ring_chunk = w.ring_chunk;
  return o;
}

// The algorithm of `base` on these layouts: the width that is its own (`own`) adds messages;
// the widths of the others leave them as they are.
void expect_only_own_width(const Mesh& mesh, const char* a, const char* b, const char* c,
                           const Options& base, const Widths& own, const Widths& others) {
  const std::int64_t plain = messages(mesh, a, b, c, base);
  EXPECT_GT(messages(mesh, a, b, c, with(base, own)), plain) << to_string(base.algorithm);
  EXPECT_EQ(messages(mesh, a, b, c, with(base, others)), plain) << to_string(base.algorithm);
}

// Each ring form on layouts it runs in place along axis x.
struct RingCase {
  RingForm form;
  const char *a, *b, *c;
};
constexpr RingCase kRingForms[] = {{RingForm::AllGatherA, "A[I_X,J]", "B[I,J_X]", "C[I,J_X]"},
                                   {RingForm::AllGatherB, "A[I_X,J]", "B[I,J_X]", "C[I_X,J]"},
                                   {RingForm::ReduceScatter, "A[I,J_X]", "B[I_X,J]", "C[I_X,J]"}};

TEST(OptionMeanings, PanelIsSummasOnly) {
  if (world_size() < 2) GTEST_SKIP() << "one rank sends nothing";
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  Options o;
  o.algorithm = Algorithm::Summa, o.stationary = Stationary::C;
  expect_only_own_width(grid, "A[I_X,J_Y]", "B[I_X,J_Y]", "C[I_X,J_Y]", o, {.panel = 1},
                        {.stationary_chunk = 1, .ring_chunk = 1});
}

TEST(OptionMeanings, StationaryChunkIsSummaABs) {
  if (world_size() < 2) GTEST_SKIP() << "one rank sends nothing";
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  for (Stationary s : {Stationary::A, Stationary::B}) {
    Options o;
    o.algorithm = Algorithm::Summa, o.stationary = s;
    expect_only_own_width(grid, "A[I_X,J_Y]", "B[I_X,J_Y]", "C[I_X,J_Y]", o,
                          {.stationary_chunk = 1}, {.panel = 1, .ring_chunk = 1});
  }
}

// Rings of two ranks along x (replicated over y when there are more): every form swaps in
// ring_chunk pieces; SUMMA's chunk does not reach it (its panel is refused: below).
TEST(OptionMeanings, RingChunkIsTheRings) {
  const int P = world_size();
  if (P % 2 != 0) GTEST_SKIP() << "rings of two ranks need an even rank count";
  const Mesh mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {2, P / 2}));
  for (const RingCase& f : kRingForms) {
    Options o;
    o.algorithm = Algorithm::Ring, o.ring_axis = "x", o.ring_form = f.form;
    expect_only_own_width(mesh, f.a, f.b, f.c, o, {.ring_chunk = 1}, {.stationary_chunk = 1});
  }
}

// A ring of more than two ranks: ring_chunk cuts every form's passes, over k for the
// AllGather forms' tiles and over C's columns for the reduce-scatter form's sums (each pass
// p - 1 more messages); SUMMA's chunk does not reach it.
TEST(OptionMeanings, RingChunkIsTheLongRingsPass) {
  const int P = world_size();
  if (P < 3) GTEST_SKIP() << "a ring of two is the swap above";
  const Mesh line(MPI_COMM_WORLD, MeshShape({"x"}, {P}));
  for (const RingCase& f : kRingForms) {
    Options o;
    o.algorithm = Algorithm::Ring, o.ring_axis = "x", o.ring_form = f.form;
    expect_only_own_width(line, f.a, f.b, f.c, o, {.ring_chunk = 5}, {.stationary_chunk = 1});
  }
}

TEST(OptionMeanings, BadValuesFailOnEveryRank) {
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> A(grid, 20, 16, "bc(4,4)"), B(grid, 16, 12, "bc(4,4)"),
      C(grid, 20, 12, "bc(4,4)");
  auto refused = [&](const Options& o, const std::string& part) {
    expect_same_error_everywhere<InvalidArgument>([&] { gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o); },
                                                  part);
  };
  for (Algorithm a : {Algorithm::Auto, Algorithm::Summa, Algorithm::Ring}) {
    Options o;
    o.algorithm = a;
    refused(with(o, {.stationary_chunk = -1}), "stationary_chunk -1 < 0");
    refused(with(o, {.ring_chunk = -4}), "ring_chunk -4 < 0");
    if (a != Algorithm::Ring) refused(with(o, {.panel = -2}), "panel -2 < 0");
  }
  Options ring;
  ring.algorithm = Algorithm::Ring, ring.panel = 8;  // the ring's chunk once
  refused(ring, "Options::ring_chunk");
  Options strassen;
  strassen.algorithm = Algorithm::Strassen, strassen.grid_k = 7;  // its breadth-first step once
  refused(strassen, "Options::strassen_step");
  strassen.grid_k = 0, strassen.grid_m = 1;
  refused(strassen, "Options::strassen_step");
  // Nothing to compute (alpha 0): the options are checked all the same.
  Options auto_negative;
  auto_negative.panel = -1;
  expect_same_error_everywhere<InvalidArgument>(
      [&] { gemm(Op::N, Op::N, 0.0, A, B, 1.0, C, auto_negative); }, "panel -1 < 0");
}

TEST(OptionMeanings, StrassenStepNames) {
  for (StrassenStep s : {StrassenStep::Auto, StrassenStep::BreadthFirst, StrassenStep::DepthFirst})
    EXPECT_EQ(parse_strassen_step(to_string(s)), s);
  EXPECT_EQ(parse_strassen_step("Breadth_First"), StrassenStep::BreadthFirst);
  EXPECT_THROW(parse_strassen_step("7"), InvalidArgument);
}

}  // namespace
