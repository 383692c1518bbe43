// Workspace pool: the algorithms' large work buffers (panels, shift buffers, partial sums)
// come from here. Buffers are kept per slot and reused across calls, so a repeated gemm
// allocates (and first-touches) nothing; a slot grows only when a larger buffer is needed.
// Memory is 64-byte aligned and left uninitialised.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shardmm::memory {

/// Named slots, one per concurrent use inside a single call, named by role (not by algorithm):
/// Panel0-3: panels or shift buffers in flight; Partial: partial sums or a product's scratch;
/// Pack / Unpack: a redistribution's send and receive buffers (or an algorithm's exchange
/// buffers outside any redistribution); Reduction0/1: a hand-written reduction's running sums
/// (comm/collectives.cpp); OperandA/B/C: the front end's copies of the operands in the
/// algorithm's layouts; Realigned (and Realigned1, the next while one is in use): an operand an
/// algorithm moves into another layout as one of its steps; StagedA0/A1/B0/B1/C0/C1: operands or
/// results an algorithm stages in layouts of its own (two per operand: a staged one can be staged
/// again); Pieces: an all-gather's receive buffer; Stream/StreamIn/StreamOut0/1: an operand
/// streamed alongside a swap, its assembled chunk, one incoming and two outgoing pieces; WideA/B/C:
/// a 16-bit product's operands widened to f32 for the f32 product (front/gemm_half.cpp); MergedX/C:
/// a batched product's batched operand and result stacked into one matrix
/// (front/batched_merge.cpp).
enum class Slot : int {
  Panel0,
  Panel1,
  Panel2,
  Panel3,
  Partial,
  Pack,
  Unpack,
  Reduction0,
  Reduction1,
  OperandA,
  OperandB,
  OperandC,
  Realigned,
  Realigned1,
  StagedA0,
  StagedA1,
  StagedB0,
  StagedB1,
  StagedC0,
  StagedC1,
  Pieces,
  Stream,
  StreamIn,
  StreamOut0,
  StreamOut1,
  WideA,
  WideB,
  WideC,
  MergedX,
  MergedC,
  Count
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
  return static_cast<T*>(
      get_bytes(slot, static_cast<std::size_t>(count < 1 ? 1 : count) * sizeof(T)));
}

/// Lends `bytes` at `ptr` (memory the caller holds, such as a free part of another slot's
/// buffer) to `slot` while the guard lives: get_bytes(slot, n) returns `ptr` for n <= bytes,
/// else the slot's own buffer. So a redistribution's Pack / Unpack buffers can live in the
/// part of an algorithm's buffer that holds nothing at that moment. A nested lend of the same
/// slot is undone first.
class Lend {
 public:
  Lend(Slot slot, void* ptr, std::size_t bytes);
  ~Lend();
  Lend(const Lend&) = delete;
  Lend& operator=(const Lend&) = delete;
  Lend(Lend&&) = delete;
  Lend& operator=(Lend&&) = delete;

 private:
  Slot slot_;
  Bytes before_;
};

/// Bytes currently held by the pool (all slots). Slots only grow within a call, so after
/// release() and one call this is the call's high-water mark.
std::size_t held_bytes();
/// Bytes held by one slot.
std::size_t held_bytes(Slot slot);
/// Frees every slot.
void release();

}  // namespace shardmm::memory
