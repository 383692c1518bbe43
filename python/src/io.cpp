// shardmm._native file I/O: the library's collective .npy and raw readers and writers
// (include/shardmm/io.hpp), with the GIL released. Every rank reads or writes its own tile with
// MPI-IO; errors (missing or malformed file, wrong shape or dtype, unwritable output) are agreed
// by the library, the same IoError / DimensionMismatch on every rank.
#include <string>

#include "bindings.hpp"

namespace shardmm::python {
namespace {

py::dict read_header(const std::string& path, const Mesh& mesh) {
  NpyHeader h;
  {
    const py::gil_scoped_release release;
    h = read_npy_header(path, mesh.comm());
  }
  py::dict d;
  d["dtype"] = numpy_dtype(h.dtype);
  d["shape"] = py::make_tuple(h.rows, h.cols);
  d["fortran_order"] = h.fortran_order;
  d["version"] = h.version;
  return d;
}

// Runs io(M) on the matrix's DistMatrix<T> with the GIL released.
template <class MatrixRef, class F>
void with_matrix(MatrixRef& mat, F io) {
  std::visit(
      [&](auto& M) {
        const py::gil_scoped_release release;
        io(M);
      },
      mat.m);
}

void read_npy_into(const std::string& path, Matrix& dst) {
  with_matrix(dst, [&](auto& M) { read_npy(path, M); });
}

void write_npy_from(const std::string& path, const Matrix& src, bool fortran_order) {
  with_matrix(src, [&](const auto& M) { write_npy(path, M, fortran_order); });
}

void read_raw_into(const std::string& path, Matrix& dst, bool fortran_order) {
  with_matrix(dst, [&](auto& M) { read_raw(path, M, fortran_order); });
}

void write_raw_from(const std::string& path, const Matrix& src, bool fortran_order) {
  with_matrix(src, [&](const auto& M) { write_raw(path, M, fortran_order); });
}

}  // namespace

void bind_io(py::module_& m) {
  m.def("read_npy_header", &read_header, py::arg("path"), py::arg("mesh"));
  m.def("read_npy", &read_npy_into, py::arg("path"), py::arg("dst"));
  m.def("write_npy", &write_npy_from, py::arg("path"), py::arg("src"), py::arg("fortran_order"));
  m.def("read_raw", &read_raw_into, py::arg("path"), py::arg("dst"), py::arg("fortran_order"));
  m.def("write_raw", &write_raw_from, py::arg("path"), py::arg("src"), py::arg("fortran_order"));
}

}  // namespace shardmm::python
