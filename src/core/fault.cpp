#include "core/fault.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>

#include "shardmm/config.hpp"
#include "shardmm/error.hpp"

namespace shardmm::fault {
namespace {

// Besides fault.hpp's phases, three in a streamed file product (src/ooc): ooc-write (a block
// write fails in the writer thread), direct-write (its O_DIRECT writes are refused as
// EINVAL would refuse them, whatever the kind but stall, so the writes fall back to buffered)
// and batched-io (its runs go a read or write call each instead of in AIO batches).
constexpr std::string_view kPhases[] = {"read",  "plan",      "redistribute", "multiply",
                                        "write", "ooc-write", "direct-write", "batched-io"};
constexpr std::string_view kKinds[] = {"alloc", "io", "error", "stall"};

template <std::size_t N>
bool one_of(std::string_view s, const std::string_view (&set)[N]) {
  for (std::string_view x : set)
    if (x == s) return true;
  return false;
}

[[noreturn]] void malformed(std::string_view spec, const std::string& why) {
  throw InvalidArgument("SHARDMM_FAULT_INJECT='" + std::string(spec) + "': " + why +
                        " (expected phase@rank[:alloc|io|error|stall], comma-separated)");
}

int parse_rank(std::string_view spec, std::string_view text) {
  if (text == "*") return -1;
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos ||
      text.size() > 9)
    malformed(spec, "bad rank '" + std::string(text) + "'");
  return std::stoi(std::string(text));
}

}  // namespace

bool selects(std::string_view spec, std::string_view phase, int world_rank, std::string& kind) {
  bool hit = false;
  for (std::size_t from = 0; !spec.empty() && from <= spec.size();) {
    const std::size_t comma = std::min(spec.find(',', from), spec.size());
    const std::string_view item = spec.substr(from, comma - from);
    from = comma + 1;
    const std::size_t at = item.find('@');
    if (at == std::string_view::npos) malformed(item, "missing '@'");
    const std::size_t colon = item.find(':', at);
    const std::string_view ph = item.substr(0, at);
    const std::string_view rk =
        item.substr(at + 1, colon == std::string_view::npos ? colon : colon - at - 1);
    const std::string_view kd = colon == std::string_view::npos ? "alloc" : item.substr(colon + 1);
    if (!one_of(ph, kPhases)) malformed(item, "unknown phase '" + std::string(ph) + "'");
    if (!one_of(kd, kKinds)) malformed(item, "unknown kind '" + std::string(kd) + "'");
    const int r = parse_rank(item, rk);
    if (!hit && ph == phase && (r < 0 || r == world_rank)) hit = true, kind = kd;
  }
  return hit;
}

void point(std::string_view phase) {
  const auto spec = environment("SHARDMM_FAULT_INJECT");
  if (!spec) return;
  int rank = 0;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) rank = -2;
  std::string kind;
  if (!selects(*spec, phase, rank, kind)) return;
  const std::string what = "injected failure in phase '" + std::string(phase) + "' on rank " +
                           std::to_string(rank) + " (SHARDMM_FAULT_INJECT)";
  if (kind == "stall") {  // a hang for the watchdog to find: nothing moves on this rank again
    (void)std::fprintf(stderr, "shardmm: rank %d stalls in phase '%s' (SHARDMM_FAULT_INJECT)\n",
                       rank, std::string(phase).c_str());
    (void)std::fflush(stderr);
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (kind == "alloc") throw std::bad_alloc();
  if (kind == "io") throw IoError(what);
  throw Error(what);
}

}  // namespace shardmm::fault
