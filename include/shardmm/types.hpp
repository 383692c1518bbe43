// Scalar types, transpose ops and small shared vocabulary.
#pragma once

#include <complex>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "shardmm/half.hpp"

namespace shardmm {

using index_t = std::int64_t;

/// The element types: f32, f64, c64, c128 and the 16-bit storage formats bf16 and f16
/// (shardmm/half.hpp: stored, redistributed and communicated in 16 bits, multiplied in f32).
template <class T>
concept Scalar = std::same_as<T, float> || std::same_as<T, double> ||
    std::same_as<T, std::complex<float>> || std::same_as<T, std::complex<double>> || is_half_v<T>;

/// Expands M(T) for each type the local GEMMs compute in (f32, f64, c64, c128): explicit
/// instantiations of a template over them are `SHARDMM_FOR_EACH_ARITHMETIC(M)` after defining
/// M(T). The 16-bit formats are stored, not computed in (shardmm/half.hpp).
#define SHARDMM_FOR_EACH_ARITHMETIC(M) \
  M(float)                             \
  M(double)                            \
  M(std::complex<float>)               \
  M(std::complex<double>)

template <class T>
inline constexpr bool is_complex_v =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

/// Real type underlying a scalar (float for complex<float>, ...).
template <class T>
struct real_of {
  using type = T;
};
template <class R>
struct real_of<std::complex<R>> {
  using type = R;
};
template <class T>
using real_t = typename real_of<T>::type;

/// op(X): as is, transposed, or conjugate-transposed.
enum class Op { N, T, C };

/// Element type tag for run-time dispatch (files, CLI, C API).
enum class Dtype { F32, F64, C64, C128, F16, BF16 };

std::string to_string(Op op);
Op parse_op(std::string_view text);  ///< "N"/"T"/"C" (case-insensitive)
std::string to_string(Dtype dtype);
Dtype parse_dtype(std::string_view text);  ///< f32 f64 c64 c128 f16 bf16
std::size_t dtype_size(Dtype dtype);

template <Scalar T>
constexpr Dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>) return Dtype::F32;
  else if constexpr (std::is_same_v<T, double>) return Dtype::F64;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return Dtype::C64;
  else if constexpr (std::is_same_v<T, f16>) return Dtype::F16;
  else if constexpr (std::is_same_v<T, bf16>) return Dtype::BF16;
  else return Dtype::C128;
}

}  // namespace shardmm
