// shardmm._native.matmul_batched: the batched products behind shardmm.matmul on 3-D arrays
// and shardmm.einsum. Every rank passes the same global arrays (batch x rows x cols, or rows x
// cols for an operand every batch element shares); each rank keeps its own tiles of the
// layouts Python chose, gemm_batched multiplies with the GIL released, and the product comes
// back (batch x m x n, C order) on rank `root` only (None elsewhere).
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace shardmm::python {
namespace {

Op to_op(const std::string& t) {
  if (t == "N" || t == "n") return Op::N;
  if (t == "T" || t == "t") return Op::T;
  if (t == "C" || t == "c") return Op::C;
  throw InvalidArgument("trans must be 'N', 'T' or 'C', got '" + t + "'");
}

// The array's shape as (batch, rows, cols); batch 0 marks a shared 2-D operand.
struct Global {
  index_t batch = 0, rows = 0, cols = 0;
  const void* data = nullptr;
};

Global global_of(const py::array& a, const char* name) {
  if (a.ndim() != 2 && a.ndim() != 3)
    throw InvalidArgument(std::string("matmul_batched: ") + name + " must be 2-D or 3-D");
  if (!(a.flags() & py::array::c_style))
    throw InvalidArgument(std::string("matmul_batched: ") + name + " must be C-contiguous");
  const int d = static_cast<int>(a.ndim());
  return {d == 3 ? a.shape(0) : 0, a.shape(d - 2), a.shape(d - 1), a.data()};
}

// Element (b, i, j) of a C-order global array of T.
template <class T>
T element(const Global& g, index_t b, index_t i, index_t j) {
  T v;
  std::memcpy(&v, static_cast<const T*>(g.data) + (b * g.rows + i) * g.cols + j, sizeof v);
  return v;
}

template <Scalar T>
BatchedMatrix<T> batched_from(const Mesh& mesh, const Global& g, index_t batch,
                              const std::string& spec) {
  BatchedMatrix<T> X(mesh, batch, g.rows, g.cols, spec);
  if (g.batch > 0) X.fill([&](index_t b, index_t i, index_t j) { return element<T>(g, b, i, j); });
  return X;
}

template <Scalar T>
DistMatrix<T> shared_from(const Mesh& mesh, const Global& g, const std::string& spec) {
  DistMatrix<T> X(mesh, Layout(mesh.shape(), g.rows, g.cols, spec));
  X.fill([&](index_t i, index_t j) { return element<T>(g, 0, i, j); });
  return X;
}

template <Scalar T>
py::object run_matmul_batched(const Mesh& mesh, const Global& a, const Global& b, Op ta, Op tb,
                              const std::vector<std::string>& specs, const Options& o,
                              BatchMerge merge, int root, const py::dtype& dtype) {
  using S = std::conditional_t<is_half_v<T>, float, T>;
  const index_t batch = a.batch > 0 ? a.batch : b.batch;
  const index_t m = ta == Op::N ? a.rows : a.cols, n = tb == Op::N ? b.cols : b.rows;
  std::vector<T> C_global;
  {
    const py::gil_scoped_release release;
    BatchedMatrix<T> C(mesh, batch, m, n, specs[2]);
    if (a.batch > 0 && b.batch > 0)
      (void)gemm_batched(ta, tb, S(1), batched_from<T>(mesh, a, batch, specs[0]),
                         batched_from<T>(mesh, b, batch, specs[1]), S(0), C, o, merge);
    else if (b.batch == 0)
      (void)gemm_batched(ta, tb, S(1), batched_from<T>(mesh, a, batch, specs[0]),
                         shared_from<T>(mesh, b, specs[1]), S(0), C, o, merge);
    else
      (void)gemm_batched(ta, tb, S(1), shared_from<T>(mesh, a, specs[0]),
                         batched_from<T>(mesh, b, batch, specs[1]), S(0), C, o, merge);
    C_global = C.gather(root);
  }
  if (mesh.rank() != root) return py::none();
  // gather gives each matrix column-major: transpose into C order (batch, m, n)
  py::array out(dtype, std::vector<py::ssize_t>{batch, m, n});
  auto* dst = static_cast<T*>(out.mutable_data());
  for (index_t p = 0; p < batch; ++p)
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) dst[(p * m + i) * n + j] = C_global[p * m * n + i + j * m];
  return out;
}

py::object matmul_batched(const Mesh& mesh, const py::array& a, const py::array& b,
                          const std::string& transa, const std::string& transb,
                          const std::vector<std::string>& specs, const py::dict& options,
                          const std::string& merge, int root, bool bf16_bits) {
  const Global ga = global_of(a, "a"), gb = global_of(b, "b");
  if (ga.batch == 0 && gb.batch == 0)
    throw InvalidArgument("matmul_batched: at least one operand must be 3-D");
  if (specs.size() != 3) throw InvalidArgument("matmul_batched: three layouts (A, B, C)");
  if (!a.dtype().is(b.dtype()))
    throw InvalidArgument("matmul_batched: a and b must have one dtype");
  const Op ta = to_op(transa), tb = to_op(transb);
  const Options o = to_options(options);
  const BatchMerge mm = parse_batch_merge(merge);
  const py::dtype dt = a.dtype();
  if (bf16_bits != (dt.kind() == 'u' && dt.itemsize() == 2))
    throw InvalidArgument(
        std::string("matmul_batched: dtype=\"bf16\" takes uint16 arrays of bf16 ") +
        "bit patterns, and uint16 arrays need dtype=\"bf16\" (got " +
        py::str(static_cast<const py::handle&>(dt)).cast<std::string>() + ")");
  if (bf16_bits) return run_matmul_batched<bf16>(mesh, ga, gb, ta, tb, specs, o, mm, root, dt);
  if (dt.kind() == 'f' && dt.itemsize() == 2)
    return run_matmul_batched<f16>(mesh, ga, gb, ta, tb, specs, o, mm, root, dt);
  switch (to_dtype(dt)) {
    case Dtype::F32: return run_matmul_batched<float>(mesh, ga, gb, ta, tb, specs, o, mm, root, dt);
    case Dtype::F64:
      return run_matmul_batched<double>(mesh, ga, gb, ta, tb, specs, o, mm, root, dt);
    case Dtype::C64:
      return run_matmul_batched<std::complex<float>>(mesh, ga, gb, ta, tb, specs, o, mm, root, dt);
    default:
      return run_matmul_batched<std::complex<double>>(mesh, ga, gb, ta, tb, specs, o, mm, root, dt);
  }
}

}  // namespace

void bind_batched(py::module_& m) {
  m.def("matmul_batched", &matmul_batched, py::arg("mesh"), py::arg("a"), py::arg("b"),
        py::arg("transa"), py::arg("transb"), py::arg("layouts"), py::arg("options"),
        py::arg("merge"), py::arg("root"), py::arg("bf16") = false,
        "op(a[p]) op(b[p]) for global arrays every rank holds alike (3-D, or 2-D when shared); "
        "float16, float32, float64, complex64, complex128, or with bf16=True uint16 arrays of "
        "bf16 bit patterns (the product too). The product on rank `root`.");
}

}  // namespace shardmm::python
