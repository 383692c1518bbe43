// Helpers of the .npy MPI tests: a per-run temporary directory, byte images of .npy files
// built from the format definition (never through shardmm's writer), and element checks
// against the reference layout model.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "mpi/mpi_test_util.hpp"
#include "mpi/ref_layout.hpp"
#include "shardmm/io.hpp"

namespace shardmm::testing::npy {

namespace fs = std::filesystem;

inline std::string g_root;  // per-run temporary directory (same on every rank)
inline std::string g_dir;   // the running test suite's own directory under g_root

inline void bcast(std::string& s) {
  long long n = static_cast<long long>(s.size());
  MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  s.resize(static_cast<std::size_t>(n));
  MPI_Bcast(s.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
}

/// Rank 0 creates g_root under /tmp (name broadcast); removed again after all tests. Registered
/// once per program by this header (g_temp_dirs below), never by a test file.
class TempDir : public ::testing::Environment {
 public:
  void SetUp() override {
    if (world_rank() == 0) {
      std::string templ = "/tmp/shardmm_npy_XXXXXX";
      if (mkdtemp(templ.data()) != nullptr) g_root = templ;
    }
    bcast(g_root);
    ASSERT_FALSE(g_root.empty()) << "mkdtemp failed";
    g_dir = g_root;
  }
  void TearDown() override {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) fs::remove_all(g_root);
    g_root.clear(), g_dir.clear();
  }
};

/// Each test suite works in a fresh directory of its own (g_dir = g_root/<suite>), removed
/// when the suite ends: a suite's snapshots and leftover checks see only its own files, and a
/// program of many files holds one suite's operands at a time. Every rank runs every suite.
class SuiteDir : public ::testing::EmptyTestEventListener {
 public:
  void OnTestSuiteStart(const ::testing::TestSuite& suite) override {
    if (g_root.empty()) return;  // TempDir failed: the tests do not run
    std::string name = suite.name();
    for (char& c : name)
      if (c == '/') c = '_';  // typed suites: "Multiply/0"
    g_dir = g_root + "/" + name;
    if (world_rank() == 0) fs::create_directories(g_dir);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  void OnTestSuiteEnd(const ::testing::TestSuite& /*suite*/) override {
    if (g_root.empty() || g_dir == g_root) return;
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) fs::remove_all(g_dir);
    g_dir = g_root;
  }
};
// Every program that includes this header gets the run's directory and the suites' ones.
inline const bool g_temp_dirs = [] {
  ::testing::AddGlobalTestEnvironment(new TempDir);
  ::testing::UnitTest::GetInstance()->listeners().Append(new SuiteDir);
  return true;
}();

inline std::string file(const std::string& name) { return g_dir + "/" + name; }

template <class T>
std::string descr() {
  if constexpr (std::is_same_v<T, float>) return "<f4";
  else if constexpr (std::is_same_v<T, double>) return "<f8";
  else if constexpr (std::is_same_v<T, std::complex<float>>) return "<c8";
  else return "<c16";
}

// Version 1.0 header around `dict`, padded with spaces and '\n' to a multiple of 64 bytes.
inline std::string header_with_dict(const std::string& dict) {
  const std::size_t unpadded = 10 + dict.size() + 1, total = (unpadded + 63) / 64 * 64;
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>((total - 10) & 0xFF);  // header length, little-endian u16
  out += static_cast<char>((total - 10) >> 8);
  return out + dict + std::string(total - unpadded, ' ') + "\n";
}

// NumPy's header for `dtype`, order and shape text such as "(3, 4)", "(5,)" or "()".
inline std::string header(const std::string& dtype, bool fortran, const std::string& shape) {
  return header_with_dict("{'descr': '" + dtype + "', 'fortran_order': " +
                          (fortran ? "True" : "False") + ", 'shape': " + shape + ", }");
}
inline std::string shape(index_t m, index_t n) {
  return "(" + std::to_string(m) + ", " + std::to_string(n) + ")";
}

// entry<T>(i, j, seed) of an m x n matrix as little-endian bytes in file order.
template <class T>
std::string data_bytes(index_t m, index_t n, bool fortran, int seed = 0) {
  std::string out;
  auto put = [&](index_t i, index_t j) {
    const T v = entry<T>(i, j, seed);
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
  };
  for (index_t a = 0; a < (fortran ? n : m); ++a)
    for (index_t b = 0; b < (fortran ? m : n); ++b) fortran ? put(b, a) : put(a, b);
  return out;
}

// Rank 0 writes the file, then everyone may read it.
inline void put_file(const std::string& path, const std::string& bytes) {
  if (world_rank() == 0)
    std::ofstream(path, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  MPI_Barrier(MPI_COMM_WORLD);
}
inline std::string get_file(const std::string& path) {  // rank 0 only; "" elsewhere
  if (world_rank() != 0) return "";
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Every file and directory under g_dir with its bytes ("<dir>" for a directory), on rank 0
/// (empty elsewhere): taken before and after a refused call, nothing may differ.
inline std::map<std::string, std::string> snapshot() {
  std::map<std::string, std::string> files;
  if (world_rank() == 0)
    for (const auto& e : fs::recursive_directory_iterator(g_dir))
      files[e.path().string()] = e.is_directory() ? "<dir>" : get_file(e.path().string());
  return files;
}

// On rank 0: the file holds exactly `want`; the message points at the first differing byte.
inline void expect_bytes(const std::string& path, const std::string& want,
                         const std::string& what) {
  if (world_rank() != 0) return;
  const std::string got = get_file(path);
  std::size_t k = 0;
  while (k < got.size() && k < want.size() && got[k] == want[k]) ++k;
  EXPECT_TRUE(got == want) << what << ": " << path << " has " << got.size() << " bytes, want "
                           << want.size() << "; first difference at byte " << k;
}

// Leftover temporary files of write_npy in the test directory (rank 0; 0 elsewhere).
inline int leftover_temps() {
  int n = 0;
  if (world_rank() == 0)
    for (const auto& e : fs::directory_iterator(g_dir))
      n += e.path().string().find(".tmp.") != std::string::npos;
  return n;
}

template <class T>
T sentinel() {
  return T(-99.5);
}

template <class T>
void poison(DistMatrix<T>& A) {
  for (index_t j = 0; j < A.local_cols(); ++j)
    for (index_t i = 0; i < A.local_rows(); ++i) A.local(i, j) = sentinel<T>();
}

// Every local element of this rank equals entry(i, j, seed) (0 off the unreduced primary).
template <class T>
void expect_local(const DistMatrix<T>& A, const ref::Model& M, int seed, const std::string& what) {
  const int me = world_rank();
  ASSERT_EQ(A.local_rows(), static_cast<index_t>(M.owned(0, me).size())) << M.name();
  ASSERT_EQ(A.local_cols(), static_cast<index_t>(M.owned(1, me).size())) << M.name();
  int bad = 0;
  std::string first;
  ref::for_each_local(M, me, [&](index_t il, index_t jl, index_t i, index_t j) {
    const T want = M.holds_value(me) ? entry<T>(i, j, seed) : T(0);
    if (A.local(il, jl) == want) return;
    if (bad++ == 0)
      first = "(" + std::to_string(i) + "," + std::to_string(j) +
              ") = " + ::testing::PrintToString(A.local(il, jl)) + ", want " +
              ::testing::PrintToString(want);
  });
  EXPECT_EQ(bad, 0) << what << " " << M.name() << ": first bad element " << first;
}

inline Mesh world_mesh() { return Mesh::grid2d(MPI_COMM_WORLD); }
inline std::vector<ref::Spec> specs(const Mesh& mesh) {
  return ref::grid_specs(mesh.axis_size("x"), mesh.axis_size("y"));
}
inline const char* order_name(bool fortran) { return fortran ? "Fortran order" : "C order"; }

}  // namespace shardmm::testing::npy
