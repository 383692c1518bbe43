// Batched redistribution: any batch cut and slice layout to any other on the same mesh, as
// one exchange over the whole mesh (one comm::alltoallv).
//
// Batch element b sits, in the source, on the ranks whose coordinate along the source's batch
// axes owns b (its source group: a whole copy of the source's slice mesh), and is wanted by the
// ranks of its destination group (the destination's batch owner of b), each for its tile of the
// destination's slice layout. The designated sender of an element for destination rank r is
// the holder in b's source group whose coordinates on the source slice layout's replica axes
// equal r's own (as the 2-D exchange designates, redistribute.cpp), so replicated sources
// share the sending and a rank that already holds an element copies it locally. The elements
// a source rank s sends a destination rank r for b are the overlap of s's source tile and r's
// destination tile (matrix::detail::overlap: rows x cols, runs of local indices on both
// sides). Each pair packs its pieces batch element by batch element in increasing global
// batch order, which both sides enumerate alike.
//
// Words: every rank receives its destination tiles less what it already holds (each element
// once, from one sender): the minimum for one exchange round. Nothing moves when the two
// layouts agree.
#include <optional>

#include "comm/agree.hpp"
#include "comm/exchange.hpp"
#include "comm/traffic.hpp"
#include "comm/wire.hpp"
#include "core/instantiate.hpp"
#include "matrix/redistribute_detail.hpp"
#include "memory/workspace.hpp"
#include "shardmm/batched.hpp"
#include "shardmm/error.hpp"
#include "trace/call.hpp"

namespace shardmm {
namespace {

using matrix::detail::Block;

/// One piece of a pair's message: batch element b_loc (local on this side) and its block.
struct BatchPiece {
  index_t b_loc = 0;
  int peer = 0;
  Block block;
  std::int64_t at = 0;  // offset in the packed send or receive buffer
};

/// Both layouts' index math for one rank pair.
struct BatchPair {
  const BatchedLayout& src;
  const BatchedLayout& dst;
  std::vector<int> replicas;  // full-mesh indices of the source slice layout's replica axes

