// Helpers of the gemm traffic tests (test_gemm_traffic*.cpp): runs gemm on fresh operands
// (checked against the serial oracle and for conservation) and compares the bytes it reports
// with a formula's.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mpi/gemm_check.hpp"

namespace shardmm::testing::traffic {

struct Shape {
  index_t m, n, k;
};
struct Bytes {  // elements until scaled by sizeof(T)
  std::int64_t sent = 0, received = 0;
};

// Meshes {x: f0, y: f1} and {x: f1, y: f0} with f0 >= f1 the near-square factors of P.
inline std::vector<Mesh> grids() {
  const auto f = factor_near_square(world_size(), 2);
  std::vector<Mesh> out{Mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {f[0], f[1]}))};
  if (f[0] != f[1]) out.emplace_back(MPI_COMM_WORLD, MeshShape({"x", "y"}, {f[1], f[0]}));
  return out;
}
inline Mesh tall_grid() { return grids().front(); }

// "K_Y:bc3+1": a block-cyclic dimension.
inline std::string bc(const std::string& label, const std::string& axis, int nb, int src) {
  return label + "_" + axis + ":bc" + std::to_string(nb) + "+" + std::to_string(src);
}
// The stored layout of X when op(X) has the logical layout "[d0,d1]" (rows x cols).
inline Layout stored(Op op, const Mesh& mesh, index_t rows, index_t cols, const std::string& spec) {
  const Layout logical(mesh.shape(), rows, cols, spec);
  return op == Op::N ? logical : logical.transposed();
}
inline Layout logical(const Mesh& mesh, index_t rows, index_t cols, const std::string& spec) {
  return Layout(mesh.shape(), rows, cols, spec);
}

// Runs C <- alpha op(A) op(B) + beta C on fresh operands and returns the report.
template <Scalar T>
GemmReport run(const Mesh& mesh, Op opA, Op opB, Shape s, const std::string& a,
               const std::string& b, const std::string& c, const Options& o,
               const std::string& what) {
  DistMatrix<T> A(mesh, stored(opA, mesh, s.m, s.k, a)), B(mesh, stored(opB, mesh, s.k, s.n, b));
  DistMatrix<T> C(mesh, Layout(mesh.shape(), s.m, s.n, c));
  A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 3); });
  const auto c0 = C.gather();  // sums unreduced partials
  const T alpha(real_t<T>(1.5)), beta(real_t<T>(-0.5));
  GemmReport r = gemm(opA, opB, alpha, A, B, beta, C, o);
  EXPECT_LE(gemm_error(opA, opB, alpha, A, B, beta, c0, C), 10.0) << what;
  std::int64_t mine[2] = {r.bytes_sent, r.bytes_received}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);  // idle ranks too
  EXPECT_EQ(all[0], all[1]) << "bytes sent and received do not balance: " << what;
  return r;
}

template <Scalar T>
void expect_bytes(const GemmReport& r, Bytes want, const std::string& what) {
  const auto size = static_cast<std::int64_t>(sizeof(T));
  EXPECT_EQ(r.redist_bytes_sent, 0) << what << "\n" << r.to_string();
  EXPECT_EQ(r.redist_bytes_received, 0) << what << "\n" << r.to_string();
  EXPECT_EQ(r.bytes_sent, want.sent * size) << what << " on rank " << world_rank() << "\n"
                                            << r.to_string();
  EXPECT_EQ(r.bytes_received, want.received * size) << what << " on rank " << world_rank() << "\n"
                                                    << r.to_string();
}

inline std::string describe(const std::string& algo, const Mesh& mesh, Op opA, Op opB, Shape s) {
  return algo + " on " + mesh.shape().to_string() + " op " + to_string(opA) + to_string(opB) +
         " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k);
}

}  // namespace shardmm::testing::traffic
