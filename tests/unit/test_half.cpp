// bf16 and f16 conversions: round to nearest even against an independent reference (the two
// neighbouring 16-bit values compared in double), every 16-bit pattern round-trips, and the
// edges (ties, overflow, subnormals, NaN, signed zero).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "shardmm/half.hpp"

using namespace shardmm;

namespace {

// All finite values of a format in increasing order are not needed: the neighbours of x are
// found by searching the monotone map from non-negative patterns to values.
template <class H>
std::uint16_t reference_round(float x) {
  const double v = std::fabs(double(x));
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const std::uint16_t inf = H(std::numeric_limits<float>::infinity()).bits;
  // largest pattern whose value is <= v (patterns 0 .. inf are increasing in value)
  std::uint16_t lo = 0, hi = inf;
  while (lo < hi) {
    const auto mid = static_cast<std::uint16_t>((lo + hi + 1) / 2);
    if (double(float(H::from_bits(mid))) <= v) lo = mid;
    else hi = static_cast<std::uint16_t>(mid - 1);
  }
  if (lo == inf) return sign | inf;
  const double below = float(H::from_bits(lo));
  // the value past the largest finite one is where rounding overflows: max + half a spacing
  const double above = lo + 1 == inf ? 2 * below - double(float(H::from_bits(lo - 1)))
                                     : double(float(H::from_bits(lo + 1)));
  const double d_lo = v - below, d_hi = above - v;
  const bool up = d_hi < d_lo || (d_hi == d_lo && (lo & 1) != 0);
  return sign | static_cast<std::uint16_t>(up ? lo + 1 : lo);
}

template <class H>
void check_random_floats() {
  std::mt19937 gen(7);  // NOLINT(cert-msc51-cpp,bugprone-random-generator-seed): reproducible
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int t = 0; t < 200000; ++t) {
    const auto x = std::bit_cast<float>(bits(gen));
    if (std::isnan(x)) continue;
    ASSERT_EQ(H(x).bits, reference_round<H>(x)) << x;
  }
}

template <class H>
void check_round_trip() {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = H::from_bits(static_cast<std::uint16_t>(b));
    const float x = h;
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(float(H(x))));
      continue;
    }
    ASSERT_EQ(H(x).bits, h.bits) << b;
  }
}

}  // namespace

TEST(Half, Bf16RoundsToNearestEven) { check_random_floats<bf16>(); }
TEST(Half, F16RoundsToNearestEven) { check_random_floats<f16>(); }
TEST(Half, EveryPatternRoundTrips) {
  check_round_trip<bf16>();
  check_round_trip<f16>();
}

TEST(Half, Bf16Edges) {
  EXPECT_EQ(float(bf16(1.0f + 0x1p-8f)), 1.0f);                       // tie: to even
  EXPECT_EQ(float(bf16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);         // tie: to even (up)
  EXPECT_EQ(float(bf16(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);  // past the tie
  EXPECT_TRUE(std::isinf(float(bf16(std::numeric_limits<float>::max()))));
  EXPECT_TRUE(std::isnan(float(bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bf16(-0.0f).bits, 0x8000);
  EXPECT_EQ(bf16(3.0).bits, 0x4040);  // from a double through float
}

TEST(Half, F16Edges) {
  EXPECT_EQ(float(f16(65504.0f)), 65504.0f);  // the largest finite value
  EXPECT_EQ(float(f16(65519.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(float(f16(65520.0f))));  // the tie above the largest rounds to inf
  EXPECT_EQ(float(f16(0x1p-24f)), 0x1p-24f);      // the smallest subnormal
  EXPECT_EQ(float(f16(0x1p-25f)), 0.0f);          // tie with 0: to even
  EXPECT_EQ(float(f16(3 * 0x1p-26f)), 0x1p-24f);
  EXPECT_EQ(float(f16(1.0f + 0x1p-11f)), 1.0f);
  EXPECT_EQ(f16(-2.0f).bits, 0xc000);
  EXPECT_TRUE(std::isnan(float(f16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(float(f16(-1.5f) * f16(2.0f)), -3.0f);
}

TEST(Half, UnitRoundoff) {
  EXPECT_EQ(unit_roundoff_v<bf16>, 0x1p-8);
  EXPECT_EQ(unit_roundoff_v<f16>, 0x1p-11);
}