  BatchPair(const BatchedLayout& s, const BatchedLayout& d) : src(s), dst(d) {
    const auto names = src.slice_axes();
    for (int a : src.slice().replica_axes())
      if (a < static_cast<int>(names.size())) replicas.push_back(src.mesh().axis_index(names[a]));
  }
  /// `from` (mesh coordinates) sends batch element b to `to`: it holds b in the source and
  /// is designated for `to` (same coordinates on the source slice's replica axes).
  [[nodiscard]] bool designated(const std::vector<int>& from, const std::vector<int>& to,
                                index_t b) const {
    if (src.batch_coord(from) != src.batch_map().owner(b)) return false;
    for (int a : replicas)
      if (from[a] != to[a]) return false;
    return true;
  }
  [[nodiscard]] bool wants(const std::vector<int>& to, index_t b) const {
    return dst.batch_coord(to) == dst.batch_map().owner(b);
  }
  [[nodiscard]] Block overlap(const std::vector<int>& from, const std::vector<int>& to) const {
    return matrix::detail::overlap(src.slice(), src.slice_coords(from), dst.slice(),
                                   dst.slice_coords(to));
  }
};

/// The pieces this rank sends (outgoing) or receives (incoming, its own included: peer ==
/// this rank means a local copy), per peer in increasing global batch order.
struct BatchExchange {
  std::vector<BatchPiece> out, in;
  std::vector<std::int64_t> sc, sd, rc, rd;
  std::int64_t send_total = 0, recv_total = 0;
};

template <Scalar T>
BatchExchange plan_batched_exchange(const BatchedMatrix<T>& src, const BatchedMatrix<T>& dst) {
  const BatchPair pair(src.layout(), dst.layout());
  const MeshShape& shape = src.layout().mesh();
  const int P = shape.size(), me = src.mesh().rank();
  const auto mine = src.mesh().coords();
  BatchExchange x;
  for (auto* v : {&x.sc, &x.sd, &x.rc, &x.rd}) v->assign(P, 0);
  std::vector<std::vector<BatchPiece>> out(P), in(P);
  for (index_t b_loc = 0; b_loc < src.local_batch(); ++b_loc) {
    const index_t b = src.global_batch(b_loc);
    for (int r = 0; r < P; ++r) {
      const auto to = shape.coords_of(r);
      if (r == me || !pair.wants(to, b) || !pair.designated(mine, to, b)) continue;
      Block block = pair.overlap(mine, to);
      if (block.size() > 0) out[r].push_back({b_loc, r, std::move(block), 0});
    }
  }
  for (index_t b_loc = 0; b_loc < dst.local_batch(); ++b_loc) {
    const index_t b = dst.global_batch(b_loc);
    for (int s = 0; s < P; ++s) {
      const auto from = shape.coords_of(s);
      if (!pair.designated(from, mine, b)) continue;
      Block block = pair.overlap(from, mine);
      if (block.size() > 0) in[s].push_back({b_loc, s, std::move(block), 0});
    }
  }
  for (int r = 0; r < P; ++r) {  // per peer, its pieces back to back
    x.sd[r] = x.send_total;
    x.rd[r] = x.recv_total;
    for (BatchPiece& p : out[r]) {
      p.at = x.send_total;
      x.send_total += p.block.size();
      x.out.push_back(std::move(p));
    }
    for (BatchPiece& p : in[r]) {
      p.at = r == me ? 0 : x.recv_total;
      if (r != me) x.recv_total += p.block.size();
      x.in.push_back(std::move(p));
    }
    x.sc[r] = x.send_total - x.sd[r];
    x.rc[r] = x.recv_total - x.rd[r];
  }
  return x;
}

/// Every rank alike, from global metadata only: throws before anything moves.
template <Scalar T>
void check_batched_pair(const BatchedMatrix<T>& src, const BatchedMatrix<T>& dst) {
  if (!src.mesh().same_as(dst.mesh()))
    throw InvalidArgument("redistribute: source " + src.layout().to_string() + " and destination " +
                          dst.layout().to_string() +
                          " are not on one mesh (make both on the same Mesh object)");
  if (src.batch() != dst.batch() || src.rows() != dst.rows() || src.cols() != dst.cols())
    throw DimensionMismatch("redistribute: source " + src.layout().to_string() +
                            " and destination " + dst.layout().to_string() +
                            " differ in batch size or element shape");
}

/// Packs, exchanges over the whole mesh and places; own pieces are copied locally.
template <Scalar T>
std::int64_t run_batched_exchange(const BatchExchange& x, const BatchedMatrix<T>& src,
                                  BatchedMatrix<T>& dst) {
  T* send = nullptr;
  T* recv = nullptr;
  comm::agreed(src.mesh().comm(), "batched redistribute", [&] {
    send = memory::get<T>(memory::Slot::Pack, x.send_total);
    recv = memory::get<T>(memory::Slot::Unpack, x.recv_total);
  });
  for (const BatchPiece& p : x.out)
    matrix::detail::pack(src.data() + p.b_loc * src.stride(), src.ld(), p.block, send + p.at);
  comm::alltoallv(src.mesh().comm(), send, x.sc, x.sd, recv, x.rc, x.rd);
  const int me = src.mesh().rank();
  std::int64_t copied = 0;
  for (const BatchPiece& p : x.in) {
    T* tile = dst.data() + p.b_loc * dst.stride();
    if (p.peer != me) {
      matrix::detail::place(recv + p.at, 0, p.block, tile, dst.ld(), T(1), T(0));
      continue;
    }
    // my own element: from my source tile of the same global batch element
    const index_t b_src = src.layout().batch_map().to_local(dst.global_batch(p.b_loc));
    matrix::detail::place(src.data() + b_src * src.stride(), src.ld(), p.block, tile, dst.ld(),
                          T(1), T(0));
    copied += p.block.size();
  }
  return copied;
}

}  // namespace

template <Scalar T>
RedistStats redistribute(const BatchedMatrix<T>& src, BatchedMatrix<T>& dst) {
  check_batched_pair(src, dst);
  RedistStats stats;
  if (!src.mesh().active()) return stats;
  trace::Call call(src.mesh().comm(), "batched redistribute");
  if (call.span())
    call.span().text("from", src.layout().to_string()).text("to", dst.layout().to_string());
  const BatchExchange x = plan_batched_exchange(src, dst);
  // Values move as stored, except operands inside gemm_batched under a 16-bit wire.
  const comm::WireScope values(comm::OperandMoves::open() ? comm::wire() : Wire::F32);
  const comm::Traffic before = comm::traffic();
  stats.elements_copied_locally = run_batched_exchange(x, src, dst);
  const comm::Traffic moved = comm::traffic() - before;
  if (comm::RedistributionRole::layout_change()) comm::redistribution_traffic() += moved;
  stats.bytes_sent = moved.bytes_sent;
  stats.bytes_received = moved.bytes_received;
  stats.messages_sent = moved.messages;
  call.done();
  return stats;
}

#define SHARDMM_INSTANTIATE_BATCHED_REDIST(T) \
  template RedistStats redistribute<T>(const BatchedMatrix<T>&, BatchedMatrix<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE_BATCHED_REDIST)
SHARDMM_FOR_EACH_HALF(SHARDMM_INSTANTIATE_BATCHED_REDIST)
#undef SHARDMM_INSTANTIATE_BATCHED_REDIST

}  // namespace shardmm
