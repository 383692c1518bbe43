// Blocking rules that the algorithms (summa.cpp, ring_swap.cpp, ring_reduce_scatter.cpp) and
// the planner's cost model (plan/cost_model.cpp) must agree on: SUMMA's panel widths and the
// ring's chunk widths at p = 2. A neutral header, so the planner includes nothing from algo/
// and predicts exactly what a run takes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace shardmm::blocking {

/// comm::ibcast's chain chunk in bytes (0: no chains): SHARDMM_BCAST_CHUNK when it is 0 or a
/// byte count (65536, 64K, 64KiB), else 256 KiB; read once. The cost model prices the chains'
/// pipeline fill with the same value. set_bcast_chunk_bytes (tests) changes it for both;
/// negative: InvalidArgument.
std::int64_t bcast_chunk_bytes();
void set_bcast_chunk_bytes(std::int64_t bytes);

/// OpenBLAS's k block for DGEMM on this machine's kernel (SkylakeX): a GEMM whose k is a
/// multiple of it packs nothing twice. One core, C 2048 x 4096 (bench/panel_width.cpp):
/// rank-384 updates run at 99.5 % of one whole-k call, rank-256 at 98.5 %, rank-128 at 90 %.
constexpr std::int64_t kKBlock = 384;
/// The width when no multiple of kKBlock fits the budget, if its buffers fit the looser one.
constexpr std::int64_t kMinPanel = 256;
/// The narrowest panel, for tiles so small that 256-wide buffers would not fit a quarter of
/// them (2048^3 on 1 x 4: 1.05 x 10^6 of 3.1 x 10^6 elements). Rank-128 updates run at 90 %
/// of whole-k GEMM speed; at 2048^3 on 1 x 4 the run took 3-5 % longer and added 0.24 x local
/// A + B + C instead of 0.43 (bench, --panel 128 against the default 256).
constexpr std::int64_t kNarrowPanel = 128;

/// The panel buffers one operand's side fills at width w: `bufs` (two when broadcast, one
/// when only packed locally, none when read in place), except on a broadcast between two
/// ranks whose owner sends from its own storage (`pair_nb` > 0, its k block): at widths that
/// are multiples of pair_nb the owners take turns panel by panel, so every panel a rank
/// receives lands in the same buffer (SUMMA step s uses buffer s % 2).
struct SideBuffers {
  int bufs = 0;
  std::int64_t pair_nb = 0;
  SideBuffers(int b, std::int64_t nb = 0)
      : bufs(b), pair_nb(nb) {}  // NOLINT: an int is a plain count
  [[nodiscard]] int at(std::int64_t w) const { return pair_nb > 0 && w % pair_nb == 0 ? 1 : bufs; }
};

/// The widest of 4, 2 or 1 k blocks whose panel buffers fit in a fifth of the rank's
/// A + B + C (ml x ka + kb x nl + ml x nl, largest tiles), counting every side's `bufs`: `a`
/// buffers of ml x w for A, `b` of w x nl for B. Else kMinPanel when its buffers, counted
/// exactly (SideBuffers::at), fit in a quarter, else kNarrowPanel, below which the local GEMM
/// slows further. From global extents only, so every rank cuts the same panels.
inline std::int64_t summa_panel_width(double ml, double nl, double ka, double kb, SideBuffers a,
                                      SideBuffers b) {
  const double abc = ml * ka + kb * nl + ml * nl;
  const double per_k = a.bufs * ml + b.bufs * nl;
  for (std::int64_t w : {4 * kKBlock, 2 * kKBlock, kKBlock})
    if (double(w) * per_k <= 0.2 * abc) return w;
  const double at_min = double(kMinPanel) * (a.at(kMinPanel) * ml + b.at(kMinPanel) * nl);
  return at_min <= 0.25 * abc ? kMinPanel : kNarrowPanel;
}

/// The k-chunk of the ring's swap at p = 2 (ring_swap.cpp): the widest of 4, 2 or 1 k blocks whose
/// buffers fit in a fifth of a rank's share of A + B + C (`abc_share` elements), else
/// kMinPanel. The buffers, at most: two incoming chunks, two packed outgoing ones and one of
/// the whole circulating operand, 6 x `tile` x w (`tile`: the widest tile's non-k extent).
/// A streamed other operand (SplitStream) adds `stream_per_k` elements per unit of width: its
/// assembled chunk, one incoming and two outgoing pieces, 2.5 x C's widest other extent.
/// From global extents only, so both ranks cut the same chunks.
inline std::int64_t ring_chunk_width(double tile, double abc_share, double stream_per_k = 0) {
  for (std::int64_t w : {4 * kKBlock, 2 * kKBlock, kKBlock})
    if (double(w) * (6.0 * tile + stream_per_k) <= 0.2 * abc_share) return w;
  return kMinPanel;
}

