// The launcher's error agreement over a communicator (the library agrees its own errors inside
// every call; these are for the launcher's own checks and for the bench's per-contender
// errors): every rank ends with the same outcome and the same message, so rank 0 can print it.
#pragma once

#include <mpi.h>

#include <exception>
#include <optional>
#include <string>

#include "mpi_util.hpp"
#include "shardmm/error.hpp"

namespace shardmm::cli {
namespace agree_detail {

enum Kind : int { kNone, kInvalid, kDimension, kNotSupported, kIo, kOther };

inline int kind_of(const std::exception& e) {
  if (dynamic_cast<const DimensionMismatch*>(&e) != nullptr) return kDimension;
  if (dynamic_cast<const InvalidArgument*>(&e) != nullptr) return kInvalid;
  if (dynamic_cast<const NotSupported*>(&e) != nullptr) return kNotSupported;
  if (dynamic_cast<const IoError*>(&e) != nullptr) return kIo;
  return kOther;
}

[[noreturn]] inline void rethrow_as(int kind, const std::string& what) {
  switch (kind) {
    case kInvalid: throw InvalidArgument(what);
    case kDimension: throw DimensionMismatch(what);
    case kNotSupported: throw NotSupported(what);
    case kIo: throw IoError(what);
    default: throw Error(what);
  }
}

/// Collective: `root`'s (kind, text) on every rank.
inline void broadcast(int& kind, std::string& text, int root, MPI_Comm comm) {
  int len = static_cast<int>(text.size());
  int head[2] = {kind, len};
  SHARDMM_CLI_MPI(MPI_Bcast(head, 2, MPI_INT, root, comm));
  kind = head[0];
  text.resize(static_cast<std::size_t>(head[1]));
  if (head[1] > 0) SHARDMM_CLI_MPI(MPI_Bcast(text.data(), head[1], MPI_CHAR, root, comm));
}

}  // namespace agree_detail

/// Collective over `comm`: nothing when no rank failed (`local` empty everywhere), else the
/// message of the lowest failing rank, on every rank.
inline std::optional<std::string> first_failure(MPI_Comm comm,
                                                const std::optional<std::string>& local) {
  int rank = 0, size = 1;
  SHARDMM_CLI_MPI(MPI_Comm_rank(comm, &rank));
  SHARDMM_CLI_MPI(MPI_Comm_size(comm, &size));
  const int mine = local ? rank : size;
  int first = size;
  SHARDMM_CLI_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) return std::nullopt;
  int kind = agree_detail::kOther;
  std::string what = local.value_or("");
  agree_detail::broadcast(kind, what, first, comm);
  return what;
}

/// The message of what `f` threw on this rank, if it did.
template <class F>
std::optional<std::string> thrown_by(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

/// Collective over `comm`: runs `f` on every rank; first_failure of the outcomes. `f` may
/// communicate only where its failures are agreed already (library calls are).
template <class F>
std::optional<std::string> failure_of(MPI_Comm comm, F&& f) {
  return first_failure(comm, thrown_by(f));
}

/// Collective over `comm`: runs `check` on rank 0 alone (a check of shared files: one rank
/// looks); then every rank throws what it threw, the same type (InvalidArgument,
/// DimensionMismatch, NotSupported, IoError, else Error) and the same text.
template <class F>
void checked_on_root(MPI_Comm comm, F&& check) {
  int rank = 0;
  SHARDMM_CLI_MPI(MPI_Comm_rank(comm, &rank));
  int kind = agree_detail::kNone;
  std::string what;
  if (rank == 0) {
    try {
      check();
    } catch (const std::exception& e) {
      kind = agree_detail::kind_of(e), what = e.what();
    }
  }
  agree_detail::broadcast(kind, what, 0, comm);
  if (kind != agree_detail::kNone) agree_detail::rethrow_as(kind, what);
}

}  // namespace shardmm::cli
