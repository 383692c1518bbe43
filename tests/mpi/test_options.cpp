// Options that shape how a call runs rather than what it computes: the BLAS thread count is
// set and reported; with Options::overlap the local GEMMs poll the messages in flight;
// Options::wait, else SHARDMM_WAIT, says whether a rank spins or sleeps while it waits.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "comm/exchange.hpp"
#include "comm/wait.hpp"
#include "memory/workspace.hpp"
#include "mpi/gemm_check.hpp"
#include "mpi/npy_test_util.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

struct Operands {
  Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> A{mesh, 96, 80, "A[I_X,K_Y]"}, B{mesh, 80, 72, "B[K_X,J_Y]"},
      C{mesh, 96, 72, "C[I_X,J_Y]"};
  Operands() {
    A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
    B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  }
};

TEST(Options, BlasThreadsAreSetAndReported) {
  const int before = blas::num_threads();
  for (int threads : {2, 1}) {
    Operands x;
    Options o;
    o.blas_threads = threads;
    const GemmReport r = gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C, o);
    EXPECT_EQ(r.blas_threads, threads);
    EXPECT_EQ(blas::num_threads(), threads);
    const std::vector<double> zero(std::size_t{96} * 72, 0.0);
    EXPECT_LE(gemm_error(Op::N, Op::N, 1.0, x.A, x.B, 0.0, zero, x.C), 10.0);
  }
  blas::set_num_threads(before);
}

// An overlapping algorithm multiplies under a blas::Progress: its GEMMs run in blocks and
// poll the transfers in flight (Open MPI moves a large message only inside MPI calls). Small
// blocks here, so these small products are cut, and on one node too (by default only meshes
// spanning nodes poll); without overlap nothing polls.
struct Case {
  const char* name;
  Algorithm algorithm;
  RingForm form;
  const char *a, *b, *c;
  bool has_overlap_option;
};

std::int64_t polls_of(const Case& cs, bool overlap) {
  const Mesh mesh = cs.algorithm == Algorithm::Ring ? Mesh::line(MPI_COMM_WORLD, "X")
                                                    : Mesh::grid2d(MPI_COMM_WORLD, "X", "Y");
  DistMatrix<double> A{mesh, 300, 260, cs.a}, B{mesh, 260, 280, cs.b}, C{mesh, 300, 280, cs.c};
  A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<double>(i, j, 3); });
  const auto c0 = C.gather();
  Options o;
  o.algorithm = cs.algorithm;
  o.ring_form = cs.form;
  o.overlap = overlap;
  const std::int64_t before = blas::progress_polls();
  gemm(Op::N, Op::N, 0.5, A, B, -1.0, C, o);
  const std::int64_t polls = blas::progress_polls() - before;
  EXPECT_LE(gemm_error(Op::N, Op::N, 0.5, A, B, -1.0, c0, C), 10.0) << cs.name;
  return polls;
}

TEST(Options, OverlappedGemmsPollTheMessagesInFlight) {
  const blas::Blocking saved = blas::blocking();
  EXPECT_FALSE(Mesh::line(MPI_COMM_WORLD).spans_nodes());  // one machine: polls only if asked
  blas::set_blocking({1 << 14, 16, true});
  const Case cases[] = {
      {"ring AG-A", Algorithm::Ring, RingForm::AllGatherA, "A[I_X,K]", "B[K,J_X]", "C[I,J_X]",
       true},
      {"ring AG-B", Algorithm::Ring, RingForm::AllGatherB, "A[I_X,K]", "B[K,J_X]", "C[I_X,J]",
       true},
      {"ring RS", Algorithm::Ring, RingForm::ReduceScatter, "A[I,K_X]", "B[K_X,J]", "C[I_X,J]",
       true},
      {"summa", Algorithm::Summa, RingForm::Auto, "A[I_X,K_Y]", "B[K_X,J_Y]", "C[I_X,J_Y]", true},
      {"sharded", Algorithm::Sharded, RingForm::Auto, "A[I_X,K_Y]", "B[K_X,J_Y]", "C[I_X,J_Y]",
       false},
  };
  for (const Case& cs : cases) {
    const std::int64_t on = polls_of(cs, true);
    if (world_size() > 1) {
      EXPECT_GT(on, 0) << cs.name << ": nothing polled with overlap";
    }
    if (cs.has_overlap_option) {
      EXPECT_EQ(polls_of(cs, false), 0) << cs.name << " without overlap";
    }
  }
  blas::set_blocking(saved);
}

