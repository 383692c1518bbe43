// redistribute: any layout -> any layout over the same ranks, as the one collective the pair
// of layouts calls for (matrix/redistribute_plan.hpp says which and on which ranks):
// Local (a copy or a slice, no communication), AllGather, Permute (redistribute_patterns.cpp),
// ReduceScatter, AllReduce (redistribute_reduce.cpp), or the exchange below (AllToAll and
// everything else) on the sub-communicator of the exchange axes.
//
// The exchange: element e goes from one source rank to every destination rank of the group
// that owns it. The source for destination d is the holder of e whose coordinates on the
// source layout's replica axes equal d's own coordinates there (so a rank that already holds
// e copies it locally, and replicated sources share the sending). Along unreduced source axes
// every holder sends its partial sum and the receiver adds them up in group order
// (deterministic). Both layouts are products of per-dimension maps, so the elements of the
// pair (s, d) are rows(s, d) x cols(s, d): runs of local indices on both sides, packed and
// placed column by column. Communication: one comm::alltoallv over the group's communicator.
#include "shardmm/redistribute.hpp"

#include <algorithm>
#include <optional>

#include "comm/exchange.hpp"
#include "comm/mpi_check.hpp"
#include "comm/traffic.hpp"
#include "comm/wait.hpp"
#include "comm/wire.hpp"
#include "core/instantiate.hpp"
#include "matrix/redistribute_detail.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"
#include "trace/call.hpp"

