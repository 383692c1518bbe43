// The redistribution patterns that sum partial sums ({U_..} sources, redistribute_plan.hpp):
//   ReduceScatter  each member packs its partial tile by destination member (the part of it
//                  each member's destination tile holds, in group order; workspace slot Pack)
//                  and comm::reduce_scatter (a ring of isend/irecv, running sums in the
//                  Reduction slots) over the exchange axes leaves this rank's summed block in
//                  slot Unpack, placed into the destination tile: (g - 1) / g of the partial
//                  tile per rank.
//   AllReduce      the destination tile's part of the partial tile, packed (slot Unpack),
//                  summed in place by comm::allreduce_sum (MPI_Allreduce) over the exchange
//                  axes and placed: 2 (g - 1) / g of the tile per rank.
#include <algorithm>

#include "comm/collectives.hpp"
#include "core/instantiate.hpp"
#include "matrix/redistribute_detail.hpp"
#include "memory/workspace.hpp"

namespace shardmm::matrix::detail {

template <Scalar T>
std::int64_t reduce_scatter(const Move<T>& m) {
  const auto g = m.members.size();
  const auto me = static_cast<std::size_t>(m.me);
  std::vector<Block> blocks(g);  // the part of my partial tile member v's destination holds
  std::vector<std::int64_t> counts(g);
  std::int64_t total = 0;
  for (std::size_t v = 0; v < g; ++v) {
    blocks[v] = overlap(m.src.layout(), m.src.mesh().coords(), m.dst.layout(),
                        m.dst_coords(static_cast<int>(v)));
    counts[v] = blocks[v].size();
    total += counts[v];
  }
  T *send = nullptr, *mine = nullptr;
  prepare(m, [&] {
    send = memory::get<T>(memory::Slot::Pack, total);
    mine = memory::get<T>(memory::Slot::Unpack, counts[me]);
    comm::reserve_reduce_scatter<T>(*std::max_element(counts.begin(), counts.end()));
    T* out = send;
    for (std::size_t v = 0; v < g; ++v) {
      pack(m.src.data(), m.src.ld(), blocks[v], out);
      out += counts[v];
    }
  });
  comm::reduce_scatter(send, mine, counts, m.comm);
  place(mine, 0, blocks[me], m.dst.data(), m.dst.ld(), m.alpha, m.beta);
  return counts[me];
}

template <Scalar T>
std::int64_t all_reduce(const Move<T>& m) {
  const Block b =
      overlap(m.src.layout(), m.src.mesh().coords(), m.dst.layout(), m.dst.mesh().coords());
  T* buf = nullptr;
  prepare(m, [&] {
    buf = memory::get<T>(memory::Slot::Unpack, b.size());
    pack(m.src.data(), m.src.ld(), b, buf);
  });
  comm::allreduce_sum(buf, b.size(), m.comm);
  place(buf, 0, b, m.dst.data(), m.dst.ld(), m.alpha, m.beta);
  return b.size();
}

#define SHARDMM_INSTANTIATE(T)                             \
  template std::int64_t reduce_scatter<T>(const Move<T>&); \
  template std::int64_t all_reduce<T>(const Move<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
SHARDMM_FOR_EACH_HALF(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::matrix::detail
