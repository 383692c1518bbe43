// MachineProfile <-> JSON (nlohmann-json), and the SHARDMM_PROFILE environment knob.
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "shardmm/config.hpp"
#include "shardmm/error.hpp"
#include "shardmm/plan.hpp"

namespace shardmm {
namespace {

// A per-read-path entry {"posix", "mpiio", "mmap"} of the profile, each key optional (the
// fields keep what they hold).
template <class Paths>
void read_paths(const nlohmann::json& j, const char* key, Paths& out) {
  if (!j.contains(key)) return;
  const auto& r = j.at(key);
  out.posix = r.value("posix", out.posix);
  out.mpiio = r.value("mpiio", out.mpiio);
  out.mmap = r.value("mmap", out.mmap);
}

template <class Paths>
nlohmann::json paths_json(const Paths& in) {
  return {{"posix", in.posix}, {"mpiio", in.mpiio}, {"mmap", in.mmap}};
}

}  // namespace

MachineProfile MachineProfile::from_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw IoError("machine profile '" + path + "' cannot be opened");
  MachineProfile p;
  try {
    const auto j = nlohmann::json::parse(in);
    p.latency_s = j.at("latency_s").get<double>();
    p.bytes_per_s = j.at("bytes_per_s").get<double>();
    const auto& g = j.at("gemm_gflops");
    const char* keys[4] = {"f32", "f64", "c64", "c128"};
    for (int d = 0; d < 4; ++d) p.gflops[d] = g.at(keys[d]).get<double>();
    p.strassen_crossover = j.value("strassen_crossover", p.strassen_crossover);
    p.disk_bytes_per_s = j.value("disk_bytes_per_s", p.disk_bytes_per_s);
    p.overlap_exposed = j.value("overlap_exposed", p.overlap_exposed);
    read_paths(j, "read_copy_bytes_per_s", p.read_copy_bytes_per_s);
    read_paths(j, "read_run_seconds", p.read_run_seconds);
  } catch (const nlohmann::json::exception& e) {
    throw IoError("machine profile '" + path + "' is malformed: " + e.what());
  }
  if (p.strassen_crossover < 2)
    throw IoError("machine profile '" + path + "' has a strassen_crossover below 2");
  if (p.latency_s < 0 || p.bytes_per_s <= 0)
    throw IoError("machine profile '" + path + "' has a negative latency or zero bandwidth");
  // NOLINTNEXTLINE(readability-simplify-boolean-expr): De Morgan's form would let NaN through
  if (!(p.overlap_exposed >= 0 && p.overlap_exposed <= 1))
    throw IoError("machine profile '" + path + "' has an overlap_exposed outside 0 .. 1");
  const auto& r = p.read_copy_bytes_per_s;
  // NOLINTNEXTLINE(readability-simplify-boolean-expr): De Morgan's form would let NaN through
  if (!(r.posix > 0 && r.mpiio > 0 && r.mmap > 0))
    throw IoError("machine profile '" + path +
                  "' has a read_copy_bytes_per_s that is not positive");
  const auto& t = p.read_run_seconds;
  // NOLINTNEXTLINE(readability-simplify-boolean-expr): De Morgan's form would let NaN through
  if (!(t.posix >= 0 && t.mpiio >= 0 && t.mmap >= 0 && t.posix < 1 && t.mpiio < 1 && t.mmap < 1))
    throw IoError("machine profile '" + path + "' has a read_run_seconds outside 0 .. 1");
  p.source = path;
  return p;
}

MachineProfile MachineProfile::from_environment() {
  const auto path = environment("SHARDMM_PROFILE");
  return path ? from_json_file(*path) : MachineProfile{};
}

std::string MachineProfile::to_json() const {
  nlohmann::json j = {
      {"latency_s", latency_s},
      {"bytes_per_s", bytes_per_s},
      {"strassen_crossover", strassen_crossover},
      {"disk_bytes_per_s", disk_bytes_per_s},
      {"overlap_exposed", overlap_exposed},
      {"read_copy_bytes_per_s", paths_json(read_copy_bytes_per_s)},
      {"read_run_seconds", paths_json(read_run_seconds)},
      {"gemm_gflops",
       {{"f32", gflops[0]}, {"f64", gflops[1]}, {"c64", gflops[2]}, {"c128", gflops[3]}}}};
  return j.dump(2);
}

}  // namespace shardmm
