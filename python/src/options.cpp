// Conversions between Python values and the library's option and report structs: gemm's
// keyword options (a dict) -> shardmm::Options, GemmReport and plan candidates -> dicts.
// Every bad option raises InvalidArgument from its value alone, so every rank raises alike.
#include <pybind11/stl.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <utility>
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
  else if (key == "panel") o.panel = option_value<std::int64_t>(value, key, "an int");
  else if (key == "block") o.block = option_value<std::int64_t>(value, key, "an int");
  else if (key == "stationary")
    o.stationary = parse_stationary(option_value<std::string>(value, key, "a string"));
  else if (key == "overlap") o.overlap = option_value<bool>(value, key, "a bool");
  else if (key == "ring_axis") o.ring_axis = option_value<std::string>(value, key, "a string");
  else if (key == "ring_form")
    o.ring_form = parse_ring_form(option_value<std::string>(value, key, "a string"));
  else if (key == "bidirectional") o.bidirectional = option_value<bool>(value, key, "a bool");
  else if (key == "grid") set_grid(o, value);
  else if (key == "blas_threads") o.blas_threads = option_value<int>(value, key, "an int");
  else
    throw InvalidArgument("gemm: unknown option '" + key +
                          "' (algorithm, memory_limit, panel, block, stationary, overlap, "
                          "ring_axis, ring_form, bidirectional, grid, blas_threads)");
}

}  // namespace

Options to_options(const py::dict& options) {
  Options o;
  for (const auto& [key, value] : options)
    if (!value.is_none()) set_option(o, std::string(py::str(key)), value);
  if (o.memory_limit < 0)
    throw InvalidArgument("gemm: memory_limit " + std::to_string(o.memory_limit) + " < 0");
  return o;
}

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
  d["explain"] = plan.explain();
  return d;
}

}  // namespace shardmm::python
