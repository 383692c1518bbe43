// shardmm._native.gemm, dry_run, plan, output_layout and time_gemm, and the conversions they use:
// gemm's keyword options (a dict) -> shardmm::Options, GemmReport and plan candidates -> dicts
// (every bad option raises InvalidArgument from its value alone). gemm runs
// shardmm::gemm with the GIL released; its checks (shapes, layouts, meshes) are the library's,
// agreed on every rank. The checks made here (one dtype for A, B and C; C is neither A nor B;
// scalars that fit the dtype; options) look only at arguments every rank passes alike.
#include <pybind11/stl.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "bindings.hpp"

namespace shardmm::python {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <class V>
V option_value(const py::handle& value, const std::string& key, const char* kind) {
  try {
    return value.cast<V>();
  } catch (const py::cast_error&) {
    throw InvalidArgument("gemm: option " + key + " must be " + kind + ", not " +
                          std::string(py::str(py::type::of(value).attr("__name__"))));
  }
}

Stationary parse_stationary(const std::string& text) {
  const std::string s = lower(text);
  if (s == "auto") return Stationary::Auto;
  if (s == "a") return Stationary::A;
  if (s == "b") return Stationary::B;
  if (s == "c") return Stationary::C;
  throw InvalidArgument("gemm: unknown stationary '" + text + "' (auto, a, b, c)");
}

RingForm parse_ring_form(const std::string& text) {
  const std::string s = lower(text);
  if (s == "auto") return RingForm::Auto;
  if (s == "allgather_a" || s == "aga") return RingForm::AllGatherA;
  if (s == "allgather_b" || s == "agb") return RingForm::AllGatherB;
  if (s == "reduce_scatter" || s == "rs") return RingForm::ReduceScatter;
  throw InvalidArgument("gemm: unknown ring_form '" + text +
                        "' (auto, allgather_a, allgather_b, reduce_scatter)");
}

void set_grid(Options& o, const py::handle& value) {
  const auto grid = option_value<std::vector<int>>(value, "grid", "(rows, cols, k_slices)");
  if (grid.size() != 3)
    throw InvalidArgument("gemm: option grid must be (rows, cols, k_slices), got " +
                          std::to_string(grid.size()) + " numbers");
  o.grid_m = grid[0], o.grid_n = grid[1], o.grid_k = grid[2];
}

void set_option(Options& o, const std::string& key, const py::handle& value) {
  if (key == "algorithm")
    o.algorithm = parse_algorithm(option_value<std::string>(value, key, "a string"));
  else if (key == "memory_limit")
    o.memory_limit = option_value<std::int64_t>(value, key, "an int (bytes)");
  else if (key == "memory_growth")
    o.memory_growth = option_value<double>(value, key, "a number (negative: no cap)");
  else if (key == "panel") o.panel = option_value<std::int64_t>(value, key, "an int");
  else if (key == "stationary_chunk")
    o.stationary_chunk = option_value<std::int64_t>(value, key, "an int");
  else if (key == "ring_chunk") o.ring_chunk = option_value<std::int64_t>(value, key, "an int");
  else if (key == "strassen_step")
    o.strassen_step = parse_strassen_step(option_value<std::string>(value, key, "a string"));
  else if (key == "block") o.block = option_value<std::int64_t>(value, key, "an int");
  else if (key == "stationary")
    o.stationary = parse_stationary(option_value<std::string>(value, key, "a string"));
  else if (key == "overlap") o.overlap = option_value<bool>(value, key, "a bool");
  else if (key == "ring_axis") o.ring_axis = option_value<std::string>(value, key, "a string");
  else if (key == "ring_form")
    o.ring_form = parse_ring_form(option_value<std::string>(value, key, "a string"));
  else if (key == "bidirectional") o.bidirectional = option_value<bool>(value, key, "a bool");
  else if (key == "wire") o.wire = parse_wire(option_value<std::string>(value, key, "a string"));
  else if (key == "wait") o.wait = parse_wait(option_value<std::string>(value, key, "a string"));
  else if (key == "grid") set_grid(o, value);
  else if (key == "blas_threads") o.blas_threads = option_value<int>(value, key, "an int");
  else if (key == "allow_fast") o.allow_fast = option_value<bool>(value, key, "a bool");
  else if (key == "fast_crossover")
    o.fast_crossover = option_value<std::int64_t>(value, key, "an int");
  else
    throw InvalidArgument(
        "gemm: unknown option '" + key +
        "' (algorithm, memory_limit, memory_growth, panel, stationary_chunk, ring_chunk, block, "
        "stationary, overlap, ring_axis, ring_form, bidirectional, wire, wait, grid, "
        "strassen_step, blas_threads, allow_fast, fast_crossover)");
}

}  // namespace

