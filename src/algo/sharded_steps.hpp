// Steps of the sharding-rule matmul (sharded.cpp): operands as pieces of their tile (a slice is
// a piece of the caller's tile, a gathered operand the pieces the group sent, unplaced), the
// local product over pieces, the gathers (all at once, or streamed around the group's ring
// past the product), and the product's reduction into C (a ReduceScatter fused with the
// product block by block, or an AllReduce in place). Private to the sharded_*.cpp files.
#pragma once

#include <mpi.h>

#include <set>
#include <utility>
#include <vector>

#include "algo/algo.hpp"
#include "comm/collectives.hpp"
#include "matrix/redistribute_plan.hpp"
#include "memory/workspace.hpp"

namespace shardmm::algo::sharded {

/// A rectangle of an operand's local tile in the layout it is multiplied in: rows [r0, r1) x
/// columns [c0, c1) of that layout's local indices, element (r0, c0) at `data`, columns `ld`
/// apart.
template <class T>
struct Piece {
  index_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  const T* data = nullptr;
  index_t ld = 1;
};
template <class T>
using Pieces = std::vector<Piece<T>>;

/// The whole local tile of X as one piece.
template <Scalar T>
Piece<T> whole(const DistMatrix<T>& X) {
  return {0, X.local_rows(), 0, X.local_cols(), X.data(), X.ld()};
}

/// Output blocks (first row, first column) already written: later contributions add.
using Started = std::set<std::pair<index_t, index_t>>;

/// out <- alpha * op(A) op(B) (+ beta * out where a block is written first) over the region
/// rows [i0, i1) x columns [j0, j1) of the product's local indices, `out` holding element
/// (i0, j0) with leading dimension ld. op(A)'s pieces give its rows and k, op(B)'s its k and
/// columns (both in the same local k indices); every pair whose k ranges meet is one GEMM.
template <Scalar T>
void multiply(Op opA, Op opB, T alpha, const Pieces<T>& A, const Pieces<T>& B, T beta, index_t i0,
              index_t i1, index_t j0, index_t j1, T* out, index_t ld, Started& started);

/// The group of this rank along `axes` of X's mesh, its communicator and its place in it.
struct Group {
  std::vector<int> members;  // mesh ranks, group order
  int me = 0;
  MPI_Comm comm = MPI_COMM_NULL;
};
Group group_of(const Mesh& mesh, const std::vector<int>& axes);

/// The rectangle member v's source tile (layout `from`) covers of this rank's tile in `to`
/// (an AllGather: one run per dimension); false when it is not one rectangle.
bool rectangle(const Layout& from, const std::vector<int>& v_coords, const Layout& to,
               const std::vector<int>& my_coords, Piece<char>& at);

/// Whether every rank's pieces of the redistribution from -> to over `axes` (what each member
/// of its group holds of its tile) are rectangles: the same answer on every rank, so every
/// rank takes the same path.
bool rectangles_everywhere(const Layout& from, const Layout& to, const std::vector<int>& axes);

/// The most elements any rank holds of L's tile (the same on every rank).
double largest_tile(const Layout& L);

/// An AllGather of X into layout `to` whose pieces are rectangles, ready to run: the pieces'
/// places, sizes and this rank's own piece.
template <class T>
struct Gather {
  Group group;
  Pieces<T> at;  // per member: its rectangle in `to` (data unset)
  std::vector<std::int64_t> counts, displs;
  std::int64_t widest = 0, total = 0;
  const T* own = nullptr;  // this rank's piece packed (ld = its rows); null: pack it first
};
template <Scalar T>
bool plan_gather(const DistMatrix<T>& X, const Layout& to, const matrix::RedistPlan& plan,
                 Gather<T>& g);

/// The whole gather into `buf` (Gather::total elements): the pieces, unplaced.
template <Scalar T>
Pieces<T> gather_all(const DistMatrix<T>& X, const Layout& to, Gather<T>& g, T* buf);

/// This rank's own piece, packed into `buf` unless it is X's whole tile stored contiguously.
template <Scalar T>
const T* own_piece(const DistMatrix<T>& X, const Layout& to, T* buf);

/// Streams the gather around the group's ring: at step s this rank holds member (me - s)'s
/// piece, sends it on to me + 1 (the last step excepted) while `use(piece)` multiplies it,
/// and receives the next from me - 1. `buf` holds two pieces (2 x Gather::widest); the own
/// piece comes from own_piece (into buf). Words: the other members' pieces, as the AllGather.
template <Scalar T, class Use>
void stream(const DistMatrix<T>& X, const Layout& to, Gather<T>& g, T* buf, Timers& t, Use&& use) {
  const int n = static_cast<int>(g.group.members.size()), me = g.group.me;
  T* slot[2] = {buf, buf + g.widest};
  const T* held = own_piece(X, to, slot[0]);
  constexpr int kTag = 43;
  for (int s = 0; s < n; ++s) {
    const int v = (me - s + n) % n, next = (me - s - 1 + n) % n;
    comm::Requests q;
    if (s + 1 < n) {
      comm::irecv(slot[(s + 1) % 2], g.counts[static_cast<std::size_t>(next)], (me + n - 1) % n,
                  kTag, g.group.comm, q);
      comm::isend(held, g.counts[static_cast<std::size_t>(v)], (me + 1) % n, kTag, g.group.comm, q);
    }
    Piece<T> p = g.at[static_cast<std::size_t>(v)];
    p.data = held;
    p.ld = std::max<index_t>(p.r1 - p.r0, 1);
    {
      const Polling polling(X.mesh(), true, {&q});  // the next piece moves meanwhile
      use(p);
    }
    t.timed(&Timers::comm, [&] { q.wait(); });
    held = slot[(s + 1) % 2];
  }
}

}  // namespace shardmm::algo::sharded
