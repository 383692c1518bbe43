// The wire format: f32 buffers that travel as bf16 or f16 (Options::wire). The comm wrappers
// (ibcast, isend, irecv, allgatherv, alltoallv) consult wire() when T is float: a sender
// rounds its elements into a 16-bit staging buffer and sends that; a receiver receives the 16
// bits into the first half of its own float buffer and widens them in place (from the last
// element down) once the transfer has landed. Partial sums never travel so: reduce_scatter
// and allreduce_sum move f32 whatever the scope says, and so do the ring's and the sharding
// rules' reduce-scatters of C (WireScope(Wire::F32) around them).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

#include "shardmm/options.hpp"

namespace shardmm::comm {

/// The format f32 buffers travel in on this thread (Wire::F32: as stored).
Wire wire();

/// Whether the 16-bit wire applies to a transfer of T now: f32 data under a WireScope of bf16
/// or f16 (each element then travels in 2 bytes).
template <class T>
bool on_wire() {
  if constexpr (std::is_same_v<T, float>) return wire() != Wire::F32;
  else return false;
}

/// Sets wire() for a scope; WireScope(Wire::F32) suspends it.
class WireScope {
 public:
  explicit WireScope(Wire w);
  ~WireScope();
  WireScope(const WireScope&) = delete;
  WireScope& operator=(const WireScope&) = delete;
  WireScope(WireScope&&) = delete;
  WireScope& operator=(WireScope&&) = delete;

 private:
  Wire saved_;
};

/// Marks redistributions of operands (A, B): redistribute() keeps wire() only inside such a
/// scope and otherwise moves values as stored (C, results, anything a caller redistributes).
class OperandMoves {
 public:
  OperandMoves();
  ~OperandMoves();
  OperandMoves(const OperandMoves&) = delete;
  OperandMoves& operator=(const OperandMoves&) = delete;
  OperandMoves(OperandMoves&&) = delete;
  OperandMoves& operator=(OperandMoves&&) = delete;
  [[nodiscard]] static bool open();

 private:
  bool saved_;
};

/// A 16-bit staging buffer from a per-thread free list (reused: nothing is allocated once the
/// list holds buffers large enough); returned to the list when the lease is destroyed.
class Staging {
 public:
  explicit Staging(std::int64_t count);
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  Staging(Staging&&) = delete;
  Staging& operator=(Staging&&) = delete;
  [[nodiscard]] std::uint16_t* data() { return buf_->data(); }

 private:
  std::unique_ptr<std::vector<std::uint16_t>> buf_;
};

/// Rounds n floats to the format's 16-bit patterns (round to nearest even).
void narrow(Wire w, const float* in, std::uint16_t* out, std::int64_t n);
/// Widens n 16-bit patterns to floats (exact).
void widen(Wire w, const std::uint16_t* in, float* out, std::int64_t n);
/// Widens n 16-bit patterns held in the first 2n bytes of `buf` into buf[0..n), in place.
void widen_in_place(Wire w, float* buf, std::int64_t n);

}  // namespace shardmm::comm
