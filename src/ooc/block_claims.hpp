// Which of a streamed product's result blocks each rank computes. Blocks are dealt
// round-robin (block b to rank b mod P, in order); with `dynamic`, a rank that has finished its
// own takes the others' not yet started blocks, so a rank slowed by its core's other work
// (interrupts, the kernel's writeback, another job) no longer holds everyone up at the end.
// On the development VM (whose disk interrupts all land on one core) two ranks ended
// 0.2-3.6 s apart in 16-18 s runs.
//
// Dynamic claims are atomic fetch-and-adds on a counter per rank in shared memory (an MPI
// shared window): rank r's counter says how many of r's round-robin blocks were taken. A rank
// takes its own in order, then the others' from rank me+1 on. The collective reads of MPI-IO
// need every rank at the same step, and ranks on several hosts share no memory: both keep the
// round-robin deal.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "shardmm/types.hpp"

namespace shardmm::ooc {

class BlockClaims {
 public:
  /// Collective over comm when dynamic (creates the window when the ranks share a host).
  BlockClaims(MPI_Comm comm, index_t blocks, bool dynamic);
  /// Collective when dynamic (frees the window): every rank destroys its claims together.
  ~BlockClaims();
  BlockClaims(const BlockClaims&) = delete;
  BlockClaims& operator=(const BlockClaims&) = delete;
  BlockClaims(BlockClaims&&) = delete;
  BlockClaims& operator=(BlockClaims&&) = delete;

  static constexpr index_t kLater = -2;
  /// The next block this rank computes, or -1: static, this rank's next round-robin block
  /// (-1 after its last); dynamic, its next own block, else (with `may_take`; without it,
  /// kLater) one taken from another rank, -1 when none has one left.
  index_t next(bool may_take = true);
  [[nodiscard]] bool dynamic() const { return win_ != MPI_WIN_NULL; }
  /// Dynamic: the blocks taken so far by all ranks.
  [[nodiscard]] index_t taken() const;

 private:
  index_t take(int owner);  ///< owner's next block, or -1

  index_t blocks_;
  int ranks_ = 1, me_ = 0, victim_ = 0;
  index_t static_next_ = 0;
  MPI_Win win_ = MPI_WIN_NULL;
  std::int64_t* counters_ = nullptr;  ///< the window's memory, on rank 0, one per rank
};

}  // namespace shardmm::ooc
