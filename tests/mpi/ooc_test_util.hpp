// Helpers of the out-of-core tests: operand files written byte by byte from the .npy format
// definition (never through shardmm's writer), and a serial OpenBLAS reference of
// alpha op(A) op(B) + beta C0 checked against the result file with a normwise bound.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <vector>

#include "blas/blas.hpp"
#include "mpi/gemm_check.hpp"
#include "mpi/npy_test_util.hpp"
#include "shardmm/ooc.hpp"

namespace shardmm::testing::ooc {

/// A stored rows x cols matrix of entry(i, j, seed).
struct Stored {
  index_t rows = 0, cols = 0;
  int seed = 0;
  bool fortran = true;
};

/// Writes `s` as an .npy file (rank 0) and returns its MatrixFile.
template <class T>
MatrixFile put_npy(const std::string& name, const Stored& s) {
  const std::string path = npy::file(name);
  npy::put_file(path, npy::header(npy::descr<T>(), s.fortran, npy::shape(s.rows, s.cols)) +
                          npy::data_bytes<T>(s.rows, s.cols, s.fortran, s.seed));
  return MatrixFile::npy(path);
}

/// Writes `s` as a raw file (rank 0) whose data starts `offset` bytes in, and returns its
/// MatrixFile. The bytes before the data are a hole (pwrite past the end), which takes no disk
/// where the file system has sparse files.
template <class T>
MatrixFile put_raw(const std::string& name, const Stored& s, std::int64_t offset = 0) {
  const std::string path = npy::file(name);
  if (world_rank() == 0) {
    const std::string bytes = npy::data_bytes<T>(s.rows, s.cols, s.fortran, s.seed);
    const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
    const bool ok =
        fd >= 0 && ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) ==
                       static_cast<ssize_t>(bytes.size());
    if (fd >= 0) ::close(fd);
    EXPECT_TRUE(ok) << path;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return MatrixFile::raw_file(path, dtype_of<T>(), s.rows, s.cols, s.fortran, offset);
}

/// Bytes of disk a file occupies (its allocated blocks; a hole takes none); -1 when missing.
inline std::int64_t disk_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_blocks) * 512 : -1;
}

// The stored matrix, column-major.
template <class T>
std::vector<T> dense(const Stored& s) {
  std::vector<T> v(static_cast<std::size_t>(s.rows * s.cols));
  for (index_t j = 0; j < s.cols; ++j)
    for (index_t i = 0; i < s.rows; ++i)
      v[static_cast<std::size_t>(i + j * s.rows)] = entry<T>(i, j, s.seed);
  return v;
}

// Rank 0: the m x n .npy result at `path`, column-major (empty when unreadable).
template <class T>
std::vector<T> read_result(const std::string& path, index_t m, index_t n) {
  const std::string bytes = npy::get_file(path);
  const NpyHeader h = parse_npy_header(bytes);
  if (h.rows != m || h.cols != n || h.dtype != dtype_of<T>()) return {};
  std::vector<T> v(static_cast<std::size_t>(m * n));
  const char* p = bytes.data() + h.data_offset;
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i)
      std::memcpy(&v[static_cast<std::size_t>(i + j * m)],
                  p + (h.fortran_order ? i + j * m : i * n + j) * static_cast<index_t>(sizeof(T)),
                  sizeof(T));
  return v;
}

/// The normwise error of the .npy result at `out` against OpenBLAS, in units of eps (rank 0
/// computes, every rank returns it; infinity when the file is missing or malformed).
template <class T>
double result_error(Op opA, const Stored& a, Op opB, const Stored& b, T alpha, T beta,
                    const Stored* c0, const std::string& out) {
  double err = 0;
  if (world_rank() == 0) {
    const index_t m = opA == Op::N ? a.rows : a.cols, k = opA == Op::N ? a.cols : a.rows;
    const index_t n = opB == Op::N ? b.cols : b.rows;
    const auto A = dense<T>(a), B = dense<T>(b);
    std::vector<T> ref = c0 ? dense<T>(*c0) : std::vector<T>(static_cast<std::size_t>(m * n));
    const auto C0 = ref;
    blas::gemm(opA, opB, m, n, k, alpha, A.data(), std::max<index_t>(a.rows, 1), B.data(),
               std::max<index_t>(b.rows, 1), c0 ? beta : T(0), ref.data(), std::max<index_t>(m, 1));
    const auto got = read_result<T>(out, m, n);
    if (got.size() != ref.size()) {
      err = std::numeric_limits<double>::infinity();
    } else {
      std::vector<T> diff(ref.size());
      for (std::size_t i = 0; i < ref.size(); ++i) diff[i] = got[i] - ref[i];
      const double denom = std::sqrt(double(k) + 2) * std::abs(alpha) * fro(A) * fro(B) +
                           2 * std::abs(beta) * fro(C0);
      err = fro(diff) / denom / std::numeric_limits<real_t<T>>::epsilon();
      if (!std::isfinite(err)) err = std::numeric_limits<double>::infinity();
    }
  }
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return err;
}

}  // namespace shardmm::testing::ooc
