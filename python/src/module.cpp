// The native half of the Python package: shardmm._native. The pure-Python package
// (python/shardmm/) wraps it into the documented API (docs/PYTHON.md).
#include "bindings.hpp"
#include "shardmm/version.hpp"

PYBIND11_MODULE(_native, m) {
  namespace sp = shardmm::python;
  m.doc() = "shardmm's C++ library, bound for the shardmm Python package";
  m.attr("version") = shardmm::version_string;
  sp::bind_errors(m);
  sp::bind_mesh(m);
  sp::bind_matrix(m);
  sp::bind_gemm(m);
  sp::bind_io(m);
  m.def("blas_threads", &shardmm::blas_threads, "OpenBLAS threads of this process's local GEMMs.");
  m.def("set_blas_threads", &shardmm::set_blas_threads, sp::py::arg("n"),
        "Sets OpenBLAS's thread count for this process.");
}
