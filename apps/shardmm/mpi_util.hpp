// The launcher's checked MPI calls: SHARDMM_CLI_MPI(call) throws shardmm::MpiError (the call's
// text and MPI's message) when the call does not return MPI_SUCCESS.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <type_traits>

#include "shardmm/error.hpp"
#include "shardmm/types.hpp"

#define SHARDMM_CLI_MPI(call)                                                              \
  do {                                                                                     \
    const int shardmm_cli_rc_ = (call);                                                    \
    if (shardmm_cli_rc_ != MPI_SUCCESS) throw ::shardmm::MpiError(#call, shardmm_cli_rc_); \
  } while (0)

namespace shardmm::cli {

template <Scalar T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return MPI_C_FLOAT_COMPLEX;
  else return MPI_C_DOUBLE_COMPLEX;
}

/// This process's rank in MPI_COMM_WORLD; 0 when MPI is not initialized (`plan`, help and
/// usage errors outside mpirun run without MPI: main.cpp).
inline int world_rank() {
  int initialized = 0, rank = 0;
  SHARDMM_CLI_MPI(MPI_Initialized(&initialized));
  if (initialized) SHARDMM_CLI_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  return rank;
}

/// In-place sum of `count` elements over `comm`, in messages of at most INT_MAX elements.
template <Scalar T>
void allreduce_sum(T* buf, index_t count, MPI_Comm comm) {
  for (index_t off = 0; off < count; off += INT_MAX) {
    const int n = static_cast<int>(std::min<index_t>(count - off, INT_MAX));
    SHARDMM_CLI_MPI(MPI_Allreduce(MPI_IN_PLACE, buf + off, n, mpi_type<T>(), MPI_SUM, comm));
  }
}

}  // namespace shardmm::cli
