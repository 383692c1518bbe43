// Block claims of the streamed product. The counters: one std::int64_t per rank in a
// shared-memory window on rank 0 (MPI_Win_allocate_shared), rank r's the count of r's
// round-robin blocks (r, r + P, r + 2P, ...) taken so far, by r or by others. A claim is an
// atomic fetch-and-add on the owner's counter, straight in the shared memory: no message, no
// progress needed from the owner, which is busy in its GEMM. The value fetched is the index
// of the claimed block in the owner's list, or past its end when none is left. Ranks on
// several hosts share no memory, and one-sided atomics over TCP need a target that calls MPI
// (Open MPI 4.1 offers no such window there at all): they keep the round-robin deal.
#include "ooc/block_claims.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "comm/mpi_check.hpp"

namespace shardmm::ooc {
namespace {

// Whether every rank of comm shares memory with every other (one host).
bool one_host(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  SHARDMM_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  const bool all = comm::comm_size(node) == comm::comm_size(comm);
  SHARDMM_MPI(MPI_Comm_free(&node));
  return all;
}

}  // namespace

BlockClaims::BlockClaims(MPI_Comm comm, index_t blocks, bool dynamic) : blocks_(blocks) {
  ranks_ = comm::comm_size(comm), me_ = comm::comm_rank(comm);
  victim_ = me_;
  if (!dynamic || ranks_ == 1 || !one_host(comm)) return;
  const auto bytes = static_cast<MPI_Aint>(me_ == 0 ? ranks_ * sizeof(std::int64_t) : 0);
  std::int64_t* mine = nullptr;
  SHARDMM_MPI(MPI_Win_allocate_shared(bytes, sizeof(std::int64_t), MPI_INFO_NULL, comm,
                                      static_cast<void*>(&mine), &win_));
  MPI_Aint size = 0;
  int unit = 0;
  SHARDMM_MPI(MPI_Win_shared_query(win_, 0, &size, &unit, static_cast<void*>(&counters_)));
  if (me_ == 0)
    for (int r = 0; r < ranks_; ++r) std::atomic_ref<std::int64_t>(counters_[r]).store(0);
  SHARDMM_MPI(MPI_Barrier(comm));  // every counter is 0 before anyone claims
}

BlockClaims::~BlockClaims() {
  if (win_ == MPI_WIN_NULL) return;
  // Collective: every rank is done claiming (the stream's end was agreed). A destructor
  // cannot throw; a failure to free leaks the window only.
  (void)MPI_Win_free(&win_);
}

index_t BlockClaims::taken() const {
  index_t n = 0;
  for (int r = 0; r < ranks_; ++r) {
    const index_t own = (blocks_ - r + ranks_ - 1) / ranks_;  // r's round-robin blocks
    n += std::min<index_t>(own, std::atomic_ref<std::int64_t>(counters_[r]).load());
  }
  return n;
}

index_t BlockClaims::take(int owner) {
  const std::int64_t taken = std::atomic_ref<std::int64_t>(counters_[owner]).fetch_add(1);
  const index_t b = taken * ranks_ + owner;
  return b < blocks_ ? b : -1;
}

// Own blocks first, then every other rank's in turn; a list found empty stays empty. The
// stream claims its own blocks a block ahead (their panels are read while the block before
// multiplies), but another rank's only when it has none left to multiply: the owner, busy
// with its current block, would otherwise lose a block it could have started next.
index_t BlockClaims::next(bool may_take) {
  if (win_ == MPI_WIN_NULL) {
    const index_t b = static_next_++ * ranks_ + me_;
    return b < blocks_ ? b : -1;
  }
  if (victim_ == me_) {
    const index_t b = take(me_);
    if (b >= 0) return b;
    victim_ = me_ + 1;
  }
  if (!may_take && victim_ < me_ + ranks_) return kLater;
  for (; victim_ < me_ + ranks_; ++victim_) {
    const index_t b = take(victim_ % ranks_);
    if (b >= 0) return b;
  }
  return -1;
}

}  // namespace shardmm::ooc
