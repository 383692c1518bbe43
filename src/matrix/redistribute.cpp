// redistribute: any layout -> any layout over the same ranks, in one exchange round.
//
// What moves: element e goes from one source rank to every destination rank that owns it.
// The source for destination d is the holder of e whose coordinates on the source layout's
// replica axes equal d's own coordinates there (so a rank that already holds e copies it
// locally, and replicated sources share the sending). Along unreduced source axes every
// holder sends its partial sum and the receiver adds them up in rank order (deterministic).
// Both layouts are products of per-dimension maps, so the elements of the pair (s, d) are
// rows(s_row, d_row) x cols(s_col, d_col): each side lists them per peer from its own local
// indices in O(local rows + local cols), then packs / unpacks column by column.
// Communication: one comm::alltoallv on the source mesh's communicator.
#include "shardmm/redistribute.hpp"

#include <algorithm>
#include <optional>

#include "comm/agree.hpp"
#include "comm/exchange.hpp"
#include "comm/mpi_check.hpp"
#include "comm/traffic.hpp"
#include "core/fault.hpp"
#include "core/instantiate.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"
#include "trace/call.hpp"

namespace shardmm {
namespace {

using Buckets = std::vector<std::vector<index_t>>;  // per peer coordinate: local indices

// My local indices along `dim` of layout `mine`, grouped by their owner coordinate in `other`.
Buckets bucket(const Layout& mine, int my_coord, const Layout& other, int dim) {
  const DimMap& a = mine.map(dim);
  const DimMap& b = other.map(dim);
  Buckets out(static_cast<std::size_t>(b.nprocs));
  const index_t n = a.local_extent(my_coord);
  for (index_t i = 0; i < n; ++i) out[b.owner(a.to_global(i, my_coord))].push_back(i);
  return out;
}

// Stretches where two index lists (nullptr: 0, 1, 2, ... a packed buffer) both step by one:
// each is one block copy per column.
struct Run {
  index_t to = 0, from = 0, len = 0;
};
std::vector<Run> runs(const std::vector<index_t>* to, const std::vector<index_t>* from,
                      std::size_t n) {
  auto at = [](const std::vector<index_t>* v, std::size_t i) {
    return v ? (*v)[i] : static_cast<index_t>(i);
  };
  std::vector<Run> out;
  for (std::size_t i = 0; i < n; ++i) {
    const index_t t = at(to, i), f = at(from, i);
    if (!out.empty() && out.back().to + out.back().len == t &&
        out.back().from + out.back().len == f)
      ++out.back().len;
    else out.push_back({t, f, 1});
  }
  return out;
}

// to[r.to ..] = (or +=) alpha * from[r.from ..] over the runs of one column.
template <Scalar T>
void copy_runs(T* to, const T* from, const std::vector<Run>& rs, T alpha, bool assign) {
  for (const Run& r : rs) {
    if (assign && alpha == T(1)) {
      std::copy_n(from + r.from, r.len, to + r.to);
      continue;
    }
    for (index_t i = 0; i < r.len; ++i)
      to[r.to + i] = (assign ? T(0) : to[r.to + i]) + alpha * from[r.from + i];
  }
}

// True when the source cell `s` sends to the destination rank with source-mesh coords `d`.
bool designated(const Layout& src, const std::vector<int>& s, const std::vector<int>& d) {
  for (int a : src.replica_axes())
    if (s[a] != d[a]) return false;
  return true;
}

// Destination cells with a non-zero coordinate on an unreduced axis receive nothing.
bool receives(const Layout& dst, const std::vector<int>& d) {
  for (int a : dst.unreduced_axes())
    if (d[a] != 0) return false;
  return true;
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

// Same distribution on the same mesh (no partial sums): every element stays where it is (no
// communication, so no synchronisation either); dst = alpha * src + beta * dst tile by tile.
template <Scalar T>
RedistStats copy_in_place(const DistMatrix<T>& src, DistMatrix<T>& dst, T alpha, T beta) {
  for (index_t j = 0; j < dst.local_cols(); ++j)
    for (index_t i = 0; i < dst.local_rows(); ++i)
      dst.local(i, j) = alpha * src.local(i, j) + (beta == T(0) ? T(0) : beta * dst.local(i, j));
  RedistStats stats;
  stats.elements_copied_locally = dst.local_rows() * dst.local_cols();
  return stats;
}

// One exchange: per-peer index lists on both sides, counts and displacements, the packed
// send buffer and the receive buffer (workspace slots Pack / Unpack: reused across calls, so
// a repeated redistribution first-touches no fresh pages).
template <Scalar T>
struct Exchange {
  Buckets send_rows, send_cols, recv_rows, recv_cols;
  std::vector<std::int64_t> sc, sd, rc, rd;
  std::vector<char> recv_from;
  T* sendbuf = nullptr;
  T* recvbuf = nullptr;
};

// Rank-local half of the exchange: index lists, counts, packing (for each destination, my
// local rows x cols it owns, column by column) and the receive buffer. No communication.
template <Scalar T>
void prepare(const DistMatrix<T>& src, const DistMatrix<T>& dst, Exchange<T>& x) {
  const Layout& Ls = src.layout();
  const Layout& Ld = dst.layout();
  const MeshShape& Ms = Ls.mesh();
  const MeshShape& Md = Ld.mesh();
  const int P = Ms.size(), me = src.mesh().rank();
  const auto& cs_me = src.mesh().coords();  // my coords on the source mesh
  const auto& cd_me = dst.mesh().coords();  // ... and on the destination mesh
  x.send_rows = bucket(Ls, Ls.dim_coord(0, cs_me), Ld, 0);
  x.send_cols = bucket(Ls, Ls.dim_coord(1, cs_me), Ld, 1);
  x.recv_rows = bucket(Ld, Ld.dim_coord(0, cd_me), Ls, 0);
  x.recv_cols = bucket(Ld, Ld.dim_coord(1, cd_me), Ls, 1);
  x.sc.assign(P, 0), x.sd.assign(P, 0), x.rc.assign(P, 0), x.rd.assign(P, 0);
  x.recv_from.assign(P, 0);
  std::int64_t send_total = 0, recv_total = 0;
  const bool i_receive = receives(Ld, cd_me);
  for (int r = 0; r < P; ++r) {
    const auto cs_r = Ms.coords_of(r), cd_r = Md.coords_of(r);
    x.recv_from[r] = i_receive && designated(Ls, cs_r, cs_me);
    if (r != me && receives(Ld, cd_r) && designated(Ls, cs_me, cs_r))
      x.sc[r] = static_cast<std::int64_t>(x.send_rows[Ld.dim_coord(0, cd_r)].size() *
                                          x.send_cols[Ld.dim_coord(1, cd_r)].size());
    if (r != me && x.recv_from[r])  // my own part is copied locally in unpack()
      x.rc[r] = static_cast<std::int64_t>(x.recv_rows[Ls.dim_coord(0, cs_r)].size() *
                                          x.recv_cols[Ls.dim_coord(1, cs_r)].size());
    x.sd[r] = send_total, x.rd[r] = recv_total;
    send_total += x.sc[r], recv_total += x.rc[r];
  }
  x.sendbuf = memory::get<T>(memory::Slot::Pack, send_total);
  x.recvbuf = memory::get<T>(memory::Slot::Unpack, recv_total);
  for (int r = 0; r < P; ++r) {
    if (x.sc[r] == 0) continue;
    const auto cd_r = Md.coords_of(r);
    const auto& rows = x.send_rows[Ld.dim_coord(0, cd_r)];
    T* out = x.sendbuf + x.sd[r];
    const auto rs = runs(nullptr, &rows, rows.size());
    for (index_t j : x.send_cols[Ld.dim_coord(1, cd_r)]) {
      copy_runs(out, &src.local(0, j), rs, T(1), true);
      out += rows.size();
    }
  }
}

// dst = beta * dst + alpha * (sum of contributions), sources in rank order; my own part comes
// straight from my source tile, walked with the sender's index lists.
template <Scalar T>
std::int64_t unpack(const DistMatrix<T>& src, DistMatrix<T>& dst, T alpha, T beta,
                    const Exchange<T>& x) {
  const Layout& Ls = src.layout();
  const Layout& Ld = dst.layout();
  const int me = src.mesh().rank();
  std::int64_t copied = 0;
  // Without partial sums on either side every element of my tile comes from exactly one
  // source, so with beta = 0 the pieces are assigned instead of added onto a zeroed tile.
  const bool assign = beta == T(0) && !Ls.is_unreduced() && !Ld.is_unreduced();
  if (beta == T(0) && !assign) dst.set_zero();
  else if (beta != T(0) && beta != T(1))
    for (index_t j = 0; j < dst.local_cols(); ++j)
      for (index_t i = 0; i < dst.local_rows(); ++i) dst.local(i, j) *= beta;
  for (int r = 0; r < static_cast<int>(x.recv_from.size()); ++r) {
    if (!x.recv_from[r]) continue;
    const auto cs_r = Ls.mesh().coords_of(r);
    const auto& rows = x.recv_rows[Ls.dim_coord(0, cs_r)];
    const auto& cols = x.recv_cols[Ls.dim_coord(1, cs_r)];
    if (r == me) {
      const auto& cd_me = dst.mesh().coords();
      const auto& srows = x.send_rows[Ld.dim_coord(0, cd_me)];
      const auto& scols = x.send_cols[Ld.dim_coord(1, cd_me)];
      const auto rs = runs(&rows, &srows, rows.size());
      for (std::size_t jj = 0; jj < cols.size() && !rows.empty(); ++jj)
        copy_runs(&dst.local(0, cols[jj]), &src.local(0, scols[jj]), rs, alpha, assign);
      copied += static_cast<std::int64_t>(rows.size() * cols.size());
      continue;
    }
    const T* in = x.recvbuf + x.rd[r];
    const auto rs = runs(&rows, nullptr, rows.size());
    for (index_t j : cols) {
      if (rows.empty()) break;
      copy_runs(&dst.local(0, j), in, rs, alpha, assign);
      in += rows.size();
    }
  }
  return copied;
}

}  // namespace

template <Scalar T>
RedistStats redistribute(const DistMatrix<T>& src, DistMatrix<T>& dst, T alpha, T beta) {
  validate(src.mesh(), src.layout(), dst.mesh(), dst.layout());
  RedistStats stats;
  if (!src.mesh().active()) return stats;
  trace::Call call(src.mesh().comm(), "redistribute");  // inside gemm: one of its phases
  if (call.span())
    call.span().text("from", src.layout().to_string()).text("to", dst.layout().to_string());
  if (src.mesh().same_as(dst.mesh()) && src.layout().same_distribution(dst.layout()) &&
      !src.layout().is_unreduced())
    return copy_in_place(src, dst, alpha, beta);
  Exchange<T> x;
  comm::agreed(src.mesh().comm(), "redistribute", [&] {
    fault::point("redistribute");
    prepare(src, dst, x);
  });
  const comm::Traffic before = comm::traffic();
  comm::alltoallv(src.mesh().comm(), x.sendbuf, x.sc, x.sd, x.recvbuf, x.rc, x.rd);
  const comm::Traffic moved = comm::traffic() - before;
  if (comm::RedistributionRole::layout_change()) comm::redistribution_traffic() += moved;
  stats.bytes_sent = moved.bytes_sent;
  stats.bytes_received = moved.bytes_received;
  stats.messages_sent = moved.messages;
  stats.elements_copied_locally = unpack(src, dst, alpha, beta, x);
  return stats;
}

template <Scalar T>
DistMatrix<T> redistribute(const DistMatrix<T>& src, const Layout& layout, RedistStats* stats) {
  std::optional<DistMatrix<T>> dst;  // allocated on every rank before anything moves
  if (src.mesh().active())
    comm::agreed(src.mesh().comm(), "redistribute", [&] { dst.emplace(src.mesh(), layout); });
  else dst.emplace(src.mesh(), layout);
  const RedistStats s = redistribute(src, *dst, T(1), T(0));
  if (stats) *stats = s;
  return std::move(*dst);
}

#define SHARDMM_INSTANTIATE(T)                                                      \
  template RedistStats redistribute<T>(const DistMatrix<T>&, DistMatrix<T>&, T, T); \
  template DistMatrix<T> redistribute<T>(const DistMatrix<T>&, const Layout&, RedistStats*);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm
