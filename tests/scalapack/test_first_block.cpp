// Layouts with a first block of another size (ScaLAPACK's IMB/INB) through the C++ API: every
// element is where the index math puts it (fill / gather round trip from global indices),
// redistribution to and from regular layouts keeps every value, and gemm with each algorithm
// passes the serial normwise oracle with such operands (each moved once into the algorithm's
// regular layouts), C's first block included.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mpi/gemm_check.hpp"

namespace shardmm::testing {
namespace {

// The mesh's sizes for this world: 2 x 2 at 4 ranks, else 1 x P.
MeshShape grid() {
  const int P = world_size();
  return P == 4 ? MeshShape({"x", "y"}, {2, 2}) : MeshShape({"x", "y"}, {1, P});
}

// bc(mb, nb, rsrc, csrc, imb, inb) on the mesh, sources taken modulo its axis sizes.
struct Bc {
  index_t mb, nb;
  int rsrc, csrc;
  index_t imb, inb;
  [[nodiscard]] Layout on(const MeshShape& s, index_t m, index_t n) const {
    return Layout::block_cyclic(s, m, n, mb, nb, rsrc % s.sizes[0], csrc % s.sizes[1], imb, inb);
  }
};

template <Scalar T>
DistMatrix<T> filled(const Mesh& mesh, const Layout& L, int seed) {
  DistMatrix<T> X(mesh, L);
  X.fill([seed](index_t i, index_t j) { return entry<T>(i, j, seed); });
  return X;
}

TEST(FirstBlock, FillGatherAndRedistributeKeepEveryEntry) {
  const Mesh mesh(MPI_COMM_WORLD, grid());
  const index_t m = 23, n = 17;
  const Layout written(mesh.shape(), m, n, "A[I_X:bc2f1,J_Y:bc3f6]");  // the notation too
  for (const Layout& L : {Bc{4, 3, 1, 0, 2, 5}.on(mesh.shape(), m, n),
                          Bc{3, 4, 0, 1, 7, 1}.on(mesh.shape(), m, n), written}) {
    SCOPED_TRACE(L.to_string());
    const auto X = filled<double>(mesh, L, 3);
    const auto all = X.gather();
    if (world_rank() == 0) {
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i)
          ASSERT_EQ(all[static_cast<std::size_t>(i + j * m)], entry<double>(i, j, 3));
    }
    for (const Layout& to :
         {Layout(mesh.shape(), m, n, "bc(2,2)"), Bc{5, 3, 1, 1, 1, 2}.on(mesh.shape(), m, n),
          Layout(mesh.shape(), m, n, "A[I_XY,J]")}) {
      const DistMatrix<double> Y = redistribute(X, to);
      EXPECT_EQ(Y.gather(), all) << "to " << to.to_string();
      const DistMatrix<double> Z = redistribute(Y, X.layout());
      EXPECT_EQ(Z.gather(), all) << "back from " << to.to_string();
    }
  }
}

template <Scalar T>
void every_algorithm(Op opA, Op opB) {
  const Mesh mesh(MPI_COMM_WORLD, grid());
  const index_t m = 19, n = 14, k = 11;
  const bool ta = opA != Op::N, tb = opB != Op::N;
  const MeshShape& s = mesh.shape();
  const auto A = filled<T>(mesh, Bc{3, 4, 1, 0, 1, 6}.on(s, ta ? k : m, ta ? m : k), 1);
  const auto B = filled<T>(mesh, Bc{2, 2, 0, 1, 3, 1}.on(s, tb ? n : k, tb ? k : n), 2);
  const T alpha(2), beta(-1);
  for (const Algorithm algo : {Algorithm::Auto, Algorithm::Summa, Algorithm::Cannon,
                               Algorithm::Ring, Algorithm::Sharded, Algorithm::Gemm25D}) {
    if (algo == Algorithm::Cannon && mesh.shape().sizes[0] != mesh.shape().sizes[1]) continue;
    auto C = filled<T>(mesh, Bc{4, 3, 1, 1, 2, 2}.on(s, m, n), 5);
    const std::vector<T> C0 = C.gather();
    Options o;
    o.algorithm = algo;
    gemm(opA, opB, alpha, A, B, beta, C, o);
    EXPECT_LE(gemm_error(opA, opB, alpha, A, B, beta, C0, C), 10.0) << to_string(algo);
  }
}

TEST(FirstBlock, GemmEveryAlgorithmDouble) { every_algorithm<double>(Op::N, Op::T); }
TEST(FirstBlock, GemmEveryAlgorithmComplex) { every_algorithm<std::complex<float>>(Op::C, Op::N); }

}  // namespace
}  // namespace shardmm::testing
