// agree(): what moves is one int per rank (MPI_Allreduce, MIN) and, only on failure, the
// failing rank's error kind, then its text (bcast_string), broadcast from that rank.
#include "comm/agree.hpp"

#include <cstdint>
#include <new>
#include <string>

#include "comm/collectives.hpp"
#include "comm/mpi_check.hpp"
#include "shardmm/error.hpp"

namespace shardmm::comm {
namespace {

enum class Kind : int {
  Error,
  InvalidArgument,
  DimensionMismatch,
  NotSupported,
  OutOfMemory,
  IoError,
  Other
};

// Kind and text of a caught exception. ParseError and MpiError keep their base kinds
// (their extra fields are rank-local details).
std::pair<Kind, std::string> describe(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const InvalidArgument& x) {
    return {Kind::InvalidArgument, x.what()};
  } catch (const DimensionMismatch& x) {
    return {Kind::DimensionMismatch, x.what()};
  } catch (const NotSupported& x) {
    return {Kind::NotSupported, x.what()};
  } catch (const OutOfMemory& x) {
    return {Kind::OutOfMemory, x.what()};
  } catch (const IoError& x) {
    return {Kind::IoError, x.what()};
  } catch (const Error& x) {
    return {Kind::Error, x.what()};
  } catch (const std::bad_alloc& x) {
    return {Kind::OutOfMemory, std::string("allocation failed (") + x.what() + ")"};
  } catch (const std::exception& x) {
    return {Kind::Other, x.what()};
  } catch (...) {
    return {Kind::Other, "unknown exception"};
  }
}

[[noreturn]] void raise(Kind kind, const std::string& text) {
  switch (kind) {
    case Kind::InvalidArgument: throw InvalidArgument(text);
    case Kind::DimensionMismatch: throw DimensionMismatch(text);
    case Kind::NotSupported: throw NotSupported(text);
    case Kind::OutOfMemory: throw OutOfMemory(text);
    case Kind::IoError: throw IoError(text);
    case Kind::Error:
    case Kind::Other: break;
  }
  throw Error(text);
}

// The text without the suffix an inner agreement appended.
std::string strip_suffix(std::string text) {
  const std::size_t at = text.rfind(" [");
  if (at != std::string::npos && text.back() == ']' &&
      text.find(": first failing rank ", at) != std::string::npos)
    text.resize(at);
  return text;
}

}  // namespace

void agree(MPI_Comm comm, std::string_view phase, const std::exception_ptr& local) {
  const int me = comm_rank(comm), P = comm_size(comm);
  const int mine = local ? me : P;
  int root = P;
  trace::Span span("agree", trace::Cat::Wait);
  if (span.seen()) span.blocked("MPI_Allreduce", "agree '" + std::string(phase) + "'", comm);
  SHARDMM_MPI(MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, comm));
  if (root == P) return;
  auto [kind, text] = local && me == root ? describe(local) : std::pair{Kind::Other, std::string()};
  int k = static_cast<int>(kind);
  SHARDMM_MPI(MPI_Bcast(&k, 1, MPI_INT, root, comm));
  bcast_string(comm, text, root);
  raise(static_cast<Kind>(k), strip_suffix(text) + " [" + std::string(phase) +
                                  ": first failing rank " + std::to_string(root) + " of " +
                                  std::to_string(P) + "]");
}

}  // namespace shardmm::comm
