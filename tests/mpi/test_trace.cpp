// Traces (Options::trace, SHARDMM_TRACE): the file parses as trace-event JSON, every rank has a
// named track, spans nest on every track, the call's top-level span covers the time the report
// measured within 5 % (and its phases cover the span), the exchange spans' bytes add up to the
// report's counters exactly, and file I/O is traced too; an exchange names the MPI call it waits
// in. Off, nothing is recorded or written.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "mpi_test_util.hpp"
#include "npy_test_util.hpp"
#include "trace/events.hpp"
#include "trace_test_util.hpp"

namespace {

using namespace shardmm;
using namespace shardmm::testing;
namespace tr = shardmm::testing::trace;

constexpr index_t kN = 512;  // long enough that 5 % of a call is well above the clock's noise
// A scheduler slice: what a rank of an oversubscribed test on a loaded machine may lose between
// two clock readings however close (4-10 ms).
constexpr double kSlice = 0.010;

struct Operands {
  Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> A{mesh, kN, kN, "A[I_X,J_Y]"}, B{mesh, kN, kN, "B[I_X,J_Y]"},
      C{mesh, kN, kN, "C[I_X,J_Y]"};
  Operands() {
    A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
    B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
  }
};

// One rank's report as rank 0 sees it.
struct Row {
  double total = 0, gemm = 0, sent = 0, received = 0, messages = 0;
};

std::vector<Row> gather(const GemmReport& r) {
  const double mine[5] = {r.seconds_total, r.seconds_gemm, static_cast<double>(r.bytes_sent),
                          static_cast<double>(r.bytes_received), static_cast<double>(r.messages)};
  std::vector<double> all(static_cast<std::size_t>(5 * world_size()));
  MPI_Gather(mine, 5, MPI_DOUBLE, all.data(), 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<Row> rows;
  for (std::size_t p = 0; p < all.size(); p += 5)
    rows.push_back({all[p], all[p + 1], all[p + 2], all[p + 3], all[p + 4]});
  return rows;
}

// The checks every traced gemm passes, on rank 0, for the call's rows.
void check_gemm_trace(const std::string& path, const std::vector<Row>& rows, const char* algo) {
  const auto tracks = tr::load(path);
  ASSERT_EQ(static_cast<int>(tracks.size()), world_size()) << "one track per rank";
  for (int p = 0; p < world_size(); ++p) {
    SCOPED_TRACE("rank " + std::to_string(p) + ", " + algo);
    const tr::Track& t = tracks.at(p);
    EXPECT_EQ(t.name, "rank " + std::to_string(p));
    ASSERT_EQ(t.roots.size(), 1U);
    const int root = t.roots[0];
    const tr::Span& call = t.spans[root];
    EXPECT_EQ(call.name, "gemm");
    EXPECT_EQ(call.cat, "call");
    EXPECT_EQ(call.args.value("algorithm", ""), algo);
    EXPECT_GE(call.args.value("clock_error_us", -1.0), 0.0);
    // The top-level span covers the call's measured time, and its phases cover the span.
    // (A slice of slack each: a rank of an oversubscribed test may lose its core between the
    // span's start and the report's clock, or between two phases, a gap no span can cover. CI
    // once saw the span 2.2 ms longer than a 30 ms call.)
    EXPECT_GE(call.seconds(), 0.95 * rows[p].total);
    EXPECT_LE(call.seconds(), 1.05 * rows[p].total + kSlice);
    double phases = 0;
    for (int c : call.children) phases += t.spans[c].seconds();
    EXPECT_GE(phases, 0.95 * call.seconds() - kSlice);
    // Exchange bytes add up to the report's counters exactly.
    EXPECT_EQ(tr::sum_arg(t, root, "comm", "bytes_sent"), rows[p].sent);
    EXPECT_EQ(tr::sum_arg(t, root, "comm", "bytes_received"), rows[p].received);
    EXPECT_EQ(tr::sum_arg(t, root, "comm", "messages"), rows[p].messages);
    // The "compute" steps are the report's GEMM time; every local GEMM says its rate. Each
    // step's span encloses the interval its counter got, so a busy scheduler cannot make the
    // trace fall short; the trace may run over by a slice lost between a span's edge and the
    // counter's clock.
    const double compute = tr::seconds_in(t, root, "step", "compute");
    EXPECT_GE(compute, 0.95 * rows[p].gemm - 1e-4);
    EXPECT_LE(compute, 1.05 * rows[p].gemm + 1e-4 + kSlice);
    EXPECT_GT(tr::count(t, root, "blas"), 0);
    for (const tr::Span& s : t.spans) {
      if (s.cat != "blas") continue;
      EXPECT_TRUE(s.args.contains("m") && s.args.contains("gflops")) << s.name;
    }
    EXPECT_GT(t.flights + tr::count(t, root, "comm"), 0) << "no exchange traced";
    EXPECT_GT(t.counters, 0) << "no workspace counter";
  }
}

void run_traced(Algorithm a, const char* name) {
  Operands x;
  Options o;
  o.algorithm = a;
  o.trace = npy::file(std::string("trace-") + name + ".json");
  MPI_Barrier(MPI_COMM_WORLD);  // the ranks start together: the plan waits for nobody
  const GemmReport r = gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C, o);
  const auto rows = gather(r);
  if (world_rank() == 0) check_gemm_trace(o.trace, rows, name);
  EXPECT_EQ(shardmm::trace::detail::mode, 0) << "recording stays on after the call";
}

TEST(Trace, Summa) { run_traced(Algorithm::Summa, "summa"); }
TEST(Trace, Ring) { run_traced(Algorithm::Ring, "ring"); }
TEST(Trace, Gemm25D) { run_traced(Algorithm::Gemm25D, "25d"); }
TEST(Trace, Cannon) {
  if (world_size() != 4) GTEST_SKIP() << "Cannon needs a square grid: run at 4 ranks";
  run_traced(Algorithm::Cannon, "cannon");
}

// SHARDMM_TRACE alone traces every call of the process into one file: a write, a read and a
// gemm, in that order on every rank, the file rewritten whole after each.
TEST(Trace, VariableTracesFileIoAndGemm) {
  Operands x;
  const std::string path = npy::file("env.json"), npy_file = npy::file("a.npy");
  ASSERT_EQ(setenv("SHARDMM_TRACE", path.c_str(), 1), 0);
  write_npy(npy_file, x.A);
  read_npy(npy_file, x.B);
  gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C);
  ASSERT_EQ(unsetenv("SHARDMM_TRACE"), 0);
  if (world_rank() != 0) return;
  const auto tracks = tr::load(path);
  ASSERT_EQ(static_cast<int>(tracks.size()), world_size());
  for (const auto& [pid, t] : tracks) {
    ASSERT_EQ(t.roots.size(), 3U) << "rank " << pid;
    EXPECT_EQ(t.spans[t.roots[0]].name, "write");
    EXPECT_EQ(t.spans[t.roots[1]].name, "read");
    EXPECT_EQ(t.spans[t.roots[2]].name, "gemm");
    EXPECT_EQ(t.spans[t.roots[1]].args.value("path", ""), npy_file);
    EXPECT_GT(tr::count(t, t.roots[0], "io") + tr::count(t, t.roots[1], "io"), 1);
  }
  EXPECT_EQ(npy::leftover_temps(), 0);
}

