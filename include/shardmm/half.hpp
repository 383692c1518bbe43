// 16-bit floating-point storage types: bf16 (bfloat16: the top 16 bits of an IEEE binary32,
// 8-bit exponent, 7-bit stored mantissa, unit roundoff 2^-8) and f16 (IEEE binary16: 5-bit
// exponent, 10-bit mantissa, unit roundoff 2^-11, largest finite value 65504).
//
// They are storage formats: a value is held as its 16 bits, converted from float by rounding
// to nearest, ties to even (overflow to +-inf, NaN stays NaN) and widened to float exactly.
// Arithmetic on them goes through float and rounds the result once; shardmm's products never
// accumulate in 16 bits (gemm widens tiles to f32, docs/ALGORITHMS.md).
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace shardmm {

namespace half_bits {

/// float -> bfloat16 bits, round to nearest even; NaN stays a (quiet) NaN.
constexpr std::uint16_t from_float_bf16(float value) {
  const auto u = std::bit_cast<std::uint32_t>(value);
  if ((u & 0x7fffffffU) > 0x7f800000U) return static_cast<std::uint16_t>((u >> 16) | 0x0040U);
  const std::uint32_t rounded = u + 0x7fffU + ((u >> 16) & 1U);
  return static_cast<std::uint16_t>(rounded >> 16);
}

constexpr float to_float_bf16(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

/// float -> IEEE half bits, round to nearest even, with subnormals; overflow gives +-inf.
/// (The subnormal branch lets the float addition round: the default rounding mode is RNE.)
constexpr std::uint16_t from_float_f16(float value) {
  constexpr std::uint32_t inf32 = 255U << 23, max16 = (127U + 16U) << 23;
  constexpr std::uint32_t denorm_magic = ((127U - 15U) + (23U - 10U) + 1U) << 23;
  std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = f & 0x80000000U;
  f ^= sign;
  std::uint32_t out = 0;
  if (f >= max16) {  // 65536 and above (and inf, NaN)
    out = f > inf32 ? 0x7e00U : 0x7c00U;
  } else if (f < (113U << 23)) {  // below 2^-14: a subnormal half (or zero)
    const float sum = std::bit_cast<float>(f) + std::bit_cast<float>(denorm_magic);
    out = std::bit_cast<std::uint32_t>(sum) - denorm_magic;
  } else {  // a normal half: rebias the exponent, round the 13 dropped bits to even
    const std::uint32_t mant_odd = (f >> 13) & 1U;
    f += ((15U - 127U) << 23) + 0xfffU + mant_odd;  // unsigned wrap-around is the rebias
    out = f >> 13;
  }
  return static_cast<std::uint16_t>(out | (sign >> 16));
}

constexpr float to_float_f16(std::uint16_t bits) {
  constexpr std::uint32_t shifted_exp = 0x7c00U << 13;
  std::uint32_t out = (static_cast<std::uint32_t>(bits) & 0x7fffU) << 13;
  const std::uint32_t exp = shifted_exp & out;
  out += (127U - 15U) << 23;
  if (exp == shifted_exp) {  // inf or NaN
    out += (128U - 16U) << 23;
  } else if (exp == 0) {  // zero or subnormal: renormalise through a float subtraction
    out += 1U << 23;
    out =
        std::bit_cast<std::uint32_t>(std::bit_cast<float>(out) - std::bit_cast<float>(113U << 23));
  }
  return std::bit_cast<float>(out | ((static_cast<std::uint32_t>(bits) & 0x8000U) << 16));
}

}  // namespace half_bits

/// A 16-bit format named by `Tag`, with its conversions (bf16 and f16 below).
template <class Tag>
struct Half16 {
  std::uint16_t bits = 0;

  constexpr Half16() = default;
  /// Rounds to nearest even (through float for a double or an integer).
  template <class U>
  requires std::is_arithmetic_v<U>
  constexpr explicit Half16(U value) : bits(Tag::from_float(static_cast<float>(value))) {}
  /// The value's exact float.
  constexpr operator float() const {
    return Tag::to_float(bits);
  }  // NOLINT(google-explicit-constructor)
  static constexpr Half16 from_bits(std::uint16_t b) {
    Half16 h;
    h.bits = b;
    return h;
  }

  friend constexpr Half16 operator+(Half16 a, Half16 b) { return Half16(float(a) + float(b)); }
  friend constexpr Half16 operator-(Half16 a, Half16 b) { return Half16(float(a) - float(b)); }
  friend constexpr Half16 operator*(Half16 a, Half16 b) { return Half16(float(a) * float(b)); }
  friend constexpr Half16 operator/(Half16 a, Half16 b) { return Half16(float(a) / float(b)); }
  friend constexpr Half16 operator-(Half16 a) { return from_bits(a.bits ^ 0x8000U); }
  friend constexpr bool operator==(Half16 a, Half16 b) { return float(a) == float(b); }
  constexpr Half16& operator+=(Half16 b) { return *this = *this + b; }
  constexpr Half16& operator-=(Half16 b) { return *this = *this - b; }
  constexpr Half16& operator*=(Half16 b) { return *this = *this * b; }
};

struct Bf16Tag {
  static constexpr std::uint16_t from_float(float v) { return half_bits::from_float_bf16(v); }
  static constexpr float to_float(std::uint16_t b) { return half_bits::to_float_bf16(b); }
};
struct F16Tag {
  static constexpr std::uint16_t from_float(float v) { return half_bits::from_float_f16(v); }
  static constexpr float to_float(std::uint16_t b) { return half_bits::to_float_f16(b); }
};

using bf16 = Half16<Bf16Tag>;  ///< bfloat16
using f16 = Half16<F16Tag>;    ///< IEEE binary16 (NumPy's float16, .npy '<f2')

static_assert(sizeof(bf16) == 2 && sizeof(f16) == 2 && std::is_trivially_copyable_v<bf16>);

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, bf16> || std::is_same_v<T, f16>;

/// Unit roundoff of a 16-bit format (half the spacing of values in [1, 2)).
template <class T>
requires is_half_v<T>
inline constexpr double unit_roundoff_v = std::is_same_v<T, bf16> ? 0x1p-8 : 0x1p-11;

}  // namespace shardmm
