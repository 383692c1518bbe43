// Options that shape how a call runs rather than what it computes: the BLAS thread count is
// set and reported, and the per-phase timeline records what each rank did.
#include <gtest/gtest.h>

#include "blas/blas.hpp"
#include "mpi/gemm_check.hpp"

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

// SUMMA with 16-wide panels over k = 80 (at least five steps; more where the k blocks of the
// mesh cut panels): each step has one "wait", one "gemm" and one "bcast" interval, and the gemm
// intervals add up to the report's gemm seconds.
TEST(Options, TimelineRecordsEveryStep) {
  Operands x;
  std::vector<TimelineEvent> events;
  Options o;
  o.algorithm = Algorithm::Summa;
  o.stationary = Stationary::C;
  o.panel = 16;
  o.timeline = &events;
  const GemmReport r = gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C, o);
  int gemms = 0, waits = 0, bcasts = 0, step_sum = 0;
  double gemm_seconds = 0;
  for (const TimelineEvent& e : events) {
    EXPECT_LE(e.start, e.end) << e.what;
    if (e.what == "gemm") ++gemms, gemm_seconds += e.end - e.start, step_sum += e.step;
    if (e.what == "wait") ++waits;
    if (e.what == "bcast") ++bcasts;
  }
  EXPECT_GE(gemms, 5);
  EXPECT_EQ(step_sum, gemms * (gemms - 1) / 2);  // steps 0 .. gemms-1, once each
  EXPECT_EQ(waits, gemms);
  EXPECT_EQ(bcasts, gemms);
  EXPECT_NEAR(gemm_seconds, r.seconds_gemm, 1e-4 + 0.05 * r.seconds_gemm);
  events.clear();
  o.timeline = nullptr;  // off: nothing recorded
  gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C, o);
  EXPECT_TRUE(events.empty());
}

}  // namespace