namespace shardmm {
namespace {

using matrix::Pattern;
using matrix::RedistPlan;
using matrix::detail::Block;
using matrix::detail::Move;

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

void validate(const Mesh& src_mesh, const Layout& src_layout, const Mesh& dst_mesh,
              const Layout& dst_layout) {
  if (src_layout.rows() != dst_layout.rows() || src_layout.cols() != dst_layout.cols())
    throw DimensionMismatch("redistribute: source " + src_layout.to_string() + " and destination " +
                            dst_layout.to_string() + " have different shapes");
  if (src_mesh.shape().size() != dst_mesh.shape().size())
    throw InvalidArgument("redistribute: meshes " + src_mesh.shape().to_string() + " and " +
                          dst_mesh.shape().to_string() + " have different sizes");
  if (!src_mesh.active() || !dst_mesh.active()) return;
  int cmp = MPI_UNEQUAL;
  SHARDMM_MPI(MPI_Comm_compare(src_mesh.comm(), dst_mesh.comm(), &cmp));
  if (cmp != MPI_IDENT && cmp != MPI_CONGRUENT)
    throw InvalidArgument(
        "redistribute: source and destination meshes are on different communicators");
}

// Group member `to` receives from the source cell of member `from`: the destination holds
// the value (not a zero partial along an axis where only it is unreduced) and `from` is the
// holder designated for it (same coordinates on the source's replica axes).
template <Scalar T>
bool receives(const Move<T>& m, int to) {
  const Layout& Ls = m.src.layout();
  const auto d = m.dst_coords(to);
  for (int a : m.dst.layout().unreduced_axes())
    if ((m.plan.across_meshes || !contains(Ls.unreduced_axes(), a)) && d[a] != 0) return false;
  return true;
}
template <Scalar T>
bool designated(const Move<T>& m, int from, int to) {
  const auto s = m.src_coords(from), d = m.src_coords(to);
  const auto replicas = m.src.layout().replica_axes();
  return std::all_of(replicas.begin(), replicas.end(), [&](int a) { return s[a] == d[a]; });
}

// Offset of a block that is one contiguous stretch of a column-major tile (a run of whole
// columns, or a part of one column) on its source side (`from`) or destination side; -1 when
// it is not.
index_t stretch(const Block& b, bool from, index_t ld, index_t rows) {
  if (b.size() == 0) return 0;
  if (b.rows.size() != 1 || b.cols.size() != 1) return -1;
  if (b.ncols > 1 && (b.nrows != rows || ld != rows)) return -1;
  return (from ? b.rows[0].from : b.rows[0].to) + (from ? b.cols[0].from : b.cols[0].to) * ld;
}

// Zero copy: when every block this rank sends (receives) is one stretch of its source
// (destination) tile, the exchange reads (writes) the tiles in place, displacements being
// the blocks' offsets, and needs no Pack (Unpack) buffer. Received pieces go in place only
// when they are assigned as they are (beta = 0, alpha = 1, no partial sums).
template <Scalar T>
bool in_place(const std::vector<Block>& blocks, const std::vector<std::int64_t>& counts, bool from,
              const DistMatrix<T>& X, std::vector<std::int64_t>& displs) {
  std::vector<std::int64_t> at(blocks.size(), 0);
  for (std::size_t v = 0; v < blocks.size(); ++v) {
    if (counts[v] == 0) continue;
    const index_t off = stretch(blocks[v], from, X.ld(), X.local_rows());
    if (off < 0) return false;
    at[v] = off;
  }
  displs = std::move(at);
  return true;
}

// The exchange (AllToAll, General): per member the block to send and the block to receive,
// one alltoallv, then the pieces placed (assigned, or summed in group order).
template <Scalar T>
std::int64_t exchange(const Move<T>& m) {
  const Layout& Ls = m.src.layout();
  const Layout& Ld = m.dst.layout();
  const int g = static_cast<int>(m.members.size());
  std::vector<Block> out(g), in(g);
  std::vector<char> from(g, 0);
  std::vector<std::int64_t> sc(g, 0), sd(g, 0), rc(g, 0), rd(g, 0);
  std::int64_t send_total = 0, recv_total = 0;
  const bool i_receive = receives(m, m.me);
  for (int v = 0; v < g; ++v) {
    if (v != m.me && receives(m, v) && designated(m, m.me, v)) {
      out[v] = matrix::detail::overlap(Ls, m.src_coords(m.me), Ld, m.dst_coords(v));
      sc[v] = out[v].size();
    }
    from[v] = i_receive && designated(m, v, m.me);
    if (from[v]) in[v] = matrix::detail::overlap(Ls, m.src_coords(v), Ld, m.dst_coords(m.me));
    if (from[v] && v != m.me) rc[v] = in[v].size();  // my own part is copied locally
    sd[v] = send_total, rd[v] = recv_total;
    send_total += sc[v], recv_total += rc[v];
  }
  // Without partial sums on either side every element of my tile comes from exactly one
  // source, so with beta = 0 the pieces are assigned instead of added onto a zeroed tile.
  const bool assign = m.beta == T(0) && !Ls.is_unreduced() && !Ld.is_unreduced();
  const bool send_direct = in_place(out, sc, true, m.src, sd);
  const bool recv_direct = assign && m.alpha == T(1) && in_place(in, rc, false, m.dst, rd);
  const T* sendbuf = m.src.data();
  T* recvbuf = recv_direct ? m.dst.data() : nullptr;
  matrix::detail::prepare(m, [&] {
    if (!recv_direct) recvbuf = memory::get<T>(memory::Slot::Unpack, recv_total);
    if (send_direct) return;
    T* packed = memory::get<T>(memory::Slot::Pack, send_total);
    for (int v = 0; v < g; ++v)
      if (sc[v] > 0) matrix::detail::pack(m.src.data(), m.src.ld(), out[v], packed + sd[v]);
    sendbuf = packed;
  });
  comm::alltoallv(m.comm, sendbuf, sc, sd, recvbuf, rc, rd);
  if (!assign) matrix::detail::scale_tile(m.dst, m.beta);
  for (int v = 0; v < g; ++v) {
    if (!from[v] || (recv_direct && v != m.me)) continue;
    const T* src = v == m.me ? m.src.data() : recvbuf + rd[v];
    matrix::detail::place(src, v == m.me ? m.src.ld() : 0, in[v], m.dst.data(), m.dst.ld(), m.alpha,
                          T(0), !assign);
  }
  return from[m.me] ? in[m.me].size() : 0;
}

// The group of this rank along the plan's exchange axes and its communicator.
template <Scalar T>
void join_group(const DistMatrix<T>& src, Move<T>& m) {
  const Mesh& mesh = src.mesh();
  if (m.plan.across_meshes) {
    for (int r = 0; r < mesh.size(); ++r) m.members.push_back(r);
    m.me = mesh.rank();
    m.comm = mesh.comm();
    return;
  }
  const MeshShape& shape = src.layout().mesh();
  m.members = matrix::group_members(shape, mesh.coords(), m.plan.axes);
  m.me = static_cast<int>(std::find(m.members.begin(), m.members.end(), mesh.rank()) -
                          m.members.begin());
  std::vector<std::string> names;
  names.reserve(m.plan.axes.size());
  for (int a : m.plan.axes) names.push_back(shape.names[a]);
  m.comm = mesh.axis_comm(names);
}

template <Scalar T>
std::int64_t run(const Move<T>& m) {
  switch (m.plan.pattern) {
    case Pattern::AllGather: return matrix::detail::all_gather(m);
    case Pattern::Permute: return matrix::detail::permute(m);
    case Pattern::ReduceScatter: return matrix::detail::reduce_scatter(m);
    case Pattern::AllReduce: return matrix::detail::all_reduce(m);
    default: return exchange(m);
  }
}

}  // namespace

template <Scalar T>
RedistStats redistribute(const DistMatrix<T>& src, DistMatrix<T>& dst, T alpha, T beta) {
  validate(src.mesh(), src.layout(), dst.mesh(), dst.layout());
  RedistStats stats;
  if (!src.mesh().active()) return stats;
  const comm::WaitScope waiting;                        // SHARDMM_WAIT; inside gemm: gemm's mode
  trace::Call call(src.mesh().comm(), "redistribute");  // inside gemm: one of its phases
  if (call.span())
    call.span().text("from", src.layout().to_string()).text("to", dst.layout().to_string());
  const RedistPlan plan = matrix::plan_redistribution(src.layout(), dst.layout());
  if (call.span()) call.span().text("pattern", to_string(plan.pattern));
  Move<T> m{src, dst, alpha, beta, plan, {}, 0, MPI_COMM_NULL};
  if (plan.pattern == Pattern::Local) {  // no communication, so no synchronisation either
    stats.elements_copied_locally = matrix::detail::local_copy(m);
    return stats;
  }
  join_group(src, m);
  // Values move as stored, except operands inside gemm under a 16-bit wire (comm/wire.hpp).
  // Partial sums (an unreduced source) always move as stored.
  const bool narrowed = comm::OperandMoves::open() && src.layout().unreduced_axes().empty();
  const comm::WireScope values(narrowed ? comm::wire() : Wire::F32);
  const comm::Traffic before = comm::traffic();
  stats.elements_copied_locally = run(m);
  const comm::Traffic moved = comm::traffic() - before;
  if (comm::RedistributionRole::layout_change()) comm::redistribution_traffic() += moved;
  stats.bytes_sent = moved.bytes_sent;
  stats.bytes_received = moved.bytes_received;
  stats.messages_sent = moved.messages;
  if (call.span())  // the exchanges' spans below carry the same bytes, one by one
    call.span()
        .arg("total_bytes_sent", stats.bytes_sent)
        .arg("total_bytes_received", stats.bytes_received);
  return stats;
}

template <Scalar T>
DistMatrix<T> redistribute(const DistMatrix<T>& src, const Layout& layout, RedistStats* stats) {
  std::optional<DistMatrix<T>> dst;  // allocated on every rank before anything moves
  const comm::WaitScope waiting;     // SHARDMM_WAIT
  std::optional<trace::Call> call;   // watched from the first agreement on
  if (src.mesh().active()) {
    call.emplace(src.mesh().comm(), "redistribute");
    comm::agreed(src.mesh().comm(), "redistribute", [&] { dst.emplace(src.mesh(), layout); });
  } else {
    dst.emplace(src.mesh(), layout);
  }
  const RedistStats s = redistribute(src, *dst, T(1), T(0));
  if (stats) *stats = s;
  if (call) call->done();
  return std::move(*dst);
}

#define SHARDMM_INSTANTIATE(T)                                                      \
  template RedistStats redistribute<T>(const DistMatrix<T>&, DistMatrix<T>&, T, T); \
  template DistMatrix<T> redistribute<T>(const DistMatrix<T>&, const Layout&, RedistStats*);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
SHARDMM_FOR_EACH_HALF(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm
