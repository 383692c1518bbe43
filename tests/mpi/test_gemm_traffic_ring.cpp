// Bytes moved by the ring (GemmReport) against its formula for each form, computed here from
// the operands' layout maps; the operands are already in the ring's layouts (see
// test_gemm_traffic.cpp for the other algorithms).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "core/instantiate.hpp"
#include "mpi/traffic_util.hpp"

using namespace shardmm;
using namespace shardmm::testing;
using namespace shardmm::testing::traffic;

namespace {

template <class T>
class RingTraffic : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(RingTraffic, Types);

struct RingCase {
  RingForm form;
  const char* a;  // templates: '@' is the ring axis, '%' a source coordinate
  const char* b;
  const char* c;
};
const RingCase kRingCases[] = {
    {RingForm::AllGatherA, "A[I_@,K]", "B[K,J_@]", "C[I,J_@]"},
    {RingForm::AllGatherB, "A[I_@,K]", "B[K,J_@]", "C[I_@,J]"},
    {RingForm::ReduceScatter, "A[I,K_@]", "B[K_@,J]", "C[I_@,J]"},
    // The caller's cyclic splits are kept (expect_bytes: nothing redistributed).
    {RingForm::AllGatherA, "A[I_@:bc2+%,K]", "B[K,J_@:bc3+0]", "C[I,J_@:bc3+0]"},
    {RingForm::AllGatherB, "A[I_@:bc3+%,K]", "B[K,J_@:bc1+0]", "C[I_@:bc3+%,J]"},
    {RingForm::ReduceScatter, "A[I,K_@:bc2+%]", "B[K_@:bc2+%,J]", "C[I_@,J]"},
    {RingForm::ReduceScatter, "A[I,K_@:bc3+0]", "B[K_@:bc3+0,J]", "C[I,J_@:bc2+%]"},
};

// '@' becomes the ring axis, '%' a block-cyclic source coordinate (1 where the axis allows).
std::string on_axis(std::string spec, const std::string& axis, int axis_size) {
  spec.replace(spec.find('@'), 1, axis);
  for (auto at = spec.find('%'); at != std::string::npos; at = spec.find('%'))
    spec.replace(at, 1, std::to_string(1 % axis_size));
  return spec;
}

// AllGather: every block of the circulating operand but the own one comes in; every block but
// the one of rank r-1 (the last held) goes out. Bidirectional (p > 2): the last `right` k
// indices of every tile travel the other way, so that part goes out for every block but
// (r+1)'s. ReduceScatter: partial C blocks of every row block but (r+1)'s come in, and of
// every row (or column) block but the own one go out.
Bytes ring_bytes(RingForm form, const DimMap& blocks, index_t other, int r, index_t right) {
  const int p = blocks.nprocs;
  auto all_but = [&](int b) { return blocks.extent - blocks.local_extent((b % p + p) % p); };
  if (form == RingForm::ReduceScatter) return {all_but(r) * other, all_but(r + 1) * other};
  return {all_but(r - 1) * (other - right) + all_but(r + 1) * right, all_but(r) * other};
}

template <Scalar T>
void ring_case(const Mesh& mesh, const std::string& axis, const RingCase& rc, Op opA, Op opB,
               Shape s, bool bidirectional) {
  const int size = mesh.axis_size(axis);
  const std::string a = on_axis(rc.a, axis, size), b = on_axis(rc.b, axis, size),
                    c = on_axis(rc.c, axis, size);
  Options o;
  o.algorithm = Algorithm::Ring;
  o.ring_form = rc.form;
  o.bidirectional = bidirectional;
  if (mesh.shape().ndims() > 1) o.ring_axis = axis;
  const auto what =
      describe(std::string(bidirectional ? "bidirectional " : "") + "ring over " + axis, mesh, opA,
               opB, s) +
      " " + a + " " + b + " " + c;
  const auto r = run<T>(mesh, opA, opB, s, a, b, c, o, what);
  const int me = mesh.coord(axis);
  const bool split =
      bidirectional && mesh.axis_size(axis) > 2 && rc.form != RingForm::ReduceScatter;
  const index_t right = split ? s.k - s.k / 2 : 0;  // the second half of k travels right
  Bytes want;
  if (rc.form == RingForm::AllGatherA)
    want = ring_bytes(rc.form, logical(mesh, s.m, s.k, a).map(0), s.k, me, right);
  else if (rc.form == RingForm::AllGatherB)
    want = ring_bytes(rc.form, logical(mesh, s.k, s.n, b).map(1), s.k, me, right);
  else {  // C's blocks by rows or, when its rows are whole, by columns
    const Layout LC = logical(mesh, s.m, s.n, c);
    const int cd = LC.map(0).nprocs > 1 ? 0 : 1;
    want = ring_bytes(rc.form, LC.map(cd), cd == 0 ? s.n : s.m, me, 0);
  }
  expect_bytes<T>(r, want, what);
}

TYPED_TEST(RingTraffic, RingForms) {
  const Shape shapes[] = {{23, 19, 31}, {5, 2, 7}};
  const std::pair<Op, Op> ops[] = {{Op::N, Op::N}, {Op::C, Op::T}};
  const Mesh line = Mesh::line(MPI_COMM_WORLD, "x");
  const auto meshes = grids();
  std::size_t i = 0;  // on more than 2 ranks each case runs in one of the types (type_takes_case)
  for (const auto& rc : kRingCases)
    for (const auto& [opA, opB] : ops)
      for (const Shape& s : shapes)
        for (bool bidir : {false, true}) {
          if (!type_takes_case<TypeParam>(i++)) continue;
          ring_case<TypeParam>(line, "X", rc, opA, opB, s, bidir);
          for (const Mesh& mesh : meshes)  // the other axis replicates: one ring per slice
            for (const char* axis : {"X", "Y"})
              ring_case<TypeParam>(mesh, axis, rc, opA, opB, s, bidir);
        }
}

// At p = 2 an AllGather form takes the other operand split along k as it is (no
// redistribution): besides the circulating tiles, each rank sends its k indices of the
// peer's C columns (AG-A; rows for AG-B) and receives the peer's k indices of its own.
TYPED_TEST(RingTraffic, RingStreamsSplitOperand) {
  struct Streamed {
    RingForm form;
    const char *a, *b, *c;
  };
  const Streamed cases[] = {
      {RingForm::AllGatherA, "A[I_@:bc2+%,K]", "B[K_@:bc3+%,J]", "C[I,J_@:bc2+0]"},
      {RingForm::AllGatherB, "A[I,K_@:bc3+0]", "B[K,J_@:bc2+%]", "C[I_@:bc1+%,J]"},
  };
  const Shape shapes[] = {{23, 19, 31}, {5, 2, 7}, {4, 6, 1}};
  std::vector<Mesh> meshes = grids();
  meshes.push_back(Mesh::line(MPI_COMM_WORLD, "x"));
  if (std::none_of(meshes.begin(), meshes.end(), [](const Mesh& m) {
        return std::count(m.shape().sizes.begin(), m.shape().sizes.end(), 2) > 0;
      }))
    GTEST_SKIP() << "no mesh axis of 2 ranks at " << world_size() << " ranks";
  for (const Mesh& mesh : meshes)
    for (const std::string X : {"X", "Y"}) {
      if (X == "Y" && mesh.shape().ndims() == 1) continue;
      if (mesh.axis_size(X) != 2) continue;
      for (const Streamed& sc : cases)
        for (const auto& [opA, opB] : {std::pair{Op::N, Op::N}, std::pair{Op::C, Op::T}})
          for (const Shape& s : shapes) {
            const std::string a = on_axis(sc.a, X, 2), b = on_axis(sc.b, X, 2),
                              c = on_axis(sc.c, X, 2);
            Options o;
            o.algorithm = Algorithm::Ring;
            o.ring_form = sc.form;
            if (mesh.shape().ndims() > 1) o.ring_axis = X;
            std::string what = describe("streamed ring over " + X, mesh, opA, opB, s);
            for (const std::string* layout : {&a, &b, &c}) (what += ' ') += *layout;
            const auto r = run<TypeParam>(mesh, opA, opB, s, a, b, c, o, what);
            const int me = mesh.coord(X), peer = 1 - me;
            const bool ag_a = sc.form == RingForm::AllGatherA;
            const DimMap kmap =
                ag_a ? logical(mesh, s.k, s.n, b).map(0) : logical(mesh, s.m, s.k, a).map(1);
            const DimMap cmap = logical(mesh, s.m, s.n, c).map(ag_a ? 1 : 0);
            Bytes want = ag_a ? ring_bytes(sc.form, logical(mesh, s.m, s.k, a).map(0), s.k, me, 0)
                              : ring_bytes(sc.form, logical(mesh, s.k, s.n, b).map(1), s.k, me, 0);
            want.sent += kmap.local_extent(me) * cmap.local_extent(peer);
            want.received += kmap.local_extent(peer) * cmap.local_extent(me);
            expect_bytes<TypeParam>(r, want, what);
            EXPECT_NE(r.to_string().find("streamed"), std::string::npos) << what << "\n"
                                                                         << r.to_string();
          }
    }
}

}  // namespace
