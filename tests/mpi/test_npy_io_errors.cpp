// Failures of the .npy / raw file functions on the world mesh: every bad file (missing,
// truncated, malformed, unsupported dtype, big-endian, wrong dtype, wrong shape, wrong raw
// size) throws the same error on every rank; a failed write (missing directory, file size
// limit hit while writing the data) leaves no output and keeps an existing file byte for byte.
#include <sys/resource.h>

#include <csignal>

#include "mpi/npy_test_util.hpp"

namespace shardmm::testing {
namespace {

using namespace npy;

// Lowers this process's file size limit (RLIMIT_FSIZE) for its lifetime: writes past
// `bytes` fail with EFBIG (SIGXFSZ ignored). A real failure, no hook in the library.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes, bool active = true) : active_(active) {
    if (!active_) return;
    getrlimit(RLIMIT_FSIZE, &old_);
    rlimit lim = old_;
    lim.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lim);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
  }
  ~FileSizeLimit() {
    if (!active_) return;
    setrlimit(RLIMIT_FSIZE, &old_);
    (void)std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  FileSizeLimit(FileSizeLimit&&) = delete;
  FileSizeLimit& operator=(FileSizeLimit&&) = delete;

 private:
  bool active_;
  rlimit old_{};
  void (*old_handler_)(int) = nullptr;
};

TEST(NpyIoErrors, BadFilesSameErrorEverywhere) {
  const Mesh mesh = world_mesh();
  DistMatrix<double> A(mesh, 4, 3, "A[I_X,J_Y]");
  auto read = [&](const std::string& name) {
    return [&A, path = file(name)] { read_npy(path, A); };
  };

  expect_same_error_everywhere<IoError>(read("missing.npy"), "missing.npy': No such file");
  put_file(file("trunc.npy"),
           header("<f8", false, shape(4, 3)) + data_bytes<double>(4, 3, false).substr(0, 88));
  expect_same_error_everywhere<IoError>(read("trunc.npy"),
                                        "truncated: expected 96 bytes of data, file has 88");
  put_file(file("trunc_header.npy"), header("<f8", false, shape(4, 3)).substr(0, 40));
  expect_same_error_everywhere<IoError>(read("trunc_header.npy"), "truncated .npy header");
  put_file(file("not.npy"), "PK\x03\x04 this is a zip file, not a .npy file");
  expect_same_error_everywhere<IoError>(read("not.npy"), "bad magic");
  put_file(file("malformed.npy"), header_with_dict("{'descr': '<f8', 'fortran_order': False}") +
                                      data_bytes<double>(4, 3, false));
  expect_same_error_everywhere<IoError>(read("malformed.npy"), "key 'shape' is missing");
  put_file(file("int.npy"), header("<i4", false, shape(4, 3)) + std::string(48, '\0'));
  expect_same_error_everywhere<IoError>(read("int.npy"), "unsupported dtype '<i4'");
  put_file(file("big.npy"), header(">f8", false, shape(4, 3)) + std::string(96, '\0'));
  expect_same_error_everywhere<IoError>(read("big.npy"), "big-endian data is not supported");
  put_file(file("f4.npy"), header("<f4", false, shape(4, 3)) + data_bytes<float>(4, 3, false));
  expect_same_error_everywhere<IoError>(read("f4.npy"),
                                        "holds <f4 (f32) data, the matrix's element type is f64");
  put_file(file("shape.npy"), header("<f8", false, shape(3, 4)) + data_bytes<double>(3, 4, false));
  expect_same_error_everywhere<DimensionMismatch>(read("shape.npy"), "holds a 3x4 matrix");
  expect_same_error_everywhere<IoError>([&] { read_npy(g_dir, A); }, g_dir);
}

