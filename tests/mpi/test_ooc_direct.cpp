// The streamed result's writes: O_DIRECT for each run's whole pages (buffered heads and tails)
// against buffered writes of everything; the file must come out byte for byte the same, in
// either order of C and with each reader, and right against OpenBLAS. A refusal of O_DIRECT
// (injected as EINVAL, on one rank or all) falls back to buffered writes with the same bytes;
// a block write that fails (injected) fails every rank and leaves no output.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "comm/mpi_check.hpp"
#include "mpi/mpi_test_util.hpp"
#include "mpi/ooc_test_util.hpp"
#include "ooc/buffer.hpp"
#include "shardmm/error.hpp"

namespace shardmm::testing {
namespace {

namespace fs = std::filesystem;
using ooc::Stored;

[[maybe_unused]] ::testing::Environment* const g_env =
    ::testing::AddGlobalTestEnvironment(new npy::TempDir);

constexpr double kBound = 20;  // normwise error, units of eps

// Whether the test directory's file system takes an aligned O_DIRECT write (every rank asks).
bool takes_direct() {
  const std::string path = npy::file("probe." + std::to_string(world_rank()));
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_DIRECT | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  if (ok) {
    shardmm::ooc::Buffer<char> page;
    page.resize(4096);
    ok = ::pwrite(fd, page.data(), 4096, 0) == 4096;
    ::close(fd);
  }
  fs::remove(path);
  return ok;
}

std::int64_t sum_over_ranks(std::int64_t v) {
  std::int64_t all = 0;
  SHARDMM_MPI(MPI_Allreduce(&v, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return all;
}

// A 200 x 1300 f64 product (k = 40) at a 1 MiB budget: several blocks whose runs (rows of a
// C-order C, columns of a Fortran-order one) span whole pages.
struct Product {
  Stored a{200, 40, 1, true}, b{40, 1300, 2, false};
  MatrixFile fa = ooc::put_npy<double>("a.npy", a), fb = ooc::put_npy<double>("b.npy", b);

  FileGemmReport run(const std::string& out, bool fortran, IoMethod io, bool direct) const {
    MatrixFile c = MatrixFile::npy(out);
    c.fortran_order = fortran;
    Options o;
    o.memory_limit = std::int64_t{1} << 20;
    FileGemmSettings s;
    s.io = io;
    s.force_out_of_core = true;
    s.direct_writes = direct;
    return gemm_files(MPI_COMM_WORLD, Op::N, fa, Op::N, fb, 1.5, 0.0, {}, c, o, s);
  }
};

TEST(OocDirect, DirectAndBufferedWritesAreByteIdentical) {
  const Product p;
  const bool direct_ok = takes_direct();
  for (const IoMethod io : {IoMethod::Posix, IoMethod::MpiIo, IoMethod::Mmap})
    for (const bool fortran : {false, true}) {
      const std::string what = to_string(io) + (fortran ? " F" : " C");
      const auto d = p.run(npy::file("direct.npy"), fortran, io, true);
      const auto b = p.run(npy::file("buffered.npy"), fortran, io, false);
      EXPECT_GT(d.plan.blocks, 2) << what << " " << d.plan.to_string();
      // A run of a block (a row of C in C order, a column in Fortran order) spans a whole page
      // when it is 2 pages long, or when the block is one run (whole rows or columns).
      const index_t run = fortran ? d.plan.bm : d.plan.bn, across = fortran ? p.a.rows : p.b.cols;
      const bool pages = run * 8 >= index_t{2} * 4096 || run == across;
      if (fortran) {  // not vacuous: the plan's blocks are whole columns of C (bm = m)
        EXPECT_TRUE(pages) << what << " " << d.plan.to_string();
      }
      const std::int64_t all = sum_over_ranks(d.bytes_written_direct);
      if (direct_ok && pages) {
        EXPECT_GT(all, 0) << what;
        if (d.bytes_written > 0) {
          EXPECT_GT(d.bytes_written_direct, 0) << what;
        }
      } else {
        EXPECT_EQ(all, 0) << what;  // refused at open, or no whole page: all buffered
      }
      EXPECT_LE(d.bytes_written_direct, d.bytes_written) << what;
      EXPECT_EQ(b.bytes_written_direct, 0) << what;
      npy::expect_bytes(npy::file("direct.npy"), npy::get_file(npy::file("buffered.npy")), what);
      EXPECT_LE(ooc::result_error<double>(Op::N, p.a, Op::N, p.b, 1.5, 0.0, nullptr,
                                          npy::file("direct.npy")),
                kBound)
          << what;
    }
  EXPECT_EQ(npy::leftover_temps(), 0);
}

TEST(OocDirect, RefusedDirectWritesFallBackToBuffered) {
  const Product p;
  (void)p.run(npy::file("buffered.npy"), false, IoMethod::Posix, false);
  for (const std::string who : {"0", "*"}) {
    FileGemmReport r;
    {
      const Injection inject("direct-write@" + who + ":io");
      r = p.run(npy::file("fallback.npy"), false, IoMethod::Posix, true);
    }
    if (who == "*" || world_rank() == 0) {
      EXPECT_EQ(r.bytes_written_direct, 0) << who;
    }
    npy::expect_bytes(npy::file("fallback.npy"), npy::get_file(npy::file("buffered.npy")),
                      "refused on " + who);
  }
  EXPECT_EQ(npy::leftover_temps(), 0);
}

TEST(OocDirect, FailedBlockWriteLeavesNoOutput) {
  const Product p;
  const std::string out = npy::file("old.npy");
  const std::string last = std::to_string(world_size() - 1);
  for (const bool direct : {true, false}) {
    npy::put_file(out, "previous contents");
    {
      const Injection inject("ooc-write@" + last + ":io");
      expect_same_error_everywhere<IoError>(
          [&] { (void)p.run(out, false, IoMethod::Posix, direct); }, "injected failure");
    }
    if (world_rank() == 0) {
      EXPECT_EQ(npy::get_file(out), "previous contents") << direct;
      EXPECT_EQ(npy::leftover_temps(), 0) << direct;
    }
  }
}

}  // namespace
}  // namespace shardmm::testing
