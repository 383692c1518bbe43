// Scalar types, transpose ops and small shared vocabulary.
#pragma once

#include <complex>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace shardmm {

using index_t = std::int64_t;

template <class T>
concept Scalar = std::same_as<T, float> || std::same_as<T, double> ||
    std::same_as<T, std::complex<float>> || std::same_as<T, std::complex<double>>;

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
enum class Dtype { F32, F64, C64, C128 };

std::string to_string(Op op);
Op parse_op(std::string_view text);  ///< "N"/"T"/"C" (case-insensitive)
std::string to_string(Dtype dtype);
Dtype parse_dtype(std::string_view text);  ///< f32 f64 c64 c128
std::size_t dtype_size(Dtype dtype);

template <Scalar T>
constexpr Dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>) return Dtype::F32;
  else if constexpr (std::is_same_v<T, double>) return Dtype::F64;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return Dtype::C64;
  else return Dtype::C128;
}

}  // namespace shardmm