TEST(NpyIoErrors, RawSizeAndUnreducedWrites) {
  const Mesh mesh = world_mesh();
  DistMatrix<std::complex<float>> A(mesh, 4, 3, "A[I_XY,J]");
  put_file(file("short.raw"), data_bytes<std::complex<float>>(4, 3, true).substr(8));
  expect_same_error_everywhere<IoError>([&] { read_raw(file("short.raw"), A, true); },
                                        "file size is 88 bytes, a 4x3 c64 matrix needs exactly 96");
  put_file(file("long.raw"), data_bytes<std::complex<float>>(4, 3, true) + "x");
  expect_same_error_everywhere<IoError>([&] { read_raw(file("long.raw"), A, true); },
                                        "needs exactly 96");
  DistMatrix<double> U(mesh, 4, 3, "C[I_X,J]{U_Y}");
  expect_same_error_everywhere<InvalidArgument>([&] { write_npy(file("u.npy"), U); }, "unreduced");
  expect_same_error_everywhere<InvalidArgument>([&] { write_raw(file("u.raw"), U, true); },
                                                "unreduced");
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    EXPECT_FALSE(fs::exists(file("u.npy")));
    EXPECT_FALSE(fs::exists(file("u.raw")));
  }
}

TEST(NpyIoErrors, WriteIntoMissingDirectory) {
  const Mesh mesh = world_mesh();
  DistMatrix<double> A(mesh, 6, 5, "A[I_X,J_Y]");
  A.fill([](index_t i, index_t j) { return entry<double>(i, j); });
  expect_same_error_everywhere<IoError>([&] { write_npy(file("no_such_dir/out.npy"), A); },
                                        "cannot write '" + file("no_such_dir/out.npy") + "'");
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0) {
    EXPECT_FALSE(fs::exists(file("no_such_dir")));
  }
  EXPECT_EQ(leftover_temps(), 0);
}

// The temporary file exists and the data write fails on every rank: the existing file is
// kept byte for byte and the temporary is gone.
TEST(NpyIoErrors, FailedWriteKeepsExistingFile) {
  const Mesh mesh = world_mesh();
  const std::string old = header("<f8", true, shape(2, 2)) + data_bytes<double>(2, 2, true, 9);
  put_file(file("keep.npy"), old);
  DistMatrix<double> A(mesh, 40, 30, "A[I_X:c,J_Y]");
  A.fill([](index_t i, index_t j) { return entry<double>(i, j); });
  {
    const FileSizeLimit limit(256);
    expect_same_error_everywhere<IoError>([&] { write_npy(file("keep.npy"), A); },
                                          "cannot write '" + file("keep.npy") + "'");
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_bytes(file("keep.npy"), old, "existing file after a failed write");
  EXPECT_EQ(leftover_temps(), 0);
}

// The size limit on the last rank only: whether that rank's writes fail depends on which
// ranks MPI-IO lets write (collective buffering), so either outcome is allowed, but it must be
// the same on every rank: an error everywhere with the old file kept, or the new file.
TEST(NpyIoErrors, OneRankFailureIsCollective) {
  const Mesh mesh = world_mesh();
  const std::string old = header("<f8", true, shape(2, 2)) + data_bytes<double>(2, 2, true, 9);
  put_file(file("keep1.npy"), old);
  DistMatrix<double> A(mesh, 40, 30, "A[I_X,J_Y]");
  A.fill([](index_t i, index_t j) { return entry<double>(i, j); });
  std::string what;
  {
    const FileSizeLimit limit(256, world_rank() == world_size() - 1);
    try {
      write_npy(file("keep1.npy"), A);
    } catch (const IoError& e) {
      what = e.what();
    }
  }
  int failed = what.empty() ? 0 : 1, lo = 0, hi = 0;
  MPI_Allreduce(&failed, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&failed, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lo, hi) << "write_npy failed on some ranks only: " << what;
  const std::string want =
      hi ? old : header("<f8", true, shape(40, 30)) + data_bytes<double>(40, 30, true);
  expect_bytes(file("keep1.npy"), want, hi ? "old file after a failed write" : "new file");
  EXPECT_EQ(leftover_temps(), 0);
  if (world_rank() == 0)
    std::printf("[ info ] one-rank size limit: write %s\n", hi ? "failed everywhere" : "succeeded");
}

}  // namespace
}  // namespace shardmm::testing