// SUMMA A/B-stationary's chunks: where the GEMMs poll (a mesh across nodes, or
// blas::Blocking::on_node), chunk i + 1 aligns into a second buffer (workspace slot
// Realigned1) while chunk i multiplies on a worker thread, and the product is the same;
// otherwise one chunk at a time, and the second buffer is never taken.
TEST(Options, StationaryChunksAlignBesideTheGemm) {
  if (world_size() < 2) GTEST_SKIP() << "one rank moves nothing";
  const blas::Blocking saved = blas::blocking();
  const Mesh grid = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> A{grid, 150, 130, "bc(8,8)"}, B{grid, 130, 140, "bc(8,8)"},
      C{grid, 150, 140, "bc(8,8)"};
  A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<double>(i, j, 3); });
  const auto c0 = C.gather();
  for (Stationary st : {Stationary::A, Stationary::B})
    for (const bool polled : {true, false}) {
      blas::set_blocking({saved.flops, saved.min_width, polled});
      DistMatrix<double> out = C;
      Options o;
      o.algorithm = Algorithm::Summa, o.stationary = st, o.stationary_chunk = 8;
      memory::release();
      const GemmReport r = gemm(Op::N, Op::N, 0.5, A, B, -1.0, out, o);
      EXPECT_LE(gemm_error(Op::N, Op::N, 0.5, A, B, -1.0, c0, out), 10.0) << r.to_string();
      double second = double(memory::held_bytes(memory::Slot::Realigned1)), most = 0;
      ASSERT_EQ(MPI_Allreduce(&second, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
      EXPECT_EQ(most > 0, polled) << r.to_string();
    }
  blas::set_blocking(saved);
}

// gemm prices a chain broadcast's pipeline fill as its GEMMs will relay it: every panel pays
// it where nothing polls (one machine), once per stream of panels where the GEMMs poll the
// messages in flight (a mesh across nodes, or blas::Blocking::on_node). With the suite's
// calibrated 200 Mbit/s cluster, that takes 2048 x 1024 x 2048 on ScaLAPACK's 4x1 grid
// (bc 256) from SUMMA A-stationary, which moves C, to C-stationary, which moves only B.
TEST(Options, AutoPricesTheRelaysAsTheGemmsPollThem) {
  if (world_size() != 4) GTEST_SKIP() << "the shape is priced for 4 ranks";
  if (Mesh::line(MPI_COMM_WORLD).spans_nodes())
    GTEST_SKIP() << "the mesh spans nodes: its GEMMs poll";
  MachineProfile slow;
  slow.latency_s = 2.19e-3, slow.bytes_per_s = 10.87e6;
  slow.gflops[0] = 23.8, slow.gflops[1] = 11.5;  // f32, f64 per rank, as calibrated there
  const std::string path = npy::file("slow-profile.json");
  npy::put_file(path, slow.to_json());  // rank 0 writes it, then every rank reads it
  const Mesh grid(MPI_COMM_WORLD, MeshShape({"x", "y"}, {4, 1}));
  const DistMatrix<double> A(grid, Layout::block_cyclic(grid.shape(), 2048, 2048, 256, 256)),
      B(grid, Layout::block_cyclic(grid.shape(), 2048, 1024, 256, 256)),
      C(grid, Layout::block_cyclic(grid.shape(), 2048, 1024, 256, 256));
  const blas::Blocking saved = blas::blocking();
  ASSERT_EQ(setenv("SHARDMM_PROFILE", path.c_str(), 1), 0);
  std::string chosen[2];
  Options roomy;  // A-stationary realigns B whole: above the lean cap
  roomy.memory_growth = -1;
  for (const bool polled : {false, true}) {
    blas::set_blocking({saved.flops, saved.min_width, polled});
    chosen[polled ? 1 : 0] = gemm_dry_run(Op::N, Op::N, A, B, C, roomy).detail;
  }
  ASSERT_EQ(unsetenv("SHARDMM_PROFILE"), 0);
  blas::set_blocking(saved);
  EXPECT_NE(chosen[0].find("auto: summa(A) 4x1"), std::string::npos) << chosen[0];
  EXPECT_NE(chosen[1].find("auto: summa(C) 4x1"), std::string::npos) << chosen[1];
}

// SHARDMM_WAIT for the calls made while it is set (restores the previous value); calls read it
// at their entry (comm::WaitScope).
class WaitEnv {
 public:
  explicit WaitEnv(const char* value) {
    if (const char* v = std::getenv("SHARDMM_WAIT")) saved_ = v, had_ = true;
    setenv("SHARDMM_WAIT", value, 1);
  }
  ~WaitEnv() {
    if (had_) setenv("SHARDMM_WAIT", saved_.c_str(), 1);
    else unsetenv("SHARDMM_WAIT");
  }
  WaitEnv(const WaitEnv&) = delete;
  WaitEnv& operator=(const WaitEnv&) = delete;
  WaitEnv(WaitEnv&&) = delete;
  WaitEnv& operator=(WaitEnv&&) = delete;

 private:
  std::string saved_;
  bool had_ = false;
};

// Rank 1 sends 1000 doubles to rank 0 30 ms after rank 0 said it waits for them: the sleeps
// rank 0 took while waiting (rank 0 also checks the values). The 30 ms count from rank 0's
// word, not from a point the ranks pass together: a rank that lags by a scheduler slice or
// more would otherwise find the message there when it starts to wait.
std::int64_t late_message_sleeps() {
  std::vector<double> buf(1000, world_rank() == 1 ? 2.5 : 0.0);
  double waiting = 1;  // rank 0 -> rank 1: "my receive is posted, I wait now"
  const std::int64_t before = comm::wait_sleeps();
  if (world_rank() == 1) {
    comm::Requests word;
    comm::irecv(&waiting, 1, 0, 6, MPI_COMM_WORLD, word);
    word.wait();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  comm::Requests q;
  if (world_rank() == 0) {
    comm::irecv(buf.data(), 1000, 1, 5, MPI_COMM_WORLD, q);
    comm::isend(&waiting, 1, 1, 6, MPI_COMM_WORLD, q);
  }
  if (world_rank() == 1) comm::isend(buf.data(), 1000, 0, 5, MPI_COMM_WORLD, q);
  q.wait();
  if (world_rank() == 0) {
    EXPECT_EQ(buf[999], 2.5);
  }
  return comm::wait_sleeps() - before;
}

// A redistribution: how many of its exchanges went point-to-point. Every entry that arrived is
// checked against the generator.
std::int64_t pointwise_redistribution() {
  const Operands x;
  DistMatrix<double> moved(x.mesh, 96, 80, "A[I_Y:bc8,K_X]");
  const std::int64_t before = comm::pointwise_exchanges();
  redistribute(x.A, moved);
  for (index_t j = 0; j < moved.local_cols(); ++j)
    for (index_t i = 0; i < moved.local_rows(); ++i)
      EXPECT_EQ(moved.local(i, j), entry<double>(moved.global_row(i), moved.global_col(j), 1));
  return comm::pointwise_exchanges() - before;
}

// The mode a call's entry sets (comm::WaitScope, here as a library call opens it) follows
// SHARDMM_WAIT: a late message is waited for with naps or a spin, a redistribution inside the
// call exchanges point-to-point or with one MPI_Alltoallv; gemm runs under either. The mode
// ends with the call. A malformed SHARDMM_WAIT: the same InvalidArgument on every rank, from
// gemm and from a call without Options (redistribute), before anything moves.
TEST(Options, WaitModeFollowsTheEnvironment) {
  for (const char* mode : {"sleep", "spin"}) {
    const WaitEnv env(mode);
    Operands x;
    gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C);
    const std::vector<double> zero(std::size_t{96} * 72, 0.0);
    EXPECT_LE(gemm_error(Op::N, Op::N, 1.0, x.A, x.B, 0.0, zero, x.C), 10.0) << mode;
    const bool sleeping = std::string(mode) == "sleep";
    {
      const comm::WaitScope call;  // a library call's entry: reads SHARDMM_WAIT
      EXPECT_EQ(comm::wait_mode() == comm::WaitMode::Sleep, sleeping) << mode;
      if (world_size() < 2) continue;
      const std::int64_t slept = late_message_sleeps();
      if (world_rank() == 0 && sleeping) {
        // At least one nap (a loaded machine stretches each nap far past its 20-200 us).
        EXPECT_GT(slept, 0) << "a 30 ms wait in sleep mode";
      } else if (world_rank() == 0) {
        EXPECT_EQ(slept, 0) << "spin mode never sleeps";
      }
      // Redistribution's exchange: point-to-point, waited for politely, when sleeping; else one
      // MPI_Alltoallv, which spins inside MPI until it is done.
      EXPECT_EQ(pointwise_redistribution(), sleeping ? 1 : 0) << mode;
    }
    EXPECT_EQ(comm::wait_mode(), comm::WaitMode::Spin) << "outside a call";
  }
  const WaitEnv env("fast");
  Operands x;
  DistMatrix<double> moved(x.mesh, 96, 80, "A[I_Y:bc8,K_X]");
  expect_same_error_everywhere<InvalidArgument>(
      [&] { gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C); },
      "SHARDMM_WAIT='fast': expected spin, sleep or auto");
  expect_same_error_everywhere<InvalidArgument>([&] { redistribute(x.A, moved); },
                                                "SHARDMM_WAIT='fast'");
}

