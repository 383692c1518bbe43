// The streamed (out-of-core) schedule and the in-core path of gemm_files, per element type.
#pragma once

#include <mpi.h>

#include <chrono>

#include "shardmm/ooc.hpp"

namespace shardmm::ooc {

/// Everything gemm_files checked, in one place.
struct Job {
  MPI_Comm comm = MPI_COMM_NULL;
  Op opA = Op::N, opB = Op::N;
  MatrixFile A, B, C0, out;
  bool with_c0 = false;
  std::complex<double> alpha{1, 0}, beta{0, 0};
  OocPlan plan;
  Options options;
  FileGemmSettings settings;
  std::chrono::steady_clock::time_point t0;  ///< when gemm_files started
};

/// Collective: runs the out-of-core schedule of job.plan; writes job.out whole or not at all.
template <Scalar T>
void stream_gemm(const Job& job, FileGemmReport& report);

/// Collective: reads the operands into block-cyclic matrices, gemm, writes job.out.
template <Scalar T>
void in_core_gemm(const Job& job, FileGemmReport& report);

}  // namespace shardmm::ooc
