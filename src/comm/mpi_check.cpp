#include "comm/mpi_check.hpp"

#include "shardmm/config.hpp"

#include <climits>
#include <cstdlib>
#include <string>

namespace shardmm {

MpiError::MpiError(const std::string& call, int code)
    : Error([&] {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS) len = 0;
        return "MPI call failed: " + call + ": " + std::string(msg, static_cast<std::size_t>(len));
      }()),
      code_(code) {}

namespace comm {

void throw_mpi_error(const char* call, int code) { throw MpiError(call, code); }

int comm_rank(MPI_Comm comm) {
  int r = 0;
  SHARDMM_MPI(MPI_Comm_rank(comm, &r));
  return r;
}

int comm_size(MPI_Comm comm) {
  int s = 0;
  SHARDMM_MPI(MPI_Comm_size(comm, &s));
  return s;
}

namespace {
// SHARDMM_MAX_MESSAGE when it is a whole number in [1, INT_MAX], else INT_MAX. noexcept: it
// initialises a static.
std::int64_t initial_limit() noexcept {
  try {
    const auto env = environment("SHARDMM_MAX_MESSAGE");
    if (!env) return INT_MAX;
    char* end = nullptr;
    const long long v = std::strtoll(env->c_str(), &end, 10);
    return end != env->c_str() && *end == '\0' && v > 0 && v <= INT_MAX ? v : INT_MAX;
  } catch (...) {  // no memory for the copy: the default
    return INT_MAX;
  }
}
std::int64_t g_max_message = initial_limit();
}  // namespace

std::int64_t max_message_elems() { return g_max_message; }
void set_max_message_elems(std::int64_t limit) {
  if (limit < 1 || limit > INT_MAX) throw InvalidArgument("max message size out of range");
  g_max_message = limit;
}

}  // namespace comm
}  // namespace shardmm
