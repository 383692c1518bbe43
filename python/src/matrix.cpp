// shardmm._native.Matrix: a DistMatrix of any element type. `local` is a NumPy view of the
// rank's tile (no copy, Fortran order, strides from the leading dimension) whose base is the
// Python object of the matrix, so the storage lives as long as any view of it. gather and
// redistribute communicate with the GIL released.
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"

namespace shardmm::python {

Dtype matrix_dtype(const AnyMatrix& m) {
  return std::visit([](const auto& M) { return shardmm::dtype_of<element_t<decltype(M)>>(); }, m);
}

py::dtype numpy_dtype(Dtype dtype) {
  switch (dtype) {
    case Dtype::F32: return py::dtype::of<float>();
    case Dtype::F64: return py::dtype::of<double>();
    case Dtype::C64: return py::dtype::of<std::complex<float>>();
    case Dtype::C128: break;
    case Dtype::F16:
    case Dtype::BF16: throw NotSupported("16-bit matrices are not in the Python package yet");
  }
  return py::dtype::of<std::complex<double>>();
}

std::string numpy_name(Dtype dtype) { return numpy_dtype(dtype).attr("name").cast<std::string>(); }

Dtype to_dtype(const py::handle& dtype) {
  const py::dtype dt = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
  for (Dtype d : {Dtype::F32, Dtype::F64, Dtype::C64, Dtype::C128})
    if (dt.kind() == numpy_dtype(d).kind() && dt.itemsize() == numpy_dtype(d).itemsize()) return d;
  throw InvalidArgument("dtype " + dt.attr("name").cast<std::string>() +
                        " is not supported (float32, float64, complex64, complex128)");
}

MatrixPtr make_matrix(const Mesh& mesh, Dtype dtype, const Layout& layout) {
  const py::gil_scoped_release release;  // the tile is allocated and zero-filled
  switch (dtype) {
    case Dtype::F32: return std::make_shared<Matrix>(Matrix{DistMatrix<float>(mesh, layout)});
    case Dtype::F64: return std::make_shared<Matrix>(Matrix{DistMatrix<double>(mesh, layout)});
    case Dtype::C64:
      return std::make_shared<Matrix>(Matrix{DistMatrix<std::complex<float>>(mesh, layout)});
    case Dtype::C128: break;
    case Dtype::F16:
    case Dtype::BF16: throw NotSupported("16-bit matrices are not in the Python package yet");
  }
  return std::make_shared<Matrix>(Matrix{DistMatrix<std::complex<double>>(mesh, layout)});
}

namespace {

MatrixPtr empty(const Mesh& mesh, index_t m, index_t n, const py::handle& dtype,
                const std::string& spec) {
  return make_matrix(mesh, to_dtype(dtype), Layout(mesh.shape(), m, n, spec));
}

// The local tile, viewed: writes through the array change the matrix.
py::array local_view(const py::object& self) {
  auto& mat = self.cast<Matrix&>();
  return std::visit(
      [&](auto& M) -> py::array {
        using T = element_t<decltype(M)>;
        const auto item = static_cast<py::ssize_t>(sizeof(T));
        const std::vector<py::ssize_t> shape{M.local_rows(), M.local_cols()};
        const std::vector<py::ssize_t> strides{item, item * M.ld()};
        return py::array_t<T>(shape, strides, M.data(), self);
      },
      mat.m);
}

// Global index of each local row (dim 0) or column (dim 1) of this rank.
py::array_t<std::int64_t> global_indices(const Matrix& mat, int dim) {
  return std::visit(
      [&](const auto& M) {
        const index_t count = dim == 0 ? M.local_rows() : M.local_cols();
        py::array_t<std::int64_t> out(count);
        auto view = out.mutable_unchecked<1>();
        for (index_t i = 0; i < count; ++i) view(i) = dim == 0 ? M.global_row(i) : M.global_col(i);
        return out;
      },
      mat.m);
}

// False on the cells of an unreduced layout off coordinate 0 of its unreduced axes: those hold
// zeros when the matrix is set from global values (as DistMatrix::fill does).
bool holds_values(const Matrix& mat) {
  return std::visit(
      [](const auto& M) {
        for (int axis : M.layout().unreduced_axes())
          if (M.mesh().coords()[axis] != 0) return false;
        return true;
      },
      mat.m);
}

// The whole matrix (Fortran order) on `root`, None elsewhere.
py::object gather(const Matrix& mat, int root) {
  return std::visit(
      [&](const auto& M) -> py::object {
        using T = element_t<decltype(M)>;
        if (root < 0 || root >= M.mesh().size())
          throw InvalidArgument("gather: root " + std::to_string(root) + " is not a rank of the " +
                                std::to_string(M.mesh().size()) + "-rank mesh");
        auto global = std::make_unique<std::vector<T>>();
        {
          const py::gil_scoped_release release;
          *global = M.gather(root);
        }
        if (M.mesh().rank() != root) return py::none();
        const auto item = static_cast<py::ssize_t>(sizeof(T));
        T* data = global->data();
        const py::capsule owner(global.release(),
                                [](void* p) { delete static_cast<std::vector<T>*>(p); });
        return py::array_t<T>({M.rows(), M.cols()}, {item, item * M.rows()}, data, owner);
      },
      mat.m);
}

MatrixPtr redistributed(const Matrix& mat, const std::string& spec) {
  return std::visit(
      [&](const auto& M) {
        const Layout layout(M.mesh().shape(), M.rows(), M.cols(), spec);
        const py::gil_scoped_release release;
        return std::make_shared<Matrix>(Matrix{shardmm::redistribute(M, layout)});
      },
      mat.m);
}

// dst <- alpha src + beta dst (any layouts, same element type).
void redistribute_into(const Matrix& src, Matrix& dst, std::complex<double> alpha,
                       std::complex<double> beta) {
  std::visit(
      [&](const auto& S) {
        using T = element_t<decltype(S)>;
        auto* D = std::get_if<DistMatrix<T>>(&dst.m);
        if (D == nullptr)
          throw InvalidArgument("redistribute: source and destination dtypes differ (" +
                                numpy_name(shardmm::dtype_of<T>()) + ", " +
                                numpy_name(matrix_dtype(dst.m)) + ")");
        const T a = to_scalar<T>(alpha, "alpha"), b = to_scalar<T>(beta, "beta");
        const py::gil_scoped_release release;
        shardmm::redistribute(S, *D, a, b);
      },
      src.m);
}

template <class F>
auto on(const Matrix& mat, F f) {
  return std::visit([&](const auto& M) { return f(M); }, mat.m);
}

}  // namespace

void bind_matrix(py::module_& m) {
  py::class_<Matrix, MatrixPtr>(m, "Matrix", "A shardmm::DistMatrix (use shardmm.DistMatrix).")
      .def_static("empty", &empty, py::arg("mesh"), py::arg("m"), py::arg("n"), py::arg("dtype"),
                  py::arg("layout"))
      .def_property_readonly("local", &local_view)
      .def_property_readonly(
          "rows", [](const Matrix& a) { return on(a, [](auto& M) { return M.rows(); }); })
      .def_property_readonly(
          "cols", [](const Matrix& a) { return on(a, [](auto& M) { return M.cols(); }); })
      .def_property_readonly("dtype",
                             [](const Matrix& a) { return numpy_dtype(matrix_dtype(a.m)); })
      .def_property_readonly("spec",
                             [](const Matrix& a) {
                               return on(a, [](auto& M) { return M.layout().spec().to_string(); });
                             })
      .def_property_readonly(
          "description",
          [](const Matrix& a) { return on(a, [](auto& M) { return M.layout().to_string(); }); })
      .def_property_readonly(
          "mesh", [](const Matrix& a) { return on(a, [](auto& M) { return M.mesh(); }); })
      .def_property_readonly("holds_values", &holds_values)
      .def("global_rows", [](const Matrix& a) { return global_indices(a, 0); })
      .def("global_cols", [](const Matrix& a) { return global_indices(a, 1); })
      .def("gather", &gather, py::arg("root"))
      .def("redistribute", &redistributed, py::arg("layout"))
      .def("redistribute_into", &redistribute_into, py::arg("dst"), py::arg("alpha"),
           py::arg("beta"));
}

}  // namespace shardmm::python
