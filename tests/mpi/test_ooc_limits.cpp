// gemm_files under limits: a product whose A + B + C is far more than the ranks' budgets keeps
// every rank's peak resident memory (VmHWM) under its budget plus a fixed overhead; a
// destination that fills up (RLIMIT_FSIZE) fails on every rank and leaves nothing behind;
// operands out of the page cache are priced at the disk once when the node's memory keeps them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>

#include "commands.hpp"
#include "mpi/ooc_test_util.hpp"
#include "shardmm/error.hpp"

namespace shardmm::testing {
namespace {

using ooc::Stored;

constexpr std::int64_t kOverhead = std::int64_t{64} << 20;  // MPI, OpenBLAS, gtest, the binary
#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer's shadow memory and freed-block quarantine count in VmHWM: the peak says
// nothing about the library there (the other checks still run).
constexpr bool kPeakIsTheLibrarys = false;
#else
constexpr bool kPeakIsTheLibrarys = true;
#endif

// Drops the file's clean pages from the page cache (written back first): its next read comes
// from the disk.
void drop_from_page_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  EXPECT_EQ(::fdatasync(fd), 0);
  EXPECT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  ::close(fd);
}

// C (m x n) = A (m x k) B (k x n) with k small: C dominates; 3200^2 doubles are 78 MiB.
TEST(OocLimits, PeakMemoryStaysUnderTheBudget) {
  const index_t m = 3200, n = 3200, k = 8;
  const Stored a{m, k, 1, true}, b{k, n, 2, false};
  const MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);
  const MatrixFile out = MatrixFile::npy(npy::file("c.npy"));
  Options o;
  o.memory_limit = std::int64_t{1} << 20;
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::int64_t operands = (m * k + k * n + m * n) * 8;
  ASSERT_GE(operands, std::int64_t{8} * ranks * o.memory_limit);
  for (const IoMethod io : {IoMethod::MpiIo, IoMethod::Mmap}) {
    FileGemmSettings s;
    s.io = io;
    const auto rep = gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::N, fb, 1.0, 0.0, {}, out, o, s);
    EXPECT_TRUE(rep.plan.out_of_core);
    if (kPeakIsTheLibrarys) {
      EXPECT_LE(rep.peak_rss, o.memory_limit + kOverhead)
          << to_string(io) << ": VmHWM " << rep.peak_rss << " bytes, operands " << operands;
    }
    // Sampled entries of C against a dot product of the generated rows and columns.
    if (world_rank() == 0) {
      std::ifstream f(out.path, std::ios::binary);  // the header, then single entries
      std::string head(256, '\0');
      f.read(head.data(), 256);
      const NpyHeader h = parse_npy_header(head);
      for (index_t i = 0; i < m; i += 797)
        for (index_t j = 0; j < n; j += 811) {
          double want = 0, got = 0;
          for (index_t l = 0; l < k; ++l) want += entry<double>(i, l, 1) * entry<double>(l, j, 2);
          f.seekg(h.data_offset + (i + j * m) * 8);
          f.read(reinterpret_cast<char*>(&got), 8);
          EXPECT_NEAR(got, want, 1e-12 * k) << "C(" << i << "," << j << ") " << to_string(io);
        }
    }
  }
}

TEST(OocLimits, DestinationThatFillsUpLeavesNothing) {
  const Stored a{90, 40, 1, true}, b{40, 90, 2, true};
  const MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);
  const std::string out = npy::file("full.npy");
  Options o;
  o.memory_limit = std::int64_t{1600} * 8;
  const auto before = npy::snapshot();
  (void)std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  rlimit small = old;
  small.rlim_cur = 30000;  // C is 64800 bytes of data
  setrlimit(RLIMIT_FSIZE, &small);
  expect_same_error_everywhere<IoError>(
      [&] {
        gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::N, fb, 1.0, 0.0, {}, MatrixFile::npy(out), o);
      },
      // Open MPI's OMPIO returns a short write, MPICH's ROMIO fails the call with EFBIG
      // ("MPI_File_write_at failed: ... File too large"): either way a write error.
      "write");
  setrlimit(RLIMIT_FSIZE, &old);
  EXPECT_EQ(npy::snapshot(), before);
}

