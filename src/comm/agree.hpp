// Phase-boundary error agreement. A problem that only some ranks can see (an allocation that
// fails on one rank, a file one rank cannot read, a bad local buffer) must not leave the
// other ranks waiting in the next collective. Each phase does its rank-local work (allocate,
// pack, check) first, then every rank calls agree(): one MPI_Allreduce of an int (the lowest
// failing rank, or P) tells everyone whether anybody failed; if so, the lowest failing rank
// broadcasts its error kind and text and every rank throws the same exception.
#pragma once

#include <mpi.h>

#include <exception>
#include <string_view>

#include "trace/trace.hpp"

namespace shardmm::comm {

/// Collective over `comm`. `local` is this rank's failure (null: none). Returns when no rank
/// failed; otherwise every rank throws the lowest failing rank's error: the same type
/// (shardmm::Error subclasses; std::bad_alloc becomes OutOfMemory) and the same text, ending
/// in "[<phase>: first failing rank r of P]" (replacing such a suffix from an inner agreement
/// on a sub-communicator, whose rank numbers would mislead).
void agree(MPI_Comm comm, std::string_view phase, const std::exception_ptr& local);

/// Runs `body`, then agree()s on its outcome. `body` may communicate only where every
/// rank of a communicator it uses fails or succeeds together (rank-local work, or work on
/// sub-communicators that agree inside), else a failing rank leaves peers waiting in it.
template <class F>
void agreed(MPI_Comm comm, std::string_view phase, F&& body) {
  std::exception_ptr failure;
  try {
    const trace::Span span("prepare", trace::Cat::Step);  // the rank-local work
    body();
  } catch (...) {
    failure = std::current_exception();
  }
  agree(comm, phase, failure);
}

}  // namespace shardmm::comm
