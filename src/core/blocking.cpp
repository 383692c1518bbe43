// The chain broadcast's chunk, read once from the environment: comm::ibcast cuts its chains
// with it and the cost model prices their fill with it (core/blocking.hpp).
#include "core/blocking.hpp"

#include <cstdlib>
#include <string_view>

#include "shardmm/config.hpp"
#include "shardmm/error.hpp"
#include "shardmm/plan.hpp"

namespace shardmm::blocking {
namespace {

// SHARDMM_BCAST_CHUNK when it is 0 or a byte count (parse_bytes), else 256 KiB. noexcept: it
// initialises a static.
std::int64_t initial_chunk() noexcept {
  constexpr std::int64_t kDefault = std::int64_t{256} << 10;
  try {
    const auto env = environment("SHARDMM_BCAST_CHUNK");
    if (!env) return kDefault;
    if (*env == "0") return 0;
    return parse_bytes(*env);
  } catch (...) {  // a bad value keeps the default
    return kDefault;
  }
}

std::int64_t g_chunk_bytes = initial_chunk();

}  // namespace

std::int64_t bcast_chunk_bytes() { return g_chunk_bytes; }

void set_bcast_chunk_bytes(std::int64_t bytes) {
  if (bytes < 0) throw InvalidArgument("broadcast chunk size must be >= 0 bytes");
  g_chunk_bytes = bytes;
}

}  // namespace shardmm::blocking