/// The chunk of C's split dimension in which the reduce-scatter ring swaps partial sums at
/// p = 2 (ring_reduce_scatter.cpp): the widest of 4, 2 or 1 k blocks whose buffers fit in a quarter
/// of a rank's share of A + B + C, else one k block. The buffers: two outgoing and one incoming
/// chunk (`other` = C's unsplit extent each) and a packed slice of op(A) or op(B) (`kl` = the
/// rank's k). Never below 384: every chunk repacks the whole other operand inside OpenBLAS
/// (4096 x 2048 x 2048 on one core: 5 % slower in 384-wide chunks, 7.5 % in 256-wide ones).
inline std::int64_t rs_chunk_width(double other, double kl, double abc_share) {
  for (std::int64_t w : {4 * kKBlock, 2 * kKBlock})
    if (double(w) * (3.0 * other + kl) <= 0.25 * abc_share) return w;
  return kKBlock;
}

/// The pass of the reduce-scatter ring at p > 2 (ring_reduce_scatter.cpp): how many of C's
/// unsplit columns (rows) circulate as running sums at once. A pass's buffers are two outgoing
/// sums and one incoming, `tile` (C's widest split extent) per unit of width: the whole
/// `other` extent when they fit in half of a rank's share of A + B + C (`abc_share` elements),
/// else the widest multiple of kKBlock that fits, at least kKBlock (narrower passes only add
/// messages: p - 1 each). From global extents only, so every rank cuts the same passes.
inline std::int64_t rs_pass_width(double tile, double other, double abc_share) {
  const double budget = 0.5 * abc_share / std::max(3.0 * tile, 1.0);
  if (other <= budget) return static_cast<std::int64_t>(std::max(other, 1.0));
  return std::max<std::int64_t>(kKBlock, static_cast<std::int64_t>(budget / kKBlock) * kKBlock);
}

/// The pass of the AllGather ring forms at p > 2 (ring_allgather.cpp): how much of k the
/// circulating tiles carry at once. A pass's buffers are two arriving tiles (one multiplied,
/// one in flight), `tile` (the circulating operand's widest non-k extent) per unit of k: all
/// of `k` when they fit in half of a rank's share of A + B + C (`abc_share` elements), else
/// the widest multiple of kKBlock that fits, at least kKBlock (narrower passes only add
/// messages: p - 1 each). From global extents only, so every rank cuts the same passes.
inline std::int64_t ag_pass_width(double tile, double k, double abc_share) {
  const double budget = 0.5 * abc_share / std::max(2.0 * tile, 1.0);
  if (k <= budget) return static_cast<std::int64_t>(std::max(k, 1.0));
  return std::max<std::int64_t>(kKBlock, static_cast<std::int64_t>(budget / kKBlock) * kKBlock);
}

/// The narrowest chunk SUMMA's stationary forms stream (below it the chunks' messages and
/// agreements, not their words, set the time).
constexpr std::int64_t kMinChunk = 32;

/// SUMMA's A- and B-stationary forms (summa_stationary.cpp) stream the moving operand: w of
/// each owner's local columns of C (A stays; rows when B stays) at a time, on `owners`
/// owners. Per unit of w a chunk's buffers hold, for each owner, the aligned moving operand
/// and its redistribution's receive buffer (`kl` each: the moving operand's k per rank), the
/// partial product and its packed copy (`stay` each: C's extent along the other dimension),
/// plus the reduce-scatter's two running sums (`stay` each). The widest w whose buffers fit in
/// half of a rank's A + B + C (`abc` elements), at least kMinChunk, at most `widest` (C's
/// widest extent along the streamed dimension: one chunk, the whole operand at once). From
/// global extents only, so every rank cuts the same chunks.
inline std::int64_t stationary_chunk_width(double kl, double stay, double owners, double widest,
                                           double abc) {
  const double per_w = owners * (2 * kl + 2 * stay) + 2 * stay;
  const double w = per_w > 0 ? std::floor(0.5 * abc / per_w) : widest;
  const double top = std::max(widest, 1.0);
  return static_cast<std::int64_t>(std::min(top, std::max(w, double(kMinChunk))));
}

}  // namespace shardmm::blocking