// A redistribution's exchange names the call its ranks wait in (the hang reporter's words):
// MPI_Alltoallv when they spin, the point-to-point pieces' MPI_Waitall when they sleep
// (SHARDMM_WAIT). The path's agreement, named first, is replaced, not kept beside it.
TEST(Trace, ExchangeNamesTheCallItWaitsIn) {
  Operands x;
  for (const char* mode : {"sleep", "spin"}) {
    SCOPED_TRACE(mode);
    const std::string path = npy::file(std::string("exchange-") + mode + ".json");
    DistMatrix<double> moved(x.mesh, kN, kN, "A[I_Y:bc8,J_X]");
    ASSERT_EQ(setenv("SHARDMM_WAIT", mode, 1), 0);
    ASSERT_EQ(setenv("SHARDMM_TRACE", path.c_str(), 1), 0);
    redistribute(x.A, moved);
    ASSERT_EQ(unsetenv("SHARDMM_TRACE"), 0);
    ASSERT_EQ(unsetenv("SHARDMM_WAIT"), 0);
    if (world_rank() != 0) continue;
    const bool sleeping = std::string(mode) == "sleep";
    for (const auto& [pid, t] : tr::load(path)) {
      int exchanges = 0;
      for (const tr::Span& s : t.spans) {
        if (s.name != "alltoallv") continue;
        ++exchanges;
        EXPECT_EQ(s.args.value("op", ""), sleeping ? "MPI_Waitall" : "MPI_Alltoallv") << pid;
        EXPECT_EQ(s.args.value("on", "").find("point-to-point") != std::string::npos, sleeping);
      }
      EXPECT_EQ(exchanges, 1) << "rank " << pid;
    }
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("agree the exchange's path"), std::string::npos);
  }
}

// Off (no option, no variable) nothing records, and no file appears.
TEST(Trace, OffRecordsNothing) {
  Operands x;
  ASSERT_EQ(std::getenv("SHARDMM_TRACE"), nullptr) << "run the test without SHARDMM_TRACE";
  const auto before = npy::snapshot();
  gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C);
  EXPECT_TRUE(shardmm::trace::recorder().events.empty());
  EXPECT_EQ(npy::snapshot(), before);
}

// A trace file rank 0 cannot create fails the call on every rank before any work: C keeps its
// contents.
TEST(Trace, UnwritableFileFailsFirst) {
  Operands x;
  x.C.fill([](index_t, index_t) { return 7.0; });
  Options o;
  o.trace = npy::file("no-such-dir/t.json");
  expect_same_error_everywhere<IoError>([&] { gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C, o); },
                                        "no directory");
  for (index_t j = 0; j < x.C.local_cols(); ++j)
    for (index_t i = 0; i < x.C.local_rows(); ++i) ASSERT_EQ(x.C.local(i, j), 7.0);
}

// GemmReport::to_json holds every field.
TEST(Trace, ReportToJson) {
  Operands x;
  const GemmReport r = gemm(Op::N, Op::N, 1.0, x.A, x.B, 0.0, x.C);
  const auto j = nlohmann::json::parse(r.to_json());
  EXPECT_EQ(j.at("algorithm"), to_string(r.algorithm));
  EXPECT_EQ(j.at("grid"), r.grid);
  EXPECT_EQ(j.at("bytes_sent").get<std::int64_t>(), r.bytes_sent);
  EXPECT_EQ(j.at("messages").get<std::int64_t>(), r.messages);
  EXPECT_DOUBLE_EQ(j.at("seconds_total").get<double>(), r.seconds_total);
  EXPECT_EQ(j.at("blas_threads").get<int>(), r.blas_threads);
  EXPECT_EQ(j.size(), 13U);
}

}  // namespace