Options to_options(const py::dict& options) {
  Options o;
  for (const auto& [key, value] : options)
    if (!value.is_none()) set_option(o, std::string(py::str(key)), value);
  if (o.memory_limit < 0)
    throw InvalidArgument("gemm: memory_limit " + std::to_string(o.memory_limit) + " < 0");
  if (o.fast_crossover < 0)
    throw InvalidArgument("gemm: fast_crossover " + std::to_string(o.fast_crossover) + " < 0");
  return o;
}

namespace {

py::dict report_dict(const GemmReport& r) {
  py::dict seconds;
  seconds["total"] = r.seconds_total;
  seconds["gemm"] = r.seconds_gemm;
  seconds["comm"] = r.seconds_comm;
  seconds["redist"] = r.seconds_redist;
  py::dict d;
  d["algorithm"] = to_string(r.algorithm);
  d["grid"] = r.grid;
  d["detail"] = r.detail;
  d["bytes_sent"] = r.bytes_sent;
  d["bytes_received"] = r.bytes_received;
  d["messages"] = r.messages;
  d["redist_bytes_sent"] = r.redist_bytes_sent;
  d["redist_bytes_received"] = r.redist_bytes_received;
  d["seconds"] = seconds;
  d["blas_threads"] = r.blas_threads;
  return d;
}

py::dict candidate_dict(const Candidate& c) {
  py::dict d;
  d["name"] = c.name();
  d["algorithm"] = to_string(c.algorithm);
  d["grid"] = py::make_tuple(c.pm, c.pn, c.pk);
  d["words"] = c.words;
  d["redist_words"] = c.redist_words;
  d["messages"] = c.messages;
  d["flops"] = c.flops;
  d["memory_bytes"] = c.memory_bytes;
  d["added_bytes"] = c.added_bytes;
  d["seconds"] = c.seconds;
  d["fits"] = c.fits;
  return d;
}

py::dict plan_dict(const GemmPlan& plan) {
  py::list candidates;
  for (const Candidate& c : plan.candidates) candidates.append(candidate_dict(c));
  py::dict d;
  d["chosen"] = candidate_dict(plan.chosen);
  d["candidates"] = candidates;
  d["lower_bound"] = plan.lower_bound;
  d["memory_policy"] = plan.policy;
  d["larger_budget"] =
      plan.roomier.empty() ? py::object(py::none()) : py::object(candidate_dict(plan.roomier[0]));
  d["explain"] = plan.explain();
  return d;
}

// Calls f(A, B, C) with the three DistMatrix<T> of one T, or throws InvalidArgument. CM is
// Matrix or const Matrix: C keeps its constness.
template <class CM, class F>
auto with_one_dtype(const Matrix& A, const Matrix& B, CM& C, F f) {
  if (&C == &A || &C == &B) throw InvalidArgument("gemm: C must be a matrix other than A and B");
  return std::visit(
      [&](const auto& a) {
        using T = element_t<decltype(a)>;
        const auto* b = std::get_if<DistMatrix<T>>(&B.m);
        auto* c = std::get_if<DistMatrix<T>>(&C.m);
        if (b == nullptr || c == nullptr)
          throw InvalidArgument(
              "gemm: A, B and C must have one dtype; they have " + numpy_name(matrix_dtype(A.m)) +
              ", " + numpy_name(matrix_dtype(B.m)) + ", " + numpy_name(matrix_dtype(C.m)));
        return f(a, *b, *c);
      },
      A.m);
}

py::dict gemm(const Matrix& A, const Matrix& B, Matrix& C, std::complex<double> alpha,
              std::complex<double> beta, const std::string& transa, const std::string& transb,
              const py::dict& options) {
  const Op opA = parse_op(transa), opB = parse_op(transb);
  const Options o = to_options(options);
  return with_one_dtype(A, B, C, [&](const auto& a, const auto& b, auto& c) {
    using T = element_t<decltype(a)>;
    const T al = to_scalar<T>(alpha, "alpha"), be = to_scalar<T>(beta, "beta");
    GemmReport report;
    {
      const py::gil_scoped_release release;
      report = shardmm::gemm(opA, opB, al, a, b, be, c, o);
    }
    return report_dict(report);
  });
}

py::dict dry_run(const Matrix& A, const Matrix& B, const Matrix& C, const std::string& transa,
                 const std::string& transb, const py::dict& options) {
  const Op opA = parse_op(transa), opB = parse_op(transb);
  const Options o = to_options(options);
  return with_one_dtype(A, B, C, [&](const auto& a, const auto& b, const auto& c) {
    return report_dict(shardmm::gemm_dry_run(opA, opB, a, b, c, o));
  });
}

// Per call, after a barrier: the seconds one shardmm::gemm takes when called from C++ (the
// reference the Python call's overhead is measured against, docs/PYTHON.md).
std::vector<double> time_gemm(const Matrix& A, const Matrix& B, Matrix& C, int reps) {
  return with_one_dtype(A, B, C, [&](const auto& a, const auto& b, auto& c) {
    using T = element_t<decltype(a)>;
    std::vector<double> seconds;
    const py::gil_scoped_release release;
    for (int r = 0; r < reps; ++r) {
      const int rc = MPI_Barrier(a.mesh().comm());
      if (rc != MPI_SUCCESS) throw MpiError("MPI_Barrier", rc);
      const double start = MPI_Wtime();
      (void)shardmm::gemm(Op::N, Op::N, T(1), a, b, T(0), c);
      seconds.push_back(MPI_Wtime() - start);
    }
    return seconds;
  });
}

// The layout the planner picks for a C of op(A) op(B) (shardmm::gemm_output_layout); A and B
// of one dtype.
Layout output_layout(const Matrix& A, const Matrix& B, const std::string& transa,
                     const std::string& transb, const py::dict& options) {
  const Op opA = parse_op(transa), opB = parse_op(transb);
  const Options o = to_options(options);
  return std::visit(
      [&](const auto& a) {
        using T = element_t<decltype(a)>;
        const auto* b = std::get_if<DistMatrix<T>>(&B.m);
        if (b == nullptr)
          throw InvalidArgument("gemm: A and B must have one dtype; they have " +
                                numpy_name(matrix_dtype(A.m)) + ", " +
                                numpy_name(matrix_dtype(B.m)));
        return gemm_output_layout(opA, opB, a, *b, o);
      },
      A.m);
}

// A new zero C there, of A's dtype.
MatrixPtr output_matrix(const Matrix& A, const Matrix& B, const std::string& transa,
                        const std::string& transb, const py::dict& options) {
  const Layout layout = output_layout(A, B, transa, transb, options);
  return std::visit([&](const auto& a) { return make_matrix(a.mesh(), matrix_dtype(A.m), layout); },
                    A.m);
}

std::string output_spec(const Matrix& A, const Matrix& B, const std::string& transa,
                        const std::string& transb, const py::dict& options) {
  return output_layout(A, B, transa, transb, options).spec().to_string();
}

// The planner's candidates for the request; `chosen` its pick (Auto) or the cheapest
// candidate of `algorithm` (Strassen is a candidate when asked for by name, as in gemm).
py::dict plan(index_t m, index_t n, index_t k, int ranks, const py::handle& dtype,
              std::int64_t memory_limit, int pm, int pn, index_t nb, const std::string& transa,
              const std::string& transb, const std::string& algorithm, bool allow_fast,
              std::int64_t fast_crossover, int hosts) {
  const Algorithm wanted = parse_algorithm(algorithm);
  PlanRequest request;
  request.m = m, request.n = n, request.k = k;
  request.ranks = ranks;
  request.dtype = to_dtype(dtype);
  request.memory_limit = memory_limit;
  request.allow_fast = allow_fast || wanted == Algorithm::Strassen;
  request.fast_crossover = fast_crossover;
  request.profile = MachineProfile::from_environment();  // as gemm plans
  request.relays_in_gemm = hosts > 1;                    // as gemm on a mesh across hosts
  if (pm > 0 || pn > 0)
    request = block_cyclic_request(request, parse_op(transa), parse_op(transb), pm, pn, nb);
  GemmPlan p = plan_gemm(request);
  if (wanted != Algorithm::Auto) p.chosen = cheapest_of(request, wanted, pm, pn);
  return plan_dict(p);
}

}  // namespace

