// gemm_files: the out-of-core path against a serial OpenBLAS reference on small odd shapes
// with a tiny budget (several C blocks, several k-panels, passes over A and B), every dtype,
// op, file order and both I/O methods; beta != 0 with C0 in either order; the in-core path;
// and bad input: refused on every rank with the same message, nothing written.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "comm/mpi_check.hpp"
#include "core/instantiate.hpp"
#include "mpi/ooc_test_util.hpp"
#include "shardmm/error.hpp"

namespace shardmm::testing {
namespace {

namespace fs = std::filesystem;
using ooc::Stored;

// A budget of `words` elements of T.
template <class T>
Options budget(index_t words) {
  Options o;
  o.memory_limit = words * static_cast<index_t>(sizeof(T));
  return o;
}

constexpr index_t kWords = 2048;  // a few 16 x 16 blocks of C, two buffered, 16-wide panels
constexpr double kBound = 20;     // normwise error, units of eps

template <class T>
T scalar(double re, double im) {
  if constexpr (is_complex_v<T>) return T(static_cast<real_t<T>>(re), static_cast<real_t<T>>(im));
  else return static_cast<T>(re);
}

// The stored shape of an operand whose op is m x n.
Stored stored(Op op, index_t m, index_t n, int seed, bool fortran) {
  return op == Op::N ? Stored{m, n, seed, fortran} : Stored{n, m, seed, fortran};
}

template <class T>
class OocTyped : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(OocTyped, Types);

TYPED_TEST(OocTyped, EveryOpOrderAndIoMethod) {
  using T = TypeParam;
  const index_t m = 37, n = 29, k = 45;
  const Op ops[] = {Op::N, Op::T, Op::C};
  for (int idx = 0; idx < 9; ++idx) {
    const Op opA = ops[idx / 3], opB = ops[idx % 3];
    const Stored a = stored(opA, m, k, 1, idx % 2 == 0), b = stored(opB, k, n, 2, idx % 4 < 2);
    const MatrixFile fa = idx == 4 ? ooc::put_raw<T>("a.raw", a) : ooc::put_npy<T>("a.npy", a);
    const MatrixFile fb = ooc::put_npy<T>("b.npy", b);
    MatrixFile out = MatrixFile::npy(npy::file("c.npy"));
    out.fortran_order = idx % 3 != 1;
    FileGemmSettings s;
    const IoMethod methods[] = {IoMethod::Posix, IoMethod::MpiIo, IoMethod::Mmap};
    s.io = methods[(idx / 2) % 3];  // each method with both orders of A and of C
    s.force_out_of_core = true;     // at 6 ranks the operands would fit the budget
    const T alpha = scalar<T>(1.5, -0.5);
    const auto rep = gemm_files(MPI_COMM_WORLD, opA, fa, opB, fb, alpha, 0.0, MatrixFile{}, out,
                                budget<T>(kWords), s);
    const std::string what = "op " + to_string(opA) + to_string(opB) + " io " + to_string(s.io) +
                             " " + rep.plan.to_string();
    EXPECT_TRUE(rep.plan.out_of_core) << what;
    EXPECT_GT(rep.plan.blocks, 1) << what;
    EXPECT_LT(rep.plan.kb, k) << what;
    EXPECT_LE(ooc::result_error<T>(opA, a, opB, b, alpha, T(0), nullptr, out.path), kBound) << what;
  }
  EXPECT_EQ(npy::leftover_temps(), 0);
}

TYPED_TEST(OocTyped, BetaReadsC0InEitherOrder) {
  using T = TypeParam;
  const index_t m = 33, n = 40, k = 35;
  const Stored a{m, k, 3, true}, b{n, k, 4, false}, c0{m, n, 5, false};
  const MatrixFile fa = ooc::put_npy<T>("a.npy", a), fb = ooc::put_npy<T>("b.npy", b);
  const MatrixFile fc = ooc::put_npy<T>("c0.npy", c0);
  for (const bool fortran_out : {true, false}) {
    MatrixFile out = MatrixFile::npy(npy::file("c.npy"));
    out.fortran_order = fortran_out;
    FileGemmSettings s;
    s.io = fortran_out ? IoMethod::Mmap : IoMethod::MpiIo;
    s.force_out_of_core = true;
    const T alpha = scalar<T>(-0.5, 1), beta = scalar<T>(0.75, -0.25);
    const auto rep = gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::T, fb, alpha, beta, fc, out,
                                budget<T>(kWords), s);
    EXPECT_TRUE(rep.plan.out_of_core);
    EXPECT_LE(ooc::result_error<T>(Op::N, a, Op::T, b, alpha, beta, &c0, out.path), kBound)
        << (fortran_out ? "Fortran" : "C") << " order out, C0 in C order";
  }
}

// Without a budget the stream takes whole-k panels; a rank whose blocks share their rows of
// D reads that panel once (PanelSlots), as the plan counts. Each I/O method, both output
// orders, op C on the left (a conjugate applied once to a reused buffer).
TYPED_TEST(OocTyped, WholeKPanelsReadOncePerRank) {
  using T = TypeParam;
  const index_t m = 40, n = 300, k = 24;
  for (const Op opA : {Op::N, Op::C})
    for (const IoMethod io : {IoMethod::Posix, IoMethod::MpiIo, IoMethod::Mmap})
      for (const bool fortran_out : {true, false}) {
        const Stored a = stored(opA, m, k, 1, fortran_out), b = stored(Op::N, k, n, 2, true);
        const MatrixFile fa = ooc::put_npy<T>("a.npy", a), fb = ooc::put_npy<T>("b.npy", b);
        MatrixFile out = MatrixFile::npy(npy::file("c.npy"));
        out.fortran_order = fortran_out;
        FileGemmSettings s;
        s.io = io;
        s.balance = false;  // the plan counts the round-robin deal's reads
        const T alpha = scalar<T>(0.5, 2);
        const auto rep =
            gemm_files(MPI_COMM_WORLD, opA, fa, Op::N, fb, alpha, 0.0, MatrixFile{}, out, {}, s);
        const std::string what = to_string(opA) + " " + to_string(io) +
                                 (fortran_out ? " F " : " C ") + rep.plan.to_string();
        EXPECT_LE(ooc::result_error<T>(opA, a, Op::N, b, alpha, T(0), nullptr, out.path), kBound)
            << what;
        // The plan counts the busiest rank's reads, a reused panel once: without the reuse
        // that rank would read its panel once per block, well over the count.
        long long mine = rep.bytes_read, most = 0;
        MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        EXPECT_LE(most, rep.plan.bytes_read) << what;
        EXPECT_EQ(rep.plan.kb, k) << what;  // no budget: whole-k panels
      }
}

// Balanced streams: every block is computed and written exactly once (the ranks' written
// bytes add up to the result), whoever takes it. With other ranks to take them, rank 0 is
// slowed after each of its blocks (the progress callback sleeps 30 ms, thousands of these
// blocks' GEMMs), so the others take some of its blocks.
TEST(Ooc, BalancedStreamWritesEveryBlockOnce) {
  const int ranks = comm::comm_size(MPI_COMM_WORLD), me = comm::comm_rank(MPI_COMM_WORLD);
  const index_t m = 96, n = 80, k = 40;
  const Stored a = stored(Op::N, m, k, 1, true), b = stored(Op::N, k, n, 2, false);
  const MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);
  for (const IoMethod io : {IoMethod::Posix, IoMethod::Mmap})
    for (const std::int64_t budget : {std::int64_t{0}, std::int64_t{24} << 10}) {
      MatrixFile out = MatrixFile::npy(npy::file("c.npy"));
      FileGemmSettings s;
      s.io = io;
      if (ranks > 1)
        s.progress = [](const FileGemmProgress&, void*) {
          if (comm::comm_rank(MPI_COMM_WORLD) == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
        };
      Options o;
      o.memory_limit = budget;
      const auto rep =
          gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::N, fb, 1.0, 0.0, MatrixFile{}, out, o, s);
      const std::string what = to_string(io) + " " + rep.plan.to_string();
      EXPECT_LE(ooc::result_error<double>(Op::N, a, Op::N, b, 1.0, 0.0, nullptr, out.path), kBound)
          << what;
      long long mine = rep.bytes_written, total = 0;
      MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_EQ(total, m * n * 8) << what;
      const index_t deal = (rep.plan.blocks + ranks - 1) / ranks;  // rank 0's round-robin share
      if (me == 0 && ranks > 1 &&
          rep.plan.blocks >= index_t{3} * ranks) {  // 1 block is claimed ahead
        EXPECT_LT(mine, deal * rep.plan.bm * rep.plan.bn * 8) << what << ": no block was taken";
      }
    }
}

