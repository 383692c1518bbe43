// The redistribution patterns that move each element at most once (redistribute_plan.hpp):
//   Local      each rank copies the part of its own source tile its destination tile holds
//              (a slice, or the same distribution); no communication.
//   AllGather  every member of the group packs its source tile's part of the group's (common)
//              destination tile; comm::allgatherv (MPI_Allgatherv) over the exchange axes'
//              communicator; every piece is placed into the destination tile.
//   Permute    one send and one receive (isend/irecv) with the group's single peers; the
//              own part is copied locally.
// The overlap of two tiles and its runs of local indices are computed here too.
#include <algorithm>

#include "comm/collectives.hpp"
#include "core/instantiate.hpp"
#include "matrix/redistribute_detail.hpp"
#include "memory/workspace.hpp"

namespace shardmm::matrix::detail {

std::vector<Run> dim_runs(const DimMap& src, int s, const DimMap& dst, int t) {
  const auto a = src.owned_ranges(s), b = dst.owned_ranges(t);
  std::vector<Run> out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const index_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (lo < hi) {
      const index_t to = dst.to_local(lo), from = src.to_local(lo);
      if (!out.empty() && out.back().to + out.back().len == to &&
          out.back().from + out.back().len == from)
        out.back().len += hi - lo;
      else out.push_back({to, from, hi - lo});
    }
    if (a[i].second < b[j].second) ++i;
    else ++j;
  }
  return out;
}

Block overlap(const Layout& src, const std::vector<int>& src_coords, const Layout& dst,
              const std::vector<int>& dst_coords) {
  Block b;
  b.rows =
      dim_runs(src.map(0), src.dim_coord(0, src_coords), dst.map(0), dst.dim_coord(0, dst_coords));
  b.cols =
      dim_runs(src.map(1), src.dim_coord(1, src_coords), dst.map(1), dst.dim_coord(1, dst_coords));
  for (const Run& r : b.rows) b.nrows += r.len;
  for (const Run& c : b.cols) b.ncols += c.len;
  return b;
}

namespace {

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

template <Scalar T>
std::int64_t local_copy(const Move<T>& m) {
  const Layout& Ls = m.src.layout();
  const Layout& Ld = m.dst.layout();
  const auto& cd = m.dst.mesh().coords();
  // Along an axis where only the destination holds partial sums, coordinate 0 takes the value
  // and the others hold zero partials.
  for (int a : Ld.unreduced_axes())
    if (!contains(Ls.unreduced_axes(), a) && cd[a] != 0) {
      scale_tile(m.dst, m.beta);
      return 0;
    }
  const Block b = overlap(Ls, m.src.mesh().coords(), Ld, cd);
  place(m.src.data(), m.src.ld(), b, m.dst.data(), m.dst.ld(), m.alpha, m.beta);
  return b.size();
}

template <Scalar T>
std::int64_t all_gather(const Move<T>& m) {
  const auto g = m.members.size();
  const auto me = static_cast<std::size_t>(m.me);
  std::vector<Block> pieces(g);  // member v's part of the group's destination tile
  std::vector<std::int64_t> counts(g), displs(g);
  std::int64_t total = 0;
  for (std::size_t v = 0; v < g; ++v) {
    pieces[v] = overlap(m.src.layout(), m.src_coords(static_cast<int>(v)), m.dst.layout(),
                        m.dst.mesh().coords());
    counts[v] = pieces[v].size();
    displs[v] = total;
    total += counts[v];
  }
  T* buf = nullptr;
  prepare(m, [&] {
    buf = memory::get<T>(memory::Slot::Pieces, total);
    pack(m.src.data(), m.src.ld(), pieces[me], buf + displs[me]);
  });
  comm::allgatherv(buf, counts, displs, m.comm);
  for (std::size_t v = 0; v < g; ++v)
    place(buf + displs[v], 0, pieces[v], m.dst.data(), m.dst.ld(), m.alpha, m.beta);
  return counts[me];
}

template <Scalar T>
std::int64_t permute(const Move<T>& m) {
  const Layout& Ls = m.src.layout();
  const Layout& Ld = m.dst.layout();
  const int g = static_cast<int>(m.members.size());
  const Block own = overlap(Ls, m.src_coords(m.me), Ld, m.dst_coords(m.me));
  Block out, in;
  int to = -1, from = -1;
  for (int v = 0; v < g; ++v) {
    if (v == m.me) continue;
    Block b = overlap(Ls, m.src_coords(m.me), Ld, m.dst_coords(v));
    if (b.size() > 0) to = v, out = std::move(b);
    b = overlap(Ls, m.src_coords(v), Ld, m.dst_coords(m.me));
    if (b.size() > 0) from = v, in = std::move(b);
  }
  T *sendbuf = nullptr, *recvbuf = nullptr;
  prepare(m, [&] {
    sendbuf = memory::get<T>(memory::Slot::Pack, out.size());
    recvbuf = memory::get<T>(memory::Slot::Unpack, in.size());
    pack(m.src.data(), m.src.ld(), out, sendbuf);
  });
  comm::Requests q;
  constexpr int kTag = 41;
  if (from >= 0) comm::irecv(recvbuf, in.size(), from, kTag, m.comm, q);
  if (to >= 0) comm::isend(sendbuf, out.size(), to, kTag, m.comm, q);
  place(m.src.data(), m.src.ld(), own, m.dst.data(), m.dst.ld(), m.alpha, m.beta);
  q.wait();
  if (from >= 0) place(recvbuf, 0, in, m.dst.data(), m.dst.ld(), m.alpha, m.beta);
  return own.size();
}

#define SHARDMM_INSTANTIATE(T)                         \
  template std::int64_t local_copy<T>(const Move<T>&); \
  template std::int64_t all_gather<T>(const Move<T>&); \
  template std::int64_t permute<T>(const Move<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
SHARDMM_FOR_EACH_HALF(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::matrix::detail
