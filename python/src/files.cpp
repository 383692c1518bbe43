// shardmm._native.multiply_files: the product of .npy files (shardmm::gemm_files,
// include/shardmm/ooc.hpp) over a mesh's communicator, with the GIL released: in core when the
// operands fit the budget, else streamed in panels. Its checks (files, shapes, dtypes, budget)
// are the library's, agreed on every rank before any data moves.
#include <complex>
#include <string>

#include "bindings.hpp"
#include "shardmm/ooc.hpp"

namespace shardmm::python {
namespace {

py::dict plan_dict(const OocPlan& p) {
  py::dict d;
  d["out_of_core"] = p.out_of_core;
  d["budget"] = p.budget;
  d["min_budget"] = p.min_budget;
  d["in_core_bytes"] = p.in_core_bytes;
  d["shape"] = py::make_tuple(p.m, p.n, p.k);
  d["ranks"] = p.ranks;
  d["block"] = py::make_tuple(p.bm, p.bn, p.kb);
  d["blocks"] = p.blocks;
  d["passes"] = py::make_tuple(p.passes_a, p.passes_b);
  d["bytes_read"] = p.bytes_read;
  d["bytes_written"] = p.bytes_written;
  d["runs_read"] = p.runs_read;
  d["io"] = shardmm::to_string(p.io);
  d["text"] = p.to_string();
  d["predicted_seconds"] = p.predicted_seconds;
  return d;
}

py::dict report_dict(const FileGemmReport& r) {
  py::dict d;
  d["plan"] = plan_dict(r.plan);
  d["seconds"] = r.seconds;
  d["io_wait_seconds"] = r.io_wait_seconds;
  d["open_seconds"] = r.open_seconds;
  d["read_wait_seconds"] = r.read_wait_seconds;
  d["write_wait_seconds"] = r.write_wait_seconds;
  d["agree_seconds"] = r.agree_seconds;
  d["sync_seconds"] = r.sync_seconds;
  d["rename_seconds"] = r.rename_seconds;
  d["other_seconds"] = r.other_seconds;
  d["compute_seconds"] = r.compute_seconds;
  d["bytes_read"] = r.bytes_read;
  d["bytes_written"] = r.bytes_written;
  d["peak_rss"] = r.peak_rss;
  return d;
}

// out <- alpha op(a) op(b) + beta c0 (c0: "" for none) on the mesh's ranks.
py::dict multiply_files(const Mesh& mesh, const std::string& a, const std::string& b,
                        const std::string& out, const std::string& c0, const std::string& transa,
                        const std::string& transb, std::complex<double> alpha,
                        std::complex<double> beta, bool fortran_order, const std::string& io,
                        bool out_of_core, const py::dict& options) {
  const Op opA = parse_op(transa), opB = parse_op(transb);
  const Options o = to_options(options);
  FileGemmSettings s;
  s.io = parse_io_method(io);
  s.force_out_of_core = out_of_core;
  MatrixFile target = MatrixFile::npy(out);
  target.fortran_order = fortran_order;
  const MatrixFile c = c0.empty() ? MatrixFile{} : MatrixFile::npy(c0);
  if (!mesh.active()) return report_dict({});
  FileGemmReport report;
  {
    const py::gil_scoped_release release;
    report = gemm_files(mesh.comm(), opA, MatrixFile::npy(a), opB, MatrixFile::npy(b), alpha, beta,
                        c, target, o, s);
  }
  return report_dict(report);
}

}  // namespace

void bind_files(py::module_& m) {
  m.def("multiply_files", &multiply_files, py::arg("mesh"), py::arg("a"), py::arg("b"),
        py::arg("out"), py::arg("c0"), py::arg("transa"), py::arg("transb"), py::arg("alpha"),
        py::arg("beta"), py::arg("fortran_order"), py::arg("io"), py::arg("out_of_core"),
        py::arg("options"));
}

}  // namespace shardmm::python
