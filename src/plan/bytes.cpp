// parse_bytes: the one reader of byte counts ("512M", "4MB", "4MiB"), for the launcher's
// options and SHARDMM_MEMORY_LIMIT alike; parse_growth: the lean policy's cap (1.3, unlimited).
#include <array>
#include <cstdlib>
#include <string>
#include <utility>

#include "shardmm/error.hpp"
#include "shardmm/plan.hpp"

namespace shardmm {
namespace {

constexpr double kKi = 1024.0, kK = 1000.0;

// Bytes per unit, 0 when `unit` is none of the spellings: a letter alone or with "iB" is
// binary (K, k, KiB), a letter with "B" decimal (KB, kB).
double unit_bytes(std::string_view unit) {
  static const std::array<std::pair<std::string_view, double>, 16> units{{
      {"", 1},
      {"B", 1},
      {"K", kKi},
      {"k", kKi},
      {"KiB", kKi},
      {"KB", kK},
      {"kB", kK},
      {"M", kKi * kKi},
      {"MiB", kKi * kKi},
      {"MB", kK * kK},
      {"G", kKi * kKi * kKi},
      {"GiB", kKi * kKi * kKi},
      {"GB", kK * kK * kK},
      {"T", kKi * kKi * kKi * kKi},
      {"TiB", kKi * kKi * kKi * kKi},
      {"TB", kK * kK * kK * kK},
  }};
  for (const auto& [name, bytes] : units)
    if (name == unit) return bytes;
  return 0;
}

}  // namespace

std::int64_t parse_bytes(std::string_view text) {
  const std::string s(text);
  // The number: digits and at most one point (no sign, exponent, hex, "nan" or "inf").
  const std::size_t digits = s.find_first_not_of("0123456789.");
  const std::string number = s.substr(0, digits);
  const bool plain = !number.empty() && number != "." && number.find('.') == number.rfind('.');
  const double v = plain ? std::strtod(number.c_str(), nullptr) : 0;
  const double f = plain ? unit_bytes(std::string_view(s).substr(number.size())) : 0;
  const double bytes = v * f;  // NaN, inf, < 1 byte and > int64 all fail the range test
  // NOLINTNEXTLINE(readability-simplify-boolean-expr): De Morgan's form would let NaN through
  if (f == 0 || !(bytes >= 1 && bytes < 9.2e18))
    throw InvalidArgument("bad byte count '" + s +
                          "' (a number and a unit: K, M, G, T or KiB, MiB, GiB, TiB are powers "
                          "of 1024; KB, MB, GB, TB powers of 1000; e.g. 512M, 4MB, 2GiB)");
  return static_cast<std::int64_t>(bytes);
}

double parse_growth(std::string_view text) {
  if (text == "unlimited") return -1;
  const std::string s(text);
  const std::size_t end = s.find_first_not_of("0123456789.");
  const bool plain =
      end == std::string::npos && !s.empty() && s != "." && s.find('.') == s.rfind('.');
  const double v = plain ? std::strtod(s.c_str(), nullptr) : 0;
  if (v <= 0 || v >= 1e6)
    throw InvalidArgument("bad memory growth '" + s +
                          "' (a multiple of the local operands above 0, e.g. 1.3 or 4, or "
                          "'unlimited')");
  return v;
}

}  // namespace shardmm
