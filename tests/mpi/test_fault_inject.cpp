// Failure injection inside gemm: a rank-local failure (SHARDMM_FAULT_INJECT) at the plan,
// redistribute and multiply phases of every algorithm must make every rank throw the same
// error (no rank left waiting in a collective: ctest's timeout is the backstop), and the
// next call on the same mesh must run normally and be correct (no stray messages).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/fault.hpp"
#include "mpi/gemm_check.hpp"
#include "mpi/mpi_test_util.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

enum class MeshKind { Grid, Line, Square };

struct Case {
  const char* name;
  Algorithm algorithm;
  MeshKind mesh;
  RingForm form;
  Stationary stationary;
  bool moves;  // replicated operands must be redistributed for this algorithm at P > 1
};

const Case kCases[] = {
    {"local", Algorithm::Local, MeshKind::Grid, RingForm::Auto, Stationary::Auto, false},
    {"summa C", Algorithm::Summa, MeshKind::Grid, RingForm::Auto, Stationary::C, true},
    {"summa A", Algorithm::Summa, MeshKind::Grid, RingForm::Auto, Stationary::A, true},
    {"summa B", Algorithm::Summa, MeshKind::Grid, RingForm::Auto, Stationary::B, true},
    {"cannon", Algorithm::Cannon, MeshKind::Square, RingForm::Auto, Stationary::Auto, true},
    {"ring allgather-A", Algorithm::Ring, MeshKind::Line, RingForm::AllGatherA, Stationary::Auto,
     true},
    {"ring reduce-scatter", Algorithm::Ring, MeshKind::Line, RingForm::ReduceScatter,
     Stationary::Auto, true},
    {"sharded", Algorithm::Sharded, MeshKind::Grid, RingForm::Auto, Stationary::Auto, false},
    {"2.5d", Algorithm::Gemm25D, MeshKind::Grid, RingForm::Auto, Stationary::Auto, true},
    {"auto", Algorithm::Auto, MeshKind::Grid, RingForm::Auto, Stationary::Auto, true},
};

bool is_square(int p) {
  int q = 1;
  while ((q + 1) * (q + 1) <= p) ++q;
  return q * q == p;
}

Mesh make_mesh(MeshKind kind) {
  if (kind == MeshKind::Line) return Mesh::line(MPI_COMM_WORLD, "x");
  const auto f = factor_near_square(world_size(), 2);  // Square: only used when P is square
  return Mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {f[0], f[1]}));
}

// The case's options, with narrow panels and chunks, so every algorithm takes several steps
// (the ring reads no panel: its chunk at p = 2 is ring_chunk).
Options options_of(const Case& c) {
  Options o;
  o.algorithm = c.algorithm, o.ring_form = c.form, o.stationary = c.stationary;
  if (c.algorithm != Algorithm::Ring) o.panel = 3;
  o.stationary_chunk = 3, o.ring_chunk = 3;
  return o;
}

// Runs C <- A*B + C on replicated operands of `c` with SHARDMM_FAULT_INJECT = spec. Returns
// whether it threw; fails the test unless every rank threw (or none did) with one message
// of type E containing `must_contain`.
template <class E>
bool run_injected(const Case& c, const std::string& spec, const std::string& must_contain) {
  const Mesh mesh = make_mesh(c.mesh);
  const index_t m = 13, n = 11, k = 9;
  DistMatrix<double> A(mesh, m, k, "A[I,K]"), B(mesh, k, n, "B[K,J]"), C(mesh, m, n, "C[I,J]");
  A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  const Options o = options_of(c);
  std::string what;
  int thrown = 0;
  {
    const Injection inject(spec);
    try {
      gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o);
    } catch (const E& e) {
      thrown = 1, what = e.what();
    }
  }
  int everywhere = 0, anywhere = 0;
  MPI_Allreduce(&thrown, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&thrown, &anywhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(everywhere, anywhere) << "only some ranks threw: " << what;
  if (everywhere == 1) {
    expect_same_error_everywhere<E>([&] { throw E(what); }, must_contain);
    EXPECT_NE(what.find("first failing rank"), std::string::npos) << what;
  }
  return everywhere == 1;
}