// The last P blocks (one per rank) are cut into the plan's tail_strips strips of columns, so
// the ranks end a strip apart, not a block, when a block's k is one panel (its strips read
// nothing more), never with several panels, even when the GEMM is slow next to the reads (a
// profile of 0.01 GFLOP/s). The progress callback counts the work items; every strip is
// computed (the result), and the deal reads at most what the plan counts.
void count_items(const FileGemmProgress& p, void* user) {
  *static_cast<index_t*>(user) = p.blocks_total;
}

TEST(Ooc, LastBlocksAreCutIntoStrips) {
  const int ranks = comm::comm_size(MPI_COMM_WORLD);
  const index_t m = 300, n = 410, k = 384;
  const Stored a = stored(Op::N, m, k, 1, true), b = stored(Op::N, k, n, 2, false);
  const MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);
  const std::string slow = npy::file("slow.json");
  npy::put_file(slow, R"({"latency_s": 1e-6, "bytes_per_s": 1e9, "gemm_gflops":
      {"f32": 0.01, "f64": 0.01, "c64": 0.01, "c128": 0.01}})");  // collective
  int whole = 0, narrow = 0;  // cases cut (one panel), cases with several panels
  for (const bool slow_gemm : {false, true})
    for (const index_t words : {index_t{0}, index_t{12000}})  // 12000: k-panels under 384
      for (const bool fortran_out : {true, false}) {
        if (slow_gemm) {
          ASSERT_EQ(setenv("SHARDMM_PROFILE", slow.c_str(), 1), 0);
        }
        MatrixFile out = MatrixFile::npy(npy::file("c.npy"));
        out.fortran_order = fortran_out;
        FileGemmSettings s;
        s.balance = false;  // the plan counts the round-robin deal's reads
        index_t items = 0;
        s.progress = count_items, s.progress_user = &items;
        const auto rep = gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::N, fb, 1.0, 0.0, MatrixFile{},
                                    out, budget<double>(words), s);
        ASSERT_EQ(unsetenv("SHARDMM_PROFILE"), 0);
        const OocPlan& p = rep.plan;
        const std::string what = std::to_string(words) + (fortran_out ? " F " : " C ") +
                                 (slow_gemm ? "slow " : "") + p.to_string();
        EXPECT_LE(ooc::result_error<double>(Op::N, a, Op::N, b, 1.0, 0.0, nullptr, out.path),
                  kBound)
            << what;
        EXPECT_EQ(p.tail_strips, ranks > 1 && p.blocks >= ranks && p.kb == k ? 4 : 1) << what;
        const bool cut = p.tail_strips > 1;
        EXPECT_EQ(items, p.blocks + (cut ? (p.tail_strips - 1) * ranks : 0)) << what;
        whole += cut;
        narrow += p.kb < k;
        long long mine = rep.bytes_read, most = 0;
        MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        EXPECT_LE(most, p.bytes_read) << what;
      }
  if (ranks > 1) {
    EXPECT_GT(whole, 0) << "no case with one k-panel cut its last blocks";
    EXPECT_GT(narrow, 0) << "no case had several k-panels";
  }
}

