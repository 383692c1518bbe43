// Internals shared by the C API's calls (c_matrix.cpp: gemm and plan; c_blas3.cpp: the PBLAS
// level-3 family): the element type chosen at run time, flag characters, and the agreement
// of the caller's arguments over the matrices' mesh before any collective work.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "c_api/c_api.hpp"
#include "comm/agree.hpp"
#include "trace/call.hpp"

namespace shardmm::c_api {

/// Calls f.template operator()<T>() for the scalar type with variant index `dtype`.
template <class F>
decltype(auto) with_type(int dtype, F&& f) {
  switch (dtype) {
    case SHARDMM_F32: return f.template operator()<float>();
    case SHARDMM_F64: return f.template operator()<double>();
    case SHARDMM_C64: return f.template operator()<std::complex<float>>();
    case SHARDMM_C128: return f.template operator()<std::complex<double>>();
    case SHARDMM_BF16:
    case SHARDMM_F16:
      throw NotSupported("16-bit dtypes are for batched matrices (shardmm_batched_create; a "
                         "batch of 1 holds one matrix)");
    default: throw InvalidArgument("unknown dtype " + std::to_string(dtype));
  }
}

// parse_trans: c_api.hpp.

/// A matrix argument and its name in messages ("A", "B", "C").
struct NamedMatrix {
  const char* name;
  shardmm_matrix matrix;
};

/// The dtype all `matrices` share (each non-null); else InvalidArgument naming `routine`.
int common_dtype(const char* routine, std::initializer_list<NamedMatrix> matrices);

/// The matrix handle's DistMatrix<T> (its dtype checked by common_dtype before).
template <Scalar T>
DistMatrix<T>& typed(shardmm_matrix X) {
  return std::get<DistMatrix<T>>(X->matrix);
}

/// The caller's arguments are checked on each rank by `check`, then agreed over the matrices'
/// mesh: a bad argument on one rank only (a null pointer, a bad flag character) fails the call
/// on every rank instead of leaving the others waiting in the collectives. A rank whose handles
/// are all null has no mesh to agree over and fails alone. `routine` ("gemm") names the call
/// (shardmm_gemm) for the watchdog and the agreement's phase.
template <class F>
void agreed_arguments(const char* routine, std::initializer_list<NamedMatrix> matrices, F&& check) {
  MPI_Comm comm = MPI_COMM_NULL;
  for (const NamedMatrix& X : matrices)
    if (X.matrix != nullptr && comm == MPI_COMM_NULL)
      comm = std::visit(
          [](const auto& M) { return M.mesh().active() ? M.mesh().comm() : MPI_COMM_NULL; },
          X.matrix->matrix);
  if (comm == MPI_COMM_NULL) return check();
  const std::string call_name = std::string("shardmm_") + routine;
  trace::Call call(comm, call_name.c_str());  // watched: a rank that never calls is named
  comm::agreed(comm, std::string(routine) + " arguments", std::forward<F>(check));
  call.done();
}

/// A scalar argument and its name in messages ("alpha").
struct NamedScalar {
  const char* name;
  const void* value;
};

/// agreed_arguments for the calls without options: parse_flags() (throws on a bad flag), then
/// every scalar non-null, then the common dtype of `matrices`, which it returns.
template <class F>
int agreed_dtype(const char* routine, std::initializer_list<NamedMatrix> matrices,
                 std::initializer_list<NamedScalar> scalars, F&& parse_flags) {
  int dtype = 0;
  agreed_arguments(routine, matrices, [&] {
    parse_flags();
    for (const NamedScalar& s : scalars) require(s.value, s.name);
    dtype = common_dtype(routine, matrices);
  });
  return dtype;
}

}  // namespace shardmm::c_api
