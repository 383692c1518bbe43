// Workspace pool: the algorithms' large work buffers (panels, shift buffers, partial sums)
// come from here. Buffers are kept per slot and reused across calls, so a repeated gemm
// allocates (and first-touches) nothing; a slot grows only when a larger buffer is needed.
// Memory is 64-byte aligned and left uninitialised.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shardmm::memory {

/// Named slots, one per concurrent use inside a single algorithm run.
/// Panel*: an algorithm's panels / shift buffers; Partial: partial sums; Pack / Unpack: a
/// redistribution's send and receive buffers (or an algorithm's, outside any redistribute);
/// Ring0 / Ring1: the ring reduce-scatter's running sums (comm/collectives.cpp);
/// OperandA/B/C: gemm's copies of the operands in the plan's layouts; Aligned: SUMMA-stationary's
/// moving operand; Grid3A/B/C/F: the 2.5D algorithm's tiles on its 3D mesh; ShardA0/A1/B0/B1:
/// the sharding-rule algorithm's all-gathered operands (two per operand: a gathered one can
/// be gathered again), ShardPieces its gather buffer, ShardProduct its partial product.
enum class Slot : int {
  Panel0, Panel1, Panel2, Panel3, Partial, Pack, Unpack, Ring0, Ring1,
  OperandA, OperandB, OperandC, Aligned, Grid3A, Grid3B, Grid3C, Grid3F,
  ShardA0, ShardA1, ShardB0, ShardB1, ShardPieces, ShardProduct,
  Split, SplitIn, SplitOut0, SplitOut1, Count
};

/// Memory held outside the pool's slots: release with std::free(ptr).
struct Bytes {
  void* ptr = nullptr;
  std::size_t size = 0;
};

/// Fresh memory of at least `bytes` (size: what was allocated): 2 MiB aligned and marked for
/// transparent huge pages from 2 MiB up, 64-byte aligned below. Throws OutOfMemory.
Bytes allocate(std::size_t bytes);

/// Raw bytes for `slot`, at least `bytes` long. Invalidated by the next get() of that slot.
void* get_bytes(Slot slot, std::size_t bytes);

template <class T>
T* get(Slot slot, std::int64_t count) {
  return static_cast<T*>(get_bytes(slot, static_cast<std::size_t>(count < 1 ? 1 : count) * sizeof(T)));
}

/// Bytes currently held by the pool (all slots).
std::size_t held_bytes();
/// Frees every slot.
void release();

}  // namespace shardmm::memory