TEST(Ooc, InCoreWhenEverythingFits) {
  const Stored a{21, 17, 6, true}, b{17, 19, 7, false};
  const MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);
  const MatrixFile out = MatrixFile::npy(npy::file("c.npy"));
  // Auto streams it (blocks, panels, write-behind); a named algorithm runs on the layouts.
  for (const Algorithm algo : {Algorithm::Auto, Algorithm::Summa}) {
    Options o;
    o.algorithm = algo;
    const auto rep =
        gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::N, fb, 2.0, 0.0, MatrixFile{}, out, o);
    EXPECT_FALSE(rep.plan.out_of_core);
    EXPECT_GT(rep.plan.bm, 0);
    EXPECT_GT(rep.plan.predicted_seconds, 0);
    EXPECT_LE(ooc::result_error<double>(Op::N, a, Op::N, b, 2.0, 0.0, nullptr, out.path), kBound);
    // The split accounts for the whole call.
    const double parts = rep.open_seconds + rep.read_wait_seconds + rep.compute_seconds +
                         rep.write_wait_seconds + rep.agree_seconds + rep.sync_seconds +
                         rep.rename_seconds + rep.other_seconds;
    EXPECT_NEAR(parts, rep.seconds, 1e-6 + 1e-9 * rep.seconds);
    EXPECT_GE(rep.other_seconds, 0);
    EXPECT_GT(rep.open_seconds, 0);
    long long written = rep.bytes_written, all = 0;  // every element of C, once
    MPI_Allreduce(&written, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(all, 21 * 19 * 8);
  }
}