void bind_gemm(py::module_& m) {
  m.def("gemm", &gemm, py::arg("A"), py::arg("B"), py::arg("C"), py::arg("alpha"), py::arg("beta"),
        py::arg("transa"), py::arg("transb"), py::arg("options"));
  m.def("dry_run", &dry_run, py::arg("A"), py::arg("B"), py::arg("C"), py::arg("transa"),
        py::arg("transb"), py::arg("options"));
  m.def("time_gemm", &time_gemm, py::arg("A"), py::arg("B"), py::arg("C"), py::arg("reps"));
  m.def("output_matrix", &output_matrix, py::arg("A"), py::arg("B"), py::arg("transa"),
        py::arg("transb"), py::arg("options"));
  m.def("output_spec", &output_spec, py::arg("A"), py::arg("B"), py::arg("transa"),
        py::arg("transb"), py::arg("options"));
  m.def("plan", &plan, py::arg("m"), py::arg("n"), py::arg("k"), py::arg("ranks"), py::arg("dtype"),
        py::arg("memory_limit"), py::arg("pm"), py::arg("pn"), py::arg("nb"), py::arg("transa"),
        py::arg("transb"), py::arg("algorithm"), py::arg("allow_fast"), py::arg("fast_crossover"),
        py::arg("hosts"));
}

}  // namespace shardmm::python
