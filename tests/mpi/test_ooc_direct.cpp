// The streamed result's writes: O_DIRECT for each run's whole pages (buffered heads and tails)
// against buffered writes of everything; the file must come out byte for byte the same, in
// either order of C and with each reader, and right against OpenBLAS. A refusal of O_DIRECT
// (injected as EINVAL, on one rank or all) falls back to buffered writes with the same bytes;
// a block write that fails (injected) fails every rank and leaves no output. Runs moved in
// batches (AIO) come out the same as a read or write call per run, short reads included.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "comm/mpi_check.hpp"
#include "mpi/mpi_test_util.hpp"
#include "mpi/ooc_test_util.hpp"
#include "ooc/buffer.hpp"
#include "ooc/run_io.hpp"
#include "shardmm/error.hpp"

namespace shardmm::testing {
namespace {

namespace fs = std::filesystem;
using ooc::Stored;

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
      } else if (!direct_ok || run * 8 < 4096) {  // refused at open, or no whole page
        EXPECT_EQ(all, 0) << what << " " << d.plan.to_string();  // all buffered
      }  // else 1-2 pages a run (the read path's plan): a whole page or none, by where it starts
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

// Every rank: a file of its own, strided runs (more than a batch of them: 700 runs, a short last
// one past the end), read and written in batches and one call per run.
TEST(OocDirect, BatchedRunsMoveTheSameBytes) {
  const std::string path = npy::file("runs." + std::to_string(world_rank()));
  std::string bytes(std::size_t{300000}, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 + i / 997);
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  shardmm::ooc::Runs r;  // 700 runs of 300 bytes, one every 420, from byte 17
  r.count = 700, r.len = 300, r.first = 17, r.stride = 420;
  shardmm::ooc::RunIo batched, single(false);
  EXPECT_TRUE(batched.batched());  // Linux: AIO is there (the runs would go one by one)
  EXPECT_FALSE(single.batched());
  std::string a(static_cast<std::size_t>(r.count * r.len), 'x'), b = a;
  EXPECT_EQ(batched.read(fd, r, a.data()), "");
  EXPECT_EQ(single.read(fd, r, b.data()), "");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.substr(0, 300), bytes.substr(17, 300));
  EXPECT_EQ(a.substr(std::size_t{699} * 300),
            bytes.substr(std::size_t{17} + std::size_t{699} * 420, 300));
  // Written back shifted by 5 bytes, in batches: the same bytes as one call per run.
  r.first = 22;
  EXPECT_EQ(batched.write(fd, r, a.data()), "");
  std::string back(static_cast<std::size_t>(r.count * r.len), 'y');
  EXPECT_EQ(single.read(fd, r, back.data()), "");
  EXPECT_EQ(back, a);
  // Runs past the file's end: the short one is named as in a call per run.
  r.first = 0, r.stride = 1000, r.count = 301;
  std::string c(static_cast<std::size_t>(r.count * r.len), 'z');
  const std::string e = batched.read(fd, r, c.data());
  EXPECT_NE(e.find("short read: the file ends at byte 300000"), std::string::npos) << e;
  EXPECT_EQ(single.read(fd, r, c.data()), e);
  ::close(fd);
  fs::remove(path);
}

// The streamed product with batched runs and with a call per run (injected on one rank or
// all): the same file, right against OpenBLAS.
TEST(OocDirect, BatchedAndSingleRunIoGiveTheSameFile) {
  const Product p;
  for (const bool fortran : {false, true}) {
    (void)p.run(npy::file("batched.npy"), fortran, IoMethod::Posix, false);
    for (const std::string who : {"0", "*"}) {
      {
        const Injection inject("batched-io@" + who + ":io");
        (void)p.run(npy::file("single.npy"), fortran, IoMethod::Posix, false);
      }
      npy::expect_bytes(npy::file("single.npy"), npy::get_file(npy::file("batched.npy")),
                        "single-run I/O on " + who);
    }
    EXPECT_LE(ooc::result_error<double>(Op::N, p.a, Op::N, p.b, 1.5, 0.0, nullptr,
                                        npy::file("batched.npy")),
              kBound)
        << fortran;
  }
  EXPECT_EQ(npy::leftover_temps(), 0);
}

}  // namespace
}  // namespace shardmm::testing