// The in-core path runs exactly when the planner's in-core estimate fits the budget: at the
// estimate in core (its gemm plans within that budget and would throw OutOfMemory were none of
// its algorithms to fit), one byte below out of core; both results right.
TEST(Ooc, InCoreThresholdIsThePlannersEstimate) {
  const index_t m = 70, n = 50, k = 60;
  const Stored a{m, k, 8, true}, b{k, n, 9, false};
  const MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::int64_t need =
      plan_out_of_core(m, n, k, Dtype::F64, ranks, std::int64_t{1} << 30).in_core_bytes;
  EXPECT_GE(need, (m * k + k * n + m * n) * 8 / ranks);  // at least the tiles read
  for (const std::int64_t limit : {need, need - 1}) {
    Options o;
    o.memory_limit = limit;
    const MatrixFile out = MatrixFile::npy(npy::file("c.npy"));
    const auto rep = gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::N, fb, 1.0, 0.0, {}, out, o);
    EXPECT_EQ(rep.plan.out_of_core, limit < need) << limit << ": " << rep.plan.to_string();
    EXPECT_EQ(rep.plan.in_core_bytes, need);
    EXPECT_LE(ooc::result_error<double>(Op::N, a, Op::N, b, 1.0, 0.0, nullptr, out.path), kBound)
        << rep.plan.to_string();
  }
}

TEST(Ooc, PlanReadsLessWithMoreBudget) {
  const Stored a{300, 200, 1, true}, b{200, 250, 2, true};
  const MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);
  const auto da = describe_file(fa, MPI_COMM_WORLD), db = describe_file(fb, MPI_COMM_WORLD);
  const auto small =
      plan_files(MPI_COMM_WORLD, Op::N, da, Op::N, db, {}, true, budget<double>(4000), true);
  const auto large =
      plan_files(MPI_COMM_WORLD, Op::N, da, Op::N, db, {}, true, budget<double>(40000), true);
  EXPECT_GT(small.passes_a, large.passes_a);
  EXPECT_GT(small.bytes_read, large.bytes_read);
  EXPECT_LE((2 * small.bm * small.bn + 2 * small.kb * (small.bm + small.bn)) * 8, small.budget);
}

