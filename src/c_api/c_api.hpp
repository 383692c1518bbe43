// Internals of the C API: the handle structs and the boundary that turns exceptions into
// status codes (no exception crosses include/shardmm/c/shardmm.h).
#pragma once

#include <complex>
#include <string>
#include <variant>

#include "shardmm/c/shardmm.h"
#include "shardmm/dist_matrix.hpp"
#include "shardmm/error.hpp"
#include "shardmm/gemm.hpp"

struct shardmm_mesh_s {
  shardmm::Mesh mesh;
};

struct shardmm_matrix_s {
  std::variant<shardmm::DistMatrix<float>, shardmm::DistMatrix<double>,
               shardmm::DistMatrix<std::complex<float>>, shardmm::DistMatrix<std::complex<double>>>
      matrix;
};

namespace shardmm::c_api {

/// An output string did not fit (SHARDMM_ERROR_BUFFER_TOO_SMALL).
class BufferTooSmall : public Error {
 public:
  using Error::Error;
};

/// This thread's last error message.
std::string& last_error();

/// The status of the exception being handled; its message goes to last_error().
int status_of_current_exception() noexcept;

/// Runs f and returns SHARDMM_OK, or the status of the exception it threw (message kept in
/// last_error()). Clears last_error() first.
template <class F>
int guarded(F&& f) noexcept {
  try {
    last_error().clear();
    f();
    return SHARDMM_OK;
  } catch (...) {
    return status_of_current_exception();
  }
}

/// 'N', 'T' or 'C' (either case); InvalidArgument naming `which` otherwise.
Op parse_trans(char t, const char* which);
/// gemm's Options from the C struct (null: the defaults).
Options to_options(const shardmm_options* o);
/// Copies text into out (size bytes, always terminated, truncated when too long).
void copy_text(const std::string& text, char* out, std::size_t size);
/// The C report of a gemm (out may be null).
void fill_report(const GemmReport& r, shardmm_report* out);

/// Throws InvalidArgument naming `what` when p is null.
template <class P>
P* require(P* p, const char* what) {
  if (p == nullptr) throw InvalidArgument(std::string(what) + " is null");
  return p;
}

}  // namespace shardmm::c_api
