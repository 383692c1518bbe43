// The library's point-to-point tag ranges, in one place so that they stay apart. Everything is
// below 32767, the least MPI_TAG_UB the standard allows. The algorithms' fixed tags (Cannon's
// shifts, the rings' streams, the sharded steps) are below 100.
#pragma once

namespace shardmm::comm::tags {

/// Chain broadcasts: consecutive tags per communicator, 20000..24095 (chain_bcast.cpp).
constexpr int kChainBase = 20000, kChainCount = 4096;
/// alltoallv's point-to-point pieces: base + piece index, 25000..30999 (exchange.cpp).
constexpr int kExchangeBase = 25000, kExchangeCount = 6000;
/// The trace's clock alignment with rank 0 (trace/clock.cpp).
constexpr int kTraceClock = 31249;

static_assert(kChainBase + kChainCount <= kExchangeBase);
static_assert(kExchangeBase + kExchangeCount <= kTraceClock);
static_assert(kTraceClock <= 32767);

}  // namespace shardmm::comm::tags