TEST(Ooc, BudgetTooSmallSaysTheMinimum) {
  const Stored a{40, 40, 1, true}, b{40, 40, 2, true};
  const MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);
  const MatrixFile out = MatrixFile::npy(npy::file("never.npy"));
  const auto before = npy::snapshot();
  expect_same_error_everywhere<OutOfMemory>(
      [&] {
        gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::N, fb, 1.0, 0.0, {}, out, budget<double>(100));
      },
      "needs at least 12288 bytes");
  EXPECT_EQ(npy::snapshot(), before);
}

TEST(Ooc, OutputThatIsAnInputThroughAHardLink) {
  const Stored a{30, 30, 1, true}, b{30, 30, 2, true};
  const MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);
  const std::string link = npy::file("link.npy");
  if (world_rank() == 0) fs::create_hard_link(fa.path, link);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto before = npy::snapshot();
  expect_same_error_everywhere<InvalidArgument>(
      [&] {
        gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::N, fb, 1.0, 0.0, {}, MatrixFile::npy(link),
                   budget<double>(kWords));
      },
      "is also an input");
  EXPECT_EQ(npy::snapshot(), before);
  if (world_rank() == 0) fs::remove(link);
}

TEST(Ooc, TruncatedInputIsRefusedBeforeAnyWork) {
  const Stored a{30, 30, 1, true}, b{30, 30, 2, true};
  const MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);
  if (world_rank() == 0) fs::resize_file(fb.path, 2000);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto before = npy::snapshot();
  expect_same_error_everywhere<IoError>(
      [&] {
        gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::N, fb, 1.0, 0.0, {},
                   MatrixFile::npy(npy::file("c.npy")), budget<double>(kWords));
      },
      "truncated");
  EXPECT_EQ(npy::snapshot(), before);
}

// Raw operands whose data starts past 4 GiB (64-bit offsets in the MPI-IO file views, the
// mmap windows and the in-core reads): sparse files, the bytes before the data a hole, so the
// test takes a few pages of disk. A, B and C0 at offsets past 2^32, none page-aligned, through
// the in-core path and the out-of-core path with each reader. The files are removed at the
// end, whatever happens (snapshot() in other tests reads every file whole).
TEST(Ooc, RawDataPastFourGiB) {
  const std::int64_t gib = std::int64_t{1} << 30;
  const Stored a{37, 45, 1, true}, b{29, 45, 2, false}, c0{37, 29, 3, false};
  struct Remove {
    std::vector<std::string> paths;
    explicit Remove(std::vector<std::string> p) : paths(std::move(p)) {}
    Remove(const Remove&) = delete;
    Remove& operator=(const Remove&) = delete;
    Remove(Remove&&) = delete;
    Remove& operator=(Remove&&) = delete;
    ~Remove() {
      MPI_Barrier(MPI_COMM_WORLD);
      if (world_rank() == 0)
        for (const auto& p : paths) fs::remove(p);
    }
  } remove{{npy::file("a_far.raw"), npy::file("b_far.raw"), npy::file("c0_far.raw")}};
  const MatrixFile fa = ooc::put_raw<double>("a_far.raw", a, 4 * gib + 24);
  const MatrixFile fb = ooc::put_raw<double>("b_far.raw", b, 5 * gib + 8);
  const MatrixFile fc =
      ooc::put_raw<double>("c0_far.raw", c0, 4 * gib + std::int64_t{3} * 4096 + 40);
  ASSERT_GT(fa.data_offset, std::int64_t{1} << 32);
  int sparse = 1;  // holes take no disk here (else the files hold GiBs of zeros: stop)
  if (world_rank() == 0)
    for (const auto& p : remove.paths) sparse &= ooc::disk_bytes(p) < (std::int64_t{1} << 20);
  MPI_Bcast(&sparse, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (sparse == 0) GTEST_SKIP() << "the test directory's file system has no sparse files";
  for (int run = 0; run < 4; ++run) {  // in core, out of core with posix, mpiio, mmap
    FileGemmSettings s;
    s.io = run == 3 ? IoMethod::Mmap : run == 2 ? IoMethod::MpiIo : IoMethod::Posix;
    s.force_out_of_core = run > 0;
    const MatrixFile out = MatrixFile::npy(npy::file("c.npy"));
    const auto rep = gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::T, fb, 1.5, -0.5, fc, out,
                                run == 0 ? Options{} : budget<double>(kWords), s);
    const std::string what = (run == 0 ? "in core" : to_string(s.io)) + rep.plan.to_string();
    EXPECT_EQ(rep.plan.out_of_core, run > 0) << what;
    EXPECT_LE(ooc::result_error<double>(Op::N, a, Op::T, b, 1.5, -0.5, &c0, out.path), kBound)
        << what;
  }
  expect_same_error_everywhere<InvalidArgument>(
      [&] {
        describe_file(MatrixFile::raw_file(fa.path, Dtype::F64, a.rows, a.cols, true, -8),
                      MPI_COMM_WORLD);
      },
      "data offset -8 is negative");
  expect_same_error_everywhere<IoError>(  // the data must run to the end of the file
      [&] {
        describe_file(MatrixFile::raw_file(fa.path, Dtype::F64, a.rows, a.cols, true, 4 * gib),
                      MPI_COMM_WORLD);
      },
      "at offset 4294967296 needs exactly");
}

