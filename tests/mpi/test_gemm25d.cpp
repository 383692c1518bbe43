// 2.5D/3D GEMM on every pm x pn x pk factorisation of the world size with pk >= 2
// (c = 2 on 2x2x2 at 8 ranks), against the serial OpenBLAS oracle.
#include <gtest/gtest.h>

#include "algo/algo.hpp"
#include "core/instantiate.hpp"
#include "memory/workspace.hpp"
#include "mpi/gemm_check.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

struct Grid {
  int pm, pn, pk;
};

std::vector<Grid> grids(int P) {
  std::vector<Grid> out;
  for (int pm = 1; pm <= P; ++pm)
    for (int pn = 1; pm * pn <= P; ++pn)
      if (P % (pm * pn) == 0 && P / (pm * pn) >= 2) out.push_back({pm, pn, P / (pm * pn)});
  return out;
}

// A, B and C from their global indices; returns C's initial values.
template <Scalar T>
std::vector<T> fill(DistMatrix<T>& A, DistMatrix<T>& B, DistMatrix<T>& C) {
  A.fill([](index_t i, index_t j) { return entry<T>(i, j, 4); });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 5); });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 6); });
  return C.gather();
}

Options on_grid(Grid g) {
  Options o;
  o.algorithm = Algorithm::Gemm25D;
  o.grid_m = g.pm, o.grid_n = g.pn, o.grid_k = g.pk;
  return o;
}

template <Scalar T>
void check_grid(Grid g, Op opA, Op opB, index_t m, index_t n, index_t k) {
  const Mesh mesh = mesh_for(Algorithm::Summa);  // the near-square grid, made once
  const index_t ar = opA == Op::N ? m : k, ac = opA == Op::N ? k : m;
  const index_t br = opB == Op::N ? k : n, bc = opB == Op::N ? n : k;
  DistMatrix<T> A(mesh, Layout::block_cyclic(mesh.shape(), ar, ac, 4, 3));
  DistMatrix<T> B(mesh, Layout::block_cyclic(mesh.shape(), br, bc, 2, 5));
  DistMatrix<T> C(mesh, Layout::block_cyclic(mesh.shape(), m, n, 3, 3));
  const auto C0 = fill(A, B, C);
  Options o = on_grid(g);
  o.panel = 5;
  const GemmReport r = gemm(opA, opB, T(2), A, B, T(-1), C, o);
  EXPECT_EQ(r.grid, std::to_string(g.pm) + "x" + std::to_string(g.pn) + "x" + std::to_string(g.pk));
  EXPECT_LE(gemm_error(opA, opB, T(2), A, B, T(-1), C0, C), 10.0)
      << g.pm << "x" << g.pn << "x" << g.pk << " " << to_string(opA) << to_string(opB) << " m=" << m
      << " n=" << n << " k=" << k;
}

template <class T>
class Gemm25DTyped : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(Gemm25DTyped, Types);

TYPED_TEST(Gemm25DTyped, EveryGridAgreesWithTheOracle) {
  const index_t shapes[][3] = {{17, 13, 40}, {5, 31, 9}, {1, 1, 23}, {30, 4, 3}};
  std::size_t i = 0;  // on more than 2 ranks each case runs in one of the types (type_takes_case)
  for (const Grid& g : grids(world_size()))
    for (Op a : {Op::N, Op::T, Op::C})
      for (Op b : {Op::N, Op::T})
        for (const auto& s : shapes)
          if (type_takes_case<TypeParam>(i++)) check_grid<TypeParam>(g, a, b, s[0], s[1], s[2]);
}

TEST(Gemm25D, GridThatDoesNotUseEveryRankIsRejectedEverywhere) {
  Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> A(mesh, 8, 8, "A[I_X,J_Y]"), B(mesh, 8, 8, "B[I_X,J_Y]"),
      C(mesh, 8, 8, "C[I_X,J_Y]");
  Options o;
  o.algorithm = Algorithm::Gemm25D;
  o.grid_m = world_size() + 1, o.grid_n = 1, o.grid_k = 1;
  expect_same_error_everywhere<NotSupported>([&] { gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o); },
                                             "does not use exactly");
}

// Inputs already in 2.5D's own layouts (gemm25d_layouts, what preferred_layouts offers) on
// the mesh {x, y, z}: read in place and the reduction lands in C, so nothing is
// redistributed and A's tile takes no pool slot (the pool's high-water mark is a tile of A
// below that of the same call from a replicated A); with beta, op pairs, against the oracle.
TEST(Gemm25D, InputsInItsLayoutsAreReadInPlace) {
  for (const Grid& g : grids(world_size()))
    for (Op a : {Op::N, Op::T})
      for (Op b : {Op::N, Op::C}) {
        const index_t m = 23, n = 19, k = 37;
        const Mesh mesh(MPI_COMM_WORLD, MeshShape({"x", "y", "z"}, {g.pm, g.pn, g.pk}));
        const algo::Layouts25D l = algo::gemm25d_layouts(a, b, m, n, k, g.pm, g.pn, g.pk);
        using T = std::complex<double>;
        DistMatrix<T> A(mesh, l.A), B(mesh, l.B), C(mesh, l.C);
        const auto C0 = fill(A, B, C);
        const Options o = on_grid(g);
        memory::release();
        const GemmReport r = gemm(a, b, T(2), A, B, T(0.5, -1), C, o);
        const auto held_in_place = double(memory::held_bytes());
        EXPECT_EQ(r.redist_bytes_received, 0) << r.to_string();
        EXPECT_LE(gemm_error(a, b, T(2), A, B, T(0.5, -1), C0, C), 10.0) << r.to_string();
        // A replicated instead: copied into a pool slot of A's 3D tile, B and C still in place.
        DistMatrix<T> Ar(mesh, Layout::replicated(mesh.shape(), A.rows(), A.cols()));
        Ar.fill([](index_t i, index_t j) { return entry<T>(i, j, 4); });
        const auto C1 = C.gather();
        memory::release();
        const GemmReport moved = gemm(a, b, T(1), Ar, B, T(0), C, o);
        const auto tile = double(A.local_rows() * A.local_cols()) * sizeof(T);
        EXPECT_GE(double(memory::held_bytes()), held_in_place + tile) << moved.to_string();
        EXPECT_LE(gemm_error(a, b, T(1), Ar, B, T(0), C1, C), 10.0) << moved.to_string();
      }
}

}  // namespace