// A: moved into a layout no algorithm reads (rows over Y, block-cyclic), so a product with it
// exchanges A first; B and C as Operands'.
struct Misplaced {
  Operands x;
  DistMatrix<double> A{x.mesh, 96, 80, "A[I_Y:bc8,K_X]"};
  Misplaced() { redistribute(x.A, A); }
};

// SUMMA on `m` with `o` under SHARDMM_WAIT=`wait_env`: how many of its exchanges went
// point-to-point (the product checked afterwards, the variable restored).
std::int64_t pointwise_gemm(Misplaced& m, const Options& o, const char* wait_env) {
  std::int64_t pointwise = 0;
  {
    const WaitEnv env(wait_env);
    const std::int64_t before = comm::pointwise_exchanges();
    gemm(Op::N, Op::N, 1.0, m.A, m.x.B, 0.0, m.x.C, o);
    pointwise = comm::pointwise_exchanges() - before;
  }
  const std::vector<double> zero(std::size_t{96} * 72, 0.0);
  EXPECT_LE(gemm_error(Op::N, Op::N, 1.0, m.A, m.x.B, 0.0, zero, m.x.C), 10.0);
  return pointwise;
}

// Options::wait wins over SHARDMM_WAIT: asked to sleep under SHARDMM_WAIT=spin, gemm's exchange
// of A goes point-to-point (waited for politely); asked to spin under SHARDMM_WAIT=sleep, it is
// one MPI_Alltoallv; Auto follows the variable; an explicit mode leaves a malformed variable
// unread. A call made inside a call (WaitScope nested) keeps the outer call's mode.
TEST(Options, WaitOptionWinsOverTheEnvironment) {
  EXPECT_EQ(parse_wait("Sleep"), Wait::Sleep);
  EXPECT_EQ(to_string(parse_wait(to_string(Wait::Spin))), "spin");
  EXPECT_THROW((void)parse_wait("doze"), InvalidArgument);
  {
    const WaitEnv env("spin");
    const comm::WaitScope call(Wait::Sleep);
    EXPECT_EQ(comm::wait_mode(), comm::WaitMode::Sleep);
    const comm::WaitScope inner;  // a call inside it
    EXPECT_EQ(comm::wait_mode(), comm::WaitMode::Sleep);
  }
  EXPECT_EQ(comm::wait_mode(), comm::WaitMode::Spin);
  if (world_size() < 2) return;  // one rank exchanges nothing
  Misplaced m;
  Options o;
  o.algorithm = Algorithm::Summa;
  o.wait = Wait::Sleep;
  EXPECT_GT(pointwise_gemm(m, o, "spin"), 0);
  o.wait = Wait::Spin;
  EXPECT_EQ(pointwise_gemm(m, o, "sleep"), 0);
  EXPECT_EQ(pointwise_gemm(m, o, "fast"), 0);  // not read
  o.wait = Wait::Auto;
  EXPECT_EQ(pointwise_gemm(m, o, "spin"), 0);
  EXPECT_GT(pointwise_gemm(m, o, "sleep"), 0);
}

}  // namespace
