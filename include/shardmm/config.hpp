// The environment variables shardmm reads, in one list, through one reader. Every SHARDMM_*
// variable of the library, the ScaLAPACK drop-in and the launcher is listed here with what an
// unset variable means; docs/USAGE.md's table ("Environment variables") lists exactly these
// (the docs_environment test checks both directions, and that no other source reads one).
// Each variable is read where its setting is needed (a call's start, a mesh's set-up), so a
// value set before the call applies to it; an explicit Options field wins over its variable.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace shardmm {

/// One variable: its name and what it means when unset.
struct EnvVariable {
  std::string_view name;      ///< e.g. "SHARDMM_TRACE"
  std::string_view fallback;  ///< the setting when unset, as docs/USAGE.md writes it
};

/// Every SHARDMM_* variable shardmm reads, in docs/USAGE.md's order.
std::span<const EnvVariable> environment_variables();

/// The listed variable's text now, or nothing when it is unset or empty. Throws
/// InvalidArgument for a name that is not in environment_variables() (a typo in a caller).
std::optional<std::string> environment(std::string_view name);

}  // namespace shardmm