// After an agreed failure the mesh is clean: the same call without injection is correct.
void expect_clean_rerun(const Case& c) {
  const Mesh mesh = make_mesh(c.mesh);
  const index_t m = 13, n = 11, k = 9;
  DistMatrix<double> A(mesh, m, k, "A[I,K]"), B(mesh, k, n, "B[K,J]"), C(mesh, m, n, "C[I,J]");
  A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<double>(i, j, 3); });
  const auto c0 = C.gather();
  const Options o = options_of(c);
  gemm(Op::N, Op::N, 0.5, A, B, -1.5, C, o);
  EXPECT_LE(gemm_error(Op::N, Op::N, 0.5, A, B, -1.5, c0, C), 10.0) << c.name;
}

// Whether a phase must be reached (nullopt: either way). 2.5D always moves its operands onto
// its own 3D mesh; at P = 1 other layout changes may or may not go through an exchange, and
// Auto may choose to multiply the replicated operands locally.
std::optional<bool> expected_reach(const Case& c, const std::string& phase) {
  if (phase != "redistribute") return true;
  if (c.algorithm == Algorithm::Gemm25D) return true;
  if (c.algorithm == Algorithm::Auto || world_size() == 1) return std::nullopt;
  return c.moves;
}

TEST(FaultInject, EveryPhaseOfEveryAlgorithmFailsOnEveryRank) {
  const int P = world_size();
  for (const Case& c : kCases) {
    if (c.mesh == MeshKind::Square && !is_square(P)) continue;
    for (const std::string phase : {"plan", "redistribute", "multiply"}) {
      SCOPED_TRACE(std::string(c.name) + ", phase " + phase + ", P=" + std::to_string(P));
      // One rank (the last) cannot allocate: every rank throws OutOfMemory.
      const std::optional<bool> expect = expected_reach(c, phase);
      const bool one =
          run_injected<OutOfMemory>(c, phase + "@" + std::to_string(P - 1), "allocation failed");
      // Every rank fails: one message (the lowest failing rank's) everywhere.
      const bool all =
          run_injected<Error>(c, phase + "@*:error", "injected failure in phase '" + phase + "'");
      EXPECT_EQ(one, all);
      if (expect) {
        EXPECT_EQ(one, *expect);
      }
      expect_clean_rerun(c);
    }
  }
}

// A failure in the file phases is agreed the same way (the launcher test covers them end to
// end); here: a rank that cannot write fails every rank and leaves no file behind.
TEST(FaultInject, WriteFailureOnOneRankLeavesNoFile) {
  const Mesh mesh = make_mesh(MeshKind::Grid);
  DistMatrix<double> C(mesh, 7, 5, "C[I_X,J_Y]");
  C.fill([](index_t i, index_t j) { return entry<double>(i, j, 4); });
  const std::string path = "fault_inject_out_" + std::to_string(world_size()) + ".npy";
  if (world_rank() == 0) (void)std::remove(path.c_str());
  MPI_Barrier(MPI_COMM_WORLD);
  {
    const Injection inject("write@" + std::to_string(world_size() - 1));
    expect_same_error_everywhere<OutOfMemory>([&] { write_npy(path, C); },
                                              "[write: first failing rank");
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  EXPECT_EQ(f, nullptr) << path << " exists after a failed write";
  if (f) (void)std::fclose(f);
  write_npy(path, C);  // and the next write works
  DistMatrix<double> D(mesh, 7, 5, "C[I_X,J_Y]");
  read_npy(path, D);
  EXPECT_EQ(D.gather(), C.gather());
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) (void)std::remove(path.c_str());
}

}  // namespace