// `plan --memory-limit` on a product that fits no in-core candidate prints the streamed
// schedule: out of core, passes over A and B, bytes per rank and a predicted time.
TEST(OocLimits, PlanPrintsTheOutOfCoreSchedule) {
  cli::PlanConfig cfg;
  cfg.m = cfg.n = cfg.k = 100000, cfg.ranks = 4, cfg.memory_limit = "1G";
  ::testing::internal::CaptureStdout();
  cli::run_plan(cfg);
  const std::string out = ::testing::internal::GetCapturedStdout();
  if (world_rank() != 0) {
    EXPECT_EQ(out, "");
    return;
  }
  EXPECT_NE(out.find("memory: out of core"), std::string::npos) << out;
  EXPECT_NE(out.find("passes over A"), std::string::npos) << out;
  EXPECT_NE(out.find("predicted"), std::string::npos) << out;
  const OocPlan p = plan_out_of_core(100000, 100000, 100000, Dtype::F64, 4, std::int64_t{1} << 30);
  EXPECT_TRUE(p.out_of_core);
  EXPECT_GT(p.passes_a, 1);
  EXPECT_LE((p.bm * p.bn + 2 * p.kb * (p.bm + p.bn)) * 8, p.budget);
}

// `plan --io mmap` prices the streamed schedule for mmap's reads and prints each read path's
// own plan and prediction, mmap's above posix's (its page-cache copies cost more).
TEST(OocLimits, PlanIoPricesThatReadPath) {
  cli::PlanConfig cfg;
  cfg.m = cfg.n = cfg.k = 100000, cfg.ranks = 4, cfg.memory_limit = "1G", cfg.io = "mmap";
  ::testing::internal::CaptureStdout();
  cli::run_plan(cfg);
  const std::string out = ::testing::internal::GetCapturedStdout();
  if (world_rank() != 0) return;
  EXPECT_NE(out.find("read (mmap)"), std::string::npos) << out;
  const std::int64_t budget = std::int64_t{1} << 30;
  double seconds[3] = {};
  for (const IoMethod io : {IoMethod::Posix, IoMethod::MpiIo, IoMethod::Mmap}) {
    const OocPlan p = plan_out_of_core(100000, 100000, 100000, Dtype::F64, 4, budget, false, false,
                                       false, true, 0, io);
    seconds[static_cast<int>(io)] = p.predicted_seconds;
    char said[96];
    (void)std::snprintf(said, sizeof said, " %s %.3g s (%lldx%lld", to_string(io).c_str(),
                        p.predicted_seconds, static_cast<long long>(p.bm),
                        static_cast<long long>(p.bn));
    EXPECT_NE(out.find(std::string("own plan (--io):") + (io == IoMethod::Posix ? said : "")),
              std::string::npos)
        << out;
    EXPECT_NE(out.find(said), std::string::npos) << said << "\n" << out;
  }
  EXPECT_GT(seconds[static_cast<int>(IoMethod::Mmap)], seconds[static_cast<int>(IoMethod::Posix)]);
}

// Files the node's memory can keep: dropped from the page cache, read in several passes, they
// cost the disk once (the rank's share of A and B), not once per pass (plan_out_of_core, which
// knows no files, prices every pass at the disk).
TEST(OocLimits, ColdOperandsThatFitThePageCacheCostTheDiskOnce) {
  const Stored a{300, 200, 1, true}, b{200, 250, 2, true};
  const MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);
  for (const MatrixFile* f : {&fa, &fb}) drop_from_page_cache(f->path);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto da = describe_file(fa, MPI_COMM_WORLD), db = describe_file(fb, MPI_COMM_WORLD);
  Options o;
  o.memory_limit = std::int64_t{4000} * 8;
  const OocPlan p = plan_files(MPI_COMM_WORLD, Op::N, da, Op::N, db, {}, true, o, true);
  ASSERT_LT(p.cached, 0.5) << "the files stayed in the page cache";
  const double share = (300.0 * 200 + 200.0 * 250) * 8 / world_size();
  ASSERT_GT(static_cast<double>(p.bytes_read), share) << p.to_string();
  const double disk = MachineProfile::from_environment().disk_bytes_per_s;
  const auto written = static_cast<double>(p.bytes_written);
  EXPECT_NEAR(p.predicted_disk, ((1 - p.cached) * share + written) / disk, 1e-9) << p.to_string();
}

}  // namespace
}  // namespace shardmm::testing
