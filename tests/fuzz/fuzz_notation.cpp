// libFuzzer target: the layout notation parser either throws ParseError (with a position
// inside the text) or returns a spec whose printed form parses back to the same spec.
#include <cstddef>
#include <cstdint>
#include <string>

#include "shardmm/error.hpp"
#include "shardmm/layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const shardmm::ShardingSpec s = shardmm::ShardingSpec::parse(text);
    if (!(shardmm::ShardingSpec::parse(s.to_string()) == s)) __builtin_trap();
  } catch (const shardmm::ParseError& e) {
    if (e.position() > text.size()) __builtin_trap();
  }
  return 0;
}
