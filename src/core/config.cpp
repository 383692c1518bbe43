// The one place that reads shardmm's environment variables (include/shardmm/config.hpp).
#include "shardmm/config.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>

#include "shardmm/error.hpp"

namespace shardmm {
namespace {

// Name and unset meaning, in docs/USAGE.md's table order.
constexpr std::array kVariables = {
    EnvVariable{"SHARDMM_MEMORY_LIMIT", "none"},
    EnvVariable{"SHARDMM_MEMORY_GROWTH", "1.3"},
    EnvVariable{"SHARDMM_PROFILE", "built-in defaults"},
    EnvVariable{"SHARDMM_WAIT", "auto"},
    EnvVariable{"SHARDMM_BCAST_CHUNK", "256K"},
    EnvVariable{"SHARDMM_MAX_MESSAGE", "2147483647"},
    EnvVariable{"SHARDMM_TRACE", "unset"},
    EnvVariable{"SHARDMM_WATCHDOG", "unset"},
    EnvVariable{"SHARDMM_WATCHDOG_DIR", "TMPDIR, else /tmp"},
    EnvVariable{"SHARDMM_FAULT_INJECT", "unset"},
    EnvVariable{"SHARDMM_VERBOSE", "0"},
    EnvVariable{"SHARDMM_REPORT_ERRORS", "first"},
};

}  // namespace

std::span<const EnvVariable> environment_variables() { return kVariables; }

std::optional<std::string> environment(std::string_view name) {
  const bool listed = std::any_of(kVariables.begin(), kVariables.end(),
                                  [&](const EnvVariable& v) { return v.name == name; });
  if (!listed)
    throw InvalidArgument("environment: '" + std::string(name) +
                          "' is not one of shardmm's variables (include/shardmm/config.hpp)");
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace shardmm
