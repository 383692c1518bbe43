// Helpers shared by the example programs (public shardmm API only): deterministic data from
// global indices, loops over this rank's local tiles, a scalar sum over mesh axes expressed as
// a shardmm redistribution, error measures, mesh parsing, the command line and the common main().
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "shardmm/shardmm.hpp"

namespace shardmm::examples {

/// Deterministic value in [-1, 1) for (seed, i, j): a hash of the global indices, so the data
/// depend neither on the rank count nor on the layout.
double hash_uniform(std::uint64_t seed, index_t i, index_t j);

/// Wall-clock seconds (steady clock).
double now_seconds();

/// "XxY" -> the 2D mesh {x: X, y: Y} (x = data axis, y = model axis); "X" -> {x: X, y: 1};
/// empty -> {x: world, y: 1}. Throws InvalidArgument when X * Y != world.
MeshShape parse_mesh(const std::string& text, int world);

/// What an option's number must be (checked while parsing; --help shows it).
enum class Check { Any, Positive, NonNegative };

/// An example's command line: options bound to variables, listed by --help in the order they
/// are added; run_example() parses argv into them. CLI11 stays inside util.cpp.
class CommandLine {
 public:
  CommandLine(const std::string& description, const std::string& name);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;
  CommandLine(CommandLine&&) = delete;
  CommandLine& operator=(CommandLine&&) = delete;

  /// `names`: "-B,--batch" or "--mesh". A string option with `choices` takes only those.
  void option(const std::string& names, index_t& value, const std::string& help,
              Check check = Check::Any);
  void option(const std::string& names, int& value, const std::string& help,
              Check check = Check::Any);
  void option(const std::string& names, double& value, const std::string& help,
              Check check = Check::Any);
  void option(const std::string& names, std::string& value, const std::string& help,
              const std::vector<std::string>& choices = {});
  void flag(const std::string& names, bool& value, const std::string& help);
  /// Whether option `name` (e.g. "--lr") was on the parsed command line.
  [[nodiscard]] bool given(const std::string& name) const;

 private:
  friend int run_example(int argc, char** argv, CommandLine& cli,
                         const std::function<int(const Mesh&)>& body);
  struct App;
  std::unique_ptr<App> app_;
};

/// The common main(): MPI_Init, parse argv into `cli`, run `body` on every rank, MPI_Finalize.
/// Exit codes: body's result; 1 on an exception (printed by rank 0); 2 on a usage error;
/// --help prints the options on rank 0 and exits 0.
int run_example(int argc, char** argv, CommandLine& cli,
                const std::function<int(const Mesh&)>& body);

template <Scalar T>
T scalar(double v) {
  return static_cast<T>(v);
}

/// Calls f(value&, i_glob, j_glob) on every element of this rank's tile.
template <Scalar T, class F>
void for_each_local(DistMatrix<T>& M, F&& f) {
  for (index_t jl = 0; jl < M.local_cols(); ++jl) {
    const index_t j = M.global_col(jl);
    for (index_t il = 0; il < M.local_rows(); ++il) f(M.local(il, jl), M.global_row(il), j);
  }
}

/// Elementwise over tiles of one distribution: f(out(i,j), in(i,j)...) on every local element.
template <Scalar T, class F, class... In>
void zip_local(F&& f, DistMatrix<T>& out, const In&... in) {
  if (!(in.layout().same_distribution(out.layout()) && ...))
    throw InvalidArgument("zip_local: operands are distributed differently from " +
                          out.layout().to_string());
  for (index_t j = 0; j < out.local_cols(); ++j)
    for (index_t i = 0; i < out.local_rows(); ++i) f(out.local(i, j), in.local(i, j)...);
}

/// Sum over the mesh axes `axes` of every rank's `value`, returned on every rank. Expressed with
/// the library: a 1 x 1 matrix unreduced over `axes` ({U_..}: each rank holds a partial sum)
/// redistributed to a replicated layout. Replicas along the other axes sum independently.
template <Scalar T>
T sum_over(const Mesh& mesh, const std::vector<std::string>& axes, T value,
           RedistStats* stats = nullptr) {
  ShardingSpec partial;
  partial.name = "s";
  partial.unreduced = axes;
  DistMatrix<T> part(mesh, Layout(mesh.shape(), 1, 1, partial));
  part.local(0, 0) = value;
  DistMatrix<T> total(mesh, Layout::replicated(mesh.shape(), 1, 1));
  const RedistStats s = redistribute(part, total);
  if (stats) *stats = s;
  return total.local(0, 0);
}

/// max_ij |got - want| / max_ij |want| (infinity when the sizes differ).
template <Scalar T>
double max_rel_error(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
  double diff = 0, scale = 0;
  for (std::size_t e = 0; e < got.size(); ++e) {
    diff = std::max(diff, static_cast<double>(std::abs(got[e] - want[e])));
    scale = std::max(scale, static_cast<double>(std::abs(want[e])));
  }
  return scale > 0 ? diff / scale : diff;
}

/// Default verification tolerance: a few thousand ulps of the type.
template <Scalar T>
double default_tolerance() {
  return std::is_same_v<T, float> ? 1e-4 : 1e-9;
}

}  // namespace shardmm::examples
