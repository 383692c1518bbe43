// The chained broadcast behind comm::ibcast (src/comm/chain_bcast.cpp), run with tiny chunks so
// every message takes the chain: every root, lengths around the chunk size, several chains in
// flight on one communicator, completion by test() as well as wait(), the logical traffic
// tally, and SUMMA on a 1 x P line (its panels travel down the chain) against OpenBLAS.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <vector>

#include "comm/collectives.hpp"
#include "comm/traffic.hpp"
#include "mpi/gemm_check.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

// Sets the chain's chunk size for a test's lifetime.
class ScopedChunk {
 public:
  explicit ScopedChunk(std::int64_t bytes) : before_(comm::bcast_chunk_bytes()) {
    comm::set_bcast_chunk_bytes(bytes);
  }
  ~ScopedChunk() { comm::set_bcast_chunk_bytes(before_); }
  ScopedChunk(const ScopedChunk&) = delete;
  ScopedChunk& operator=(const ScopedChunk&) = delete;
  ScopedChunk(ScopedChunk&&) = delete;
  ScopedChunk& operator=(ScopedChunk&&) = delete;

 private:
  std::int64_t before_;
};

// Element e of a message broadcast from `root`: the root's value, which others must receive.
template <class T>
T sent(std::int64_t e, int root) {
  return entry<T>(static_cast<index_t>(e), root, 7);
}

// A buffer as rank `me` holds it before the broadcast: the message at the root, junk elsewhere.
template <class T>
std::vector<T> before(std::int64_t count, int root, int me) {
  std::vector<T> v(static_cast<std::size_t>(count), T(-99));
  if (me == root)
    for (std::int64_t e = 0; e < count; ++e) v[static_cast<std::size_t>(e)] = sent<T>(e, root);
  return v;
}

template <class T>
bool arrived(const std::vector<T>& v, int root) {
  for (std::size_t e = 0; e < v.size(); ++e)
    if (v[e] != sent<T>(static_cast<std::int64_t>(e), root)) return false;
  return true;
}

template <class T>
class ChainBcast : public ::testing::Test {};
using Types = ::testing::Types<double, std::complex<float>>;
TYPED_TEST_SUITE(ChainBcast, Types);

// 64-byte chunks: 8 doubles or 8 complex<float>; lengths below two chunks use MPI_Ibcast.
TYPED_TEST(ChainBcast, EveryRootAndLength) {
  using T = TypeParam;
  const ScopedChunk chunk(64);
  const int P = world_size(), me = world_rank();
  for (int root = 0; root < P; ++root)
    for (const std::int64_t count : {0, 1, 15, 16, 17, 24, 100, 1001}) {
      std::vector<T> v = before<T>(count, root, me);
      comm::Requests q;
      comm::ibcast(v.data(), count, root, MPI_COMM_WORLD, q);
      if (count % 2 == 0) q.wait();
      else
        while (!q.test()) {
        }
      EXPECT_TRUE(q.empty());
      EXPECT_TRUE(arrived(v, root)) << "root " << root << ", " << count << " elements, rank " << me;
    }
}

// Chains from different roots in flight at once on one communicator, in one Requests and in
// two completed in the opposite order: chunks never match another chain's receives.
TYPED_TEST(ChainBcast, SeveralInFlightOnOneCommunicator) {
  using T = TypeParam;
  const ScopedChunk chunk(64);
  const int P = world_size(), me = world_rank();
  const std::int64_t count = 203;
  const int roots[4] = {P - 1, (P + P - 2) % P, (3 * P - 3) % P, (4 * P - 4) % P};
  std::vector<std::vector<T>> v;
  v.reserve(4);
  for (const int root : roots) v.push_back(before<T>(count, root, me));
  comm::Requests together, first, second;
  comm::ibcast(v[0].data(), count, roots[0], MPI_COMM_WORLD, together);
  comm::ibcast(v[1].data(), count, roots[1], MPI_COMM_WORLD, together);
  comm::ibcast(v[2].data(), count, roots[2], MPI_COMM_WORLD, first);
  comm::ibcast(v[3].data(), count, roots[3], MPI_COMM_WORLD, second);
  second.wait();
  together.wait();
  first.wait();
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_TRUE(arrived(v[i], roots[i])) << "broadcast " << i << " on rank " << me;
}

// The tally stays the logical one (the root sends one copy per receiver), whatever the route.
TEST(ChainBcastTraffic, RootCountsOneCopyPerReceiver) {
  const ScopedChunk chunk(64);
  const int P = world_size(), me = world_rank();
  const std::int64_t count = 500, bytes = count * 8;
  std::vector<double> v = before<double>(count, 0, me);
  const comm::Traffic t0 = comm::traffic();
  comm::Requests q;
  comm::ibcast(v.data(), count, 0, MPI_COMM_WORLD, q);
  q.wait();
  const comm::Traffic d = comm::traffic() - t0;
  EXPECT_EQ(d.bytes_sent, me == 0 ? bytes * (P - 1) : 0);
  EXPECT_EQ(d.bytes_received, me == 0 || P == 1 ? 0 : bytes);
  EXPECT_TRUE(arrived(v, 0));
}

TEST(ChainBcastErrors, NegativeChunkIsRefused) {
  EXPECT_THROW(comm::set_bcast_chunk_bytes(-1), InvalidArgument);
  EXPECT_GE(comm::bcast_chunk_bytes(), 0);
}

// SUMMA on 1 x P: A's panels go down the chain along the line while B's stay local; the
// result agrees with OpenBLAS for every op pair and a panel width that splits chunks unevenly.
TEST(ChainBcastSumma, LineMatchesReference) {
  const ScopedChunk chunk(256);
  const Mesh mesh(MPI_COMM_WORLD, MeshShape({"x", "y"}, {1, world_size()}));
  for (const Op opA : {Op::N, Op::T})
    for (const Op opB : {Op::N, Op::T}) {
      const index_t m = 37, n = 29, k = 41;
      DistMatrix<double> A(mesh, opA == Op::N ? m : k, opA == Op::N ? k : m, "A[I_X,K_Y]");
      DistMatrix<double> B(mesh, opB == Op::N ? k : n, opB == Op::N ? n : k, "B[K_X,J_Y]");
      DistMatrix<double> C(mesh, m, n, "C[I_X,J_Y]");
      A.fill([](index_t i, index_t j) { return entry<double>(i, j, 1); });
      B.fill([](index_t i, index_t j) { return entry<double>(i, j, 2); });
      C.fill([](index_t i, index_t j) { return entry<double>(i, j, 3); });
      const std::vector<double> C0 = C.gather();
      Options o;
      o.algorithm = Algorithm::Summa;
      o.stationary = Stationary::C;
      o.panel = 13;
      gemm(opA, opB, 0.5, A, B, -1.5, C, o);
      EXPECT_LE(gemm_error(opA, opB, 0.5, A, B, -1.5, C0, C), 10.0)
          << "op " << int(opA) << int(opB);
    }
}

}  // namespace
