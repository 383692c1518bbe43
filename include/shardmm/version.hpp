#pragma once

namespace shardmm {
inline constexpr const char* version_string = "0.1.0";
}  // namespace shardmm
