// Shared by the files of the Python module shardmm._native (python/src/*.cpp): the
// type-erased matrix the module hands to Python, dtype conversions, and the bind_* functions
// module.cpp calls. Public shardmm API only (include/shardmm/).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <complex>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>

#include "shardmm/shardmm.hpp"

namespace shardmm::python {

namespace py = pybind11;

/// A DistMatrix of any of the four element types. Python holds it by shared_ptr; a NumPy view
/// of the local tile keeps the Python object, hence the storage, alive (its base).
using AnyMatrix = std::variant<DistMatrix<float>, DistMatrix<double>,
                               DistMatrix<std::complex<float>>, DistMatrix<std::complex<double>>>;

struct Matrix {
  AnyMatrix m;
};
using MatrixPtr = std::shared_ptr<Matrix>;

/// The element type of a DistMatrix type.
template <class M>
struct element;
template <Scalar T>
struct element<DistMatrix<T>> {
  using type = T;
};
template <class M>
using element_t = typename element<std::decay_t<M>>::type;

/// The element type of a matrix.
Dtype matrix_dtype(const AnyMatrix& m);
/// NumPy's dtype for an element type.
py::dtype numpy_dtype(Dtype dtype);
/// An element type from anything np.dtype() accepts ("float64", np.float32, ...); throws
/// InvalidArgument naming the four supported ones otherwise.
Dtype to_dtype(const py::handle& dtype);

/// A new zero-filled matrix of `dtype` with `layout` on `mesh`.
MatrixPtr make_matrix(const Mesh& mesh, Dtype dtype, const Layout& layout);

/// A Python scalar (int, float, complex) as T; throws InvalidArgument when a non-zero
/// imaginary part would be dropped.
template <Scalar T>
T to_scalar(const std::complex<double>& value, const char* what) {
  if constexpr (is_complex_v<T>) {
    return T(static_cast<real_t<T>>(value.real()), static_cast<real_t<T>>(value.imag()));
  } else {
    if (value.imag() != 0)
      throw InvalidArgument(std::string(what) + " is complex but the matrices are real");
    return static_cast<T>(value.real());
  }
}

/// gemm's keyword options (a dict: algorithm, memory_limit, panel, ...) as Options; throws
/// InvalidArgument naming a bad key or value.
Options to_options(const py::dict& options);

/// "float32", "float64", "complex64", "complex128".
std::string numpy_name(Dtype dtype);

void bind_errors(py::module_& m);
void bind_mesh(py::module_& m);
void bind_matrix(py::module_& m);
void bind_gemm(py::module_& m);
void bind_io(py::module_& m);
void bind_files(py::module_& m);
void bind_batched(py::module_& m);

}  // namespace shardmm::python
