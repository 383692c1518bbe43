// What bench measures beside the calls' times, shared by gemm (bench.cpp) and the PBLAS
// level-3 ops (bench_blas3.cpp): one core's GEMM rate, and the process's resident memory.
#pragma once

#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <vector>

#include "bench_util.hpp"
#include "mpi_util.hpp"
#include "shardmm/runtime.hpp"

namespace shardmm::cli::bench {

/// GEMM rate of one core measured now on every rank at once (the "peak" of the % column), on
/// each rank's share of an m x n x k product (up to 2048 cubed: small GEMMs run below peak).
template <Scalar T>
double local_rate(index_t m, index_t n, index_t k, int P) {
  const index_t s = std::clamp<index_t>(
      static_cast<index_t>(std::cbrt(double(m) * double(n) * double(k) / P)), 64, 2048);
  const auto size = static_cast<std::size_t>(s * s);
  std::vector<T> a(size, T(1)), b(size, T(1)), c(size, T(1));
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    SHARDMM_CLI_MPI(MPI_Barrier(MPI_COMM_WORLD));
    const double t0 = MPI_Wtime();
    local_gemm(Op::N, Op::N, s, s, s, T(1), a.data(), s, b.data(), s, T(0), c.data(), s);
    best = std::min(best, max_over(MPI_Wtime() - t0, MPI_COMM_WORLD));
  }
  return flops(s, s, s, is_complex_v<T>) / best;
}

/// Resident bytes of this process now (/proc/self/statm).
inline double resident_bytes() {
  long pages = 0, resident = 0;
  std::ifstream statm("/proc/self/statm");
  if (!(statm >> pages >> resident)) resident = 0;
  return double(resident) * double(sysconf(_SC_PAGESIZE));
}

/// The process's peak resident bytes so far (getrusage).
inline double peak_resident_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) * 1024.0;
}

}  // namespace shardmm::cli::bench
