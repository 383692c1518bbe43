// The native half of the Python package: shardmm._native. The pure-Python package
// (python/shardmm/) wraps it into the documented API (docs/PYTHON.md). This file: the module,
// and shardmm._native.Mesh, a shardmm::Mesh over an MPI communicator handed over from mpi4py as
// its Fortran handle (comm.py2f(), turned back by MPI_Comm_f2c). The mesh duplicates the
// communicator (collective, with the GIL released); the shape is validated before that, from
// arguments every rank passes alike, so a bad shape raises on every rank.
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "shardmm/collective.hpp"
#include "shardmm/plan.hpp"
#include "shardmm/runtime.hpp"
#include "shardmm/version.hpp"

namespace shardmm::python {
namespace {

Mesh make_mesh(std::int64_t fortran_comm, const std::vector<std::string>& names,
               const std::vector<int>& sizes, bool col_major) {
  MeshShape shape(names, sizes,
                  col_major ? MeshShape::Order::ColMajor : MeshShape::Order::RowMajor);
  MPI_Comm comm = MPI_Comm_f2c(static_cast<MPI_Fint>(fortran_comm));
  const py::gil_scoped_release release;
  return {comm, std::move(shape)};
}

// Every rank's bytes, by rank: the package's agreements (python/shardmm/_agree.py), watched
// by SHARDMM_WATCHDOG as library calls.
py::list allgather(const Mesh& mesh, const py::bytes& mine, const std::string& name) {
  std::string text = mine;
  std::vector<std::string> all;
  {
    const py::gil_scoped_release release;
    all = allgather_strings(mesh, text, name.c_str());
  }
  py::list out;
  for (const std::string& s : all) out.append(py::bytes(s));
  return out;
}

py::tuple parse_shape(const std::string& text) {
  const MeshShape shape = MeshShape::parse(text);
  return py::make_tuple(shape.names, shape.sizes);
}

}  // namespace

void bind_mesh(py::module_& m) {
  py::class_<Mesh>(m, "Mesh", "A shardmm::Mesh (use shardmm.Mesh, which wraps it).")
      .def(py::init(&make_mesh), py::arg("fortran_comm"), py::arg("names"), py::arg("sizes"),
           py::arg("col_major") = false)
      .def_property_readonly("names", [](const Mesh& mesh) { return mesh.shape().names; })
      .def_property_readonly("sizes", [](const Mesh& mesh) { return mesh.shape().sizes; })
      .def_property_readonly("coords", &Mesh::coords)
      .def_property_readonly("rank", &Mesh::rank)
      .def_property_readonly("size", &Mesh::size)
      .def("__str__", [](const Mesh& mesh) { return mesh.shape().to_string(); });
  m.def("parse_mesh_shape", &parse_shape, py::arg("text"),
        "'x=2,y=3' or '2x3' -> (names, sizes); raises InvalidArgument.");
  m.def("allgather", &allgather, py::arg("mesh"), py::arg("mine"), py::arg("name"),
        "Every rank's bytes (a list by rank); collective, watched like a library call.");
  m.def("factor_near_square", &factor_near_square, py::arg("P"), py::arg("ndims"),
        "P as ndims near-equal factors, largest first.");
}

}  // namespace shardmm::python

PYBIND11_MODULE(_native, m) {
  namespace sp = shardmm::python;
  m.doc() = "shardmm's C++ library, bound for the shardmm Python package";
  m.attr("version") = shardmm::version_string;
  sp::bind_errors(m);
  sp::bind_mesh(m);
  sp::bind_matrix(m);
  sp::bind_gemm(m);
  sp::bind_io(m);
  sp::bind_files(m);
  sp::bind_batched(m);
  m.def("blas_threads", &shardmm::blas_threads,
        "The BLAS's threads for this process's local GEMMs.");
  m.def("set_blas_threads", &shardmm::set_blas_threads, sp::py::arg("n"),
        "Sets the BLAS's thread count for this process (OpenBLAS, BLIS, MKL).");
  m.def("blas_vendor", &shardmm::blas_vendor, "The BLAS the library runs on, by its own account.");
  m.def(
      "parse_bytes", [](const std::string& text) { return shardmm::parse_bytes(text); },
      sp::py::arg("text"), "A byte count as --memory-limit reads one (512M, 4MB, 4MiB).");
}
