// Checked MPI calls and MPI datatype traits. Every MPI call in shardmm is checked: through
// SHARDMM_MPI, which throws MpiError (with the call's text and MPI's message) on failure, or,
// for MPI-IO, through io::mpi_io_error (io/file_transfer.hpp), which turns the code into a
// message the ranks agree on before throwing IoError. Destructors free handles unchecked
// (MPI_File_close, MPI_Win_free): they cannot throw.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>

#include "shardmm/error.hpp"
#include "shardmm/types.hpp"

namespace shardmm::comm {

[[noreturn]] void throw_mpi_error(const char* call, int code);

#define SHARDMM_MPI(call)                                                                         \
  do {                                                                                            \
    const int shardmm_mpi_rc_ = (call);                                                           \
    if (shardmm_mpi_rc_ != MPI_SUCCESS) ::shardmm::comm::throw_mpi_error(#call, shardmm_mpi_rc_); \
  } while (0)

template <class T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<float>() {
  return MPI_FLOAT;
}
template <>
inline MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}
template <>
inline MPI_Datatype mpi_type<std::complex<float>>() {
  return MPI_C_FLOAT_COMPLEX;
}
template <>
inline MPI_Datatype mpi_type<std::complex<double>>() {
  return MPI_C_DOUBLE_COMPLEX;
}
template <>
inline MPI_Datatype mpi_type<std::int64_t>() {
  return MPI_INT64_T;
}
template <>
inline MPI_Datatype mpi_type<std::uint16_t>() {
  return MPI_UINT16_T;
}
template <>
inline MPI_Datatype mpi_type<bf16>() {  // moved as bits; sums go through comm's own operation
  return MPI_UINT16_T;
}
template <>
inline MPI_Datatype mpi_type<f16>() {
  return MPI_UINT16_T;
}
template <>
inline MPI_Datatype mpi_type<int>() {
  return MPI_INT;
}

int comm_rank(MPI_Comm comm);
int comm_size(MPI_Comm comm);

/// Largest element count sent in one MPI message; larger transfers are split. Defaults to
/// INT_MAX; tests lower it (environment SHARDMM_MAX_MESSAGE or set_max_message_elems) so the
/// splitting path runs fast.
std::int64_t max_message_elems();
void set_max_message_elems(std::int64_t limit);

}  // namespace shardmm::comm
