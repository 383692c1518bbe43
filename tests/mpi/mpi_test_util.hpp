// Shared helpers for MPI tests: deterministic entries from global indices, error checks.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "shardmm/shardmm.hpp"

namespace shardmm::testing {

inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/// Whether a typed sweep runs its case number i in element type T at this rank count. One and
/// two ranks (a core each on the 2-core machines the suite runs on) run every case in every
/// type. With more ranks than cores every wait is a context switch, so there each case runs in
/// one of the four types, the types taking turns ((i + i/4 + i/16 + i/64) % 4): along every
/// loop of a sweep each type meets every value of the loop, and each type runs a quarter of
/// the cases at every rank count. SHARDMM_TEST_EVERY_CASE=1 runs every case in every type;
/// SHARDMM_TEST_TYPES_IN_TURN=1 takes turns at every rank count (the sanitizer build, whose
/// instrumented runs cost 3-10 times as much, looks for memory errors, not rounding).
template <Scalar T>
bool type_takes_case(std::size_t i) {
  static const bool every = std::getenv("SHARDMM_TEST_EVERY_CASE") != nullptr ||
                            (world_size() <= 2 && !std::getenv("SHARDMM_TEST_TYPES_IN_TURN"));
  if (every) return true;
  constexpr auto type = static_cast<std::size_t>(dtype_of<T>());  // F32, F64, C64, C128: 0-3
  return (i + i / 4 + i / 16 + i / 64) % 4 == type;
}

/// Deterministic, rank-count-independent entry for (i, j) of matrix number `seed`.
template <class T>
T entry(index_t i, index_t j, int seed = 0) {
  const double x =
      std::sin(0.37 * static_cast<double>(i) + 1.13 * static_cast<double>(j) + 0.71 * seed) +
      0.001 * static_cast<double>((i * 7 + j * 3 + seed) % 11);
  if constexpr (is_complex_v<T>) {
    const double y = std::cos(0.53 * static_cast<double>(i) - 0.29 * static_cast<double>(j) + seed);
    return T(static_cast<real_t<T>>(x), static_cast<real_t<T>>(y));
  } else {
    return static_cast<T>(x);
  }
}

/// Runs f, expects it to throw E on this rank, and checks all ranks agree on the message.
template <class E, class F>
void expect_same_error_everywhere(F&& f, const std::string& must_contain = "") {
  std::string what;
  bool thrown = false;
  try {
    f();
  } catch (const E& e) {
    thrown = true;
    what = e.what();
  }
  EXPECT_TRUE(thrown) << "expected an exception on rank " << world_rank();
  if (!must_contain.empty()) {
    EXPECT_NE(what.find(must_contain), std::string::npos) << what;
  }
  // All ranks saw the same message: compare lengths and a checksum.
  long long sig[2] = {static_cast<long long>(what.size()), 0};
  unsigned long long hash = 0;  // unsigned: wraps instead of overflowing
  for (char c : what) hash = hash * 131 + static_cast<unsigned char>(c);
  sig[1] = static_cast<long long>(hash >> 1);
  long long mn[2], mx[2];
  MPI_Allreduce(sig, mn, 2, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(sig, mx, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(mn[0], mx[0]) << "ranks threw different messages: " << what;
  EXPECT_EQ(mn[1], mx[1]) << "ranks threw different messages: " << what;
}

/// The world as the mesh an algorithm runs on: a line for the ring, a q x q grid for Cannon,
/// else near-square; `line` (1: 1 x P, 2: P x 1) a 2D grid that is a line. Each kind is made
/// once per process and shared by the calls after (a mesh is a handle): a sweep of hundreds of
/// cases would otherwise duplicate and split MPI_COMM_WORLD hundreds of times. The meshes are
/// never destroyed, so no communicator is freed after MPI_Finalize.
inline Mesh mesh_for(Algorithm a, int line = 0) {
  static auto* const made = new std::map<std::pair<int, int>, Mesh>();
  const int kind = line ? 0 : a == Algorithm::Ring ? 1 : a == Algorithm::Cannon ? 2 : 3;
  if (const auto it = made->find({kind, line}); it != made->end()) return it->second;
  const int P = world_size();
  Mesh mesh = [&] {
    if (line)
      return Mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {line == 1 ? 1 : P, line == 1 ? P : 1}));
    if (kind == 1) return Mesh::line(MPI_COMM_WORLD, "x");
    if (kind == 2) {
      const int q = static_cast<int>(std::floor(std::sqrt(double(P)) + 1e-9));
      return Mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {q, q}), true);
    }
    return Mesh::grid2d(MPI_COMM_WORLD);
  }();
  made->emplace(std::pair{kind, line}, mesh);
  return mesh;
}

/// SHARDMM_FAULT_INJECT set for one scope on this rank (every rank makes one for a collective
/// call); unset when it goes out of scope.
struct Injection {
  explicit Injection(const std::string& spec) { setenv("SHARDMM_FAULT_INJECT", spec.c_str(), 1); }
  ~Injection() { unsetenv("SHARDMM_FAULT_INJECT"); }
  Injection(const Injection&) = delete;
  Injection& operator=(const Injection&) = delete;
  Injection(Injection&&) = delete;
  Injection& operator=(Injection&&) = delete;
};

}  // namespace shardmm::testing