// The progress callback (rank 0) cuts A (64 x 48, Fortran order) after its first kb columns once
// the first block is done. The reads in flight then (the next block's first panel, columns
// [0, kb)) stay whole; later panels find the file short. (Open MPI's non-blocking read never
// completes when the file shrinks under it, so the cut must not race a read.)
struct Cut {
  std::string path;
  std::int64_t bytes = 0;
};
void cut_a(const FileGemmProgress& p, void* user) {
  const auto* cut = static_cast<const Cut*>(user);
  if (p.blocks_done > 0 && world_rank() == 0)
    fs::resize_file(cut->path, static_cast<std::uintmax_t>(cut->bytes));
  MPI_Barrier(MPI_COMM_WORLD);  // no rank starts a read before the cut
}

TEST(Ooc, FileTruncatedMidStreamLeavesTheOutputAlone) {
  for (const IoMethod io : {IoMethod::Posix, IoMethod::MpiIo, IoMethod::Mmap}) {
    const Stored a{64, 48, 1, true}, b{48, 70, 2, true};
    const MatrixFile fa = describe_file(ooc::put_npy<double>("a.npy", a), MPI_COMM_WORLD);
    const MatrixFile fb = ooc::put_npy<double>("b.npy", b);
    const OocPlan plan =
        plan_files(MPI_COMM_WORLD, Op::N, fa, Op::N, describe_file(fb, MPI_COMM_WORLD), {}, true,
                   budget<double>(1600), true);
    ASSERT_LT(plan.kb, a.cols);
    ASSERT_GT(plan.blocks, 2 * plan.ranks);  // a second slot of blocks reads after the cut
    const std::string out = npy::file("old.npy");
    npy::put_file(out, "previous contents");
    Cut cut{fa.path, fa.data_offset + plan.kb * a.rows * 8};
    FileGemmSettings s;
    s.io = io;
    s.balance = false;  // cut_a is collective: every rank calls it at the same steps
    s.progress = cut_a;
    s.progress_user = &cut;
    expect_same_error_everywhere<IoError>(
        [&] {
          gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::N, fb, 1.0, 0.0, {}, MatrixFile::npy(out),
                     budget<double>(1600), s);
        },
        "short read");
    if (world_rank() == 0) {
      EXPECT_EQ(npy::get_file(out), "previous contents") << to_string(io);
      EXPECT_EQ(npy::leftover_temps(), 0) << to_string(io);
    }
  }
}

}  // namespace
}  // namespace shardmm::testing
