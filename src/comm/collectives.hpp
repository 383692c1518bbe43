// Named, checked, counted communication calls used by the algorithms. Each adds its logical
// volume to comm::traffic() (see traffic.hpp for the convention). Counts are 64-bit; a
// transfer above max_message_elems() is split into several MPI calls.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "comm/mpi_check.hpp"
#include "core/blocking.hpp"
#include "memory/workspace.hpp"
#include "trace/trace.hpp"

namespace shardmm::comm {

/// This rank's link in a chain broadcast (chain_bcast.cpp): chunk c of the message arrives from
/// the previous rank into base + c x chunk elements and, once there, is sent on to `next`.
struct Relay {
  std::vector<MPI_Request> arrivals;  // one receive per chunk, in message order
  char* base = nullptr;
  std::int64_t count = 0, chunk = 0;  // elements in all, elements per chunk
  std::size_t elem = 0;               // bytes per element
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int next = 0, tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  std::size_t forwarded = 0;  // chunks already sent on
  [[nodiscard]] bool done() const { return forwarded == arrivals.size(); }
};

/// Outstanding non-blocking operations; wait() / test() act on all of them, and forward the
/// chunks of chain broadcasts this rank relays as they arrive. Inside a traced or watched call
/// `flights` describes them (the trace's operations in flight, the watchdog's "waiting in
/// MPI_Waitall for ...").
class Requests {
 public:
  std::vector<MPI_Request> reqs;
  std::vector<trace::Flight> flights;
  std::vector<Relay> relays;
  /// Run once everything has arrived, in order (a 16-bit wire's widening of what arrived and
  /// the release of its staging buffers, comm/wire.hpp).
  std::vector<std::function<void()>> landing;
  void wait();
  bool test();  ///< drives progress; true when all are complete
  [[nodiscard]] bool empty() const { return reqs.empty() && relays.empty() && landing.empty(); }

 private:
  void land();
};

/// test() on every one of them (each makes progress); true when all are complete.
bool test_each(std::span<Requests* const> requests);

/// Adds a transfer's logical volume to traffic() and, when recording, the same numbers to the
/// span's arguments (bytes_sent, bytes_received, messages): a trace's exchange spans add up to
/// the counters a GemmReport shows.
void tally(trace::Span& span, std::int64_t sent, std::int64_t received, std::int64_t messages);

/// When recording: the span's communicator (its members' world ranks) and `role` ("root",
/// "peer") as a world rank.
void describe(trace::Span& span, MPI_Comm comm, const char* role = nullptr, int rank = -1);

/// Under a 16-bit wire (comm/wire.hpp) the f32 instantiations of ibcast, isend, irecv and
/// allgatherv move 16-bit patterns; a receiver's buffer holds floats once the operation has
/// landed (Requests::wait, or test() returning true).

/// Broadcast `count` elements from `root` of `comm` (non-blocking, appended to `out`). On 3 or
/// more ranks a message of at least two chunks (bcast_chunk_bytes()) goes down a pipelined chain
/// root -> root+1 -> ... in chunks, each rank sending and receiving it once (bandwidth-optimal;
/// MPI_Ibcast's tree or linear algorithms send it log P or P - 1 times from one rank); smaller
/// ones go through MPI_Ibcast.
template <class T>
void ibcast(T* buf, std::int64_t count, int root, MPI_Comm comm, Requests& out);

/// Chunk size of the chain broadcast in bytes; 0 turns the chain off (core/blocking.hpp: the
/// cost model reads the same value).
using blocking::bcast_chunk_bytes;
using blocking::set_bcast_chunk_bytes;

/// Non-blocking send / receive of `count` elements (split above the message limit).
template <class T>
void isend(const T* buf, std::int64_t count, int peer, int tag, MPI_Comm comm, Requests& out);
template <class T>
void irecv(T* buf, std::int64_t count, int peer, int tag, MPI_Comm comm, Requests& out);

/// All-gather of variable pieces: piece r (counts[r] elements) lands at recv + displs[r].
/// The own piece must already be in place in `recv`.
template <class T>
void allgatherv(T* recv, const std::vector<std::int64_t>& counts,
                const std::vector<std::int64_t>& displs, MPI_Comm comm);

/// Sum-reduce-scatter: `send` holds one block per rank (counts[r] elements, consecutive);
/// rank r receives the sum of block r into `recv`. A ring of isend/irecv whose running sums
/// live in the workspace (slots Ring0/Ring1): nothing is allocated per call once
/// reserve_reduce_scatter has grown them.
template <class T>
void reduce_scatter(const T* send, T* recv, const std::vector<std::int64_t>& counts, MPI_Comm comm);

/// The ring reduce-scatter's schedule over the ranks of `comm` (n of them), shared by
/// reduce_scatter and the sharding rules' fused reduction (algo/sharded_reduce.hpp): n - 1
/// steps. At step s this rank sends `out` (its running sum of block me-s-1, blocks counted
/// modulo n) to me+1 and receives the running sum of block me-s-2 from me-1 into
/// `into(s, block)` (count(block) elements each); `wait(requests)` completes the pair, then
/// `add(block, in, last)` adds this rank's part of that block and returns the next `out`. The
/// last step's block is this rank's own, summed over all (in a fixed order, so the result is
/// bitwise reproducible).
template <class T, class Count, class Into, class Wait, class Add>
void ring_reduce_steps(MPI_Comm comm, int tag, const T* out, Count&& count, Into&& into,
                       Wait&& wait, Add&& add) {
  const int n = comm_size(comm), me = comm_rank(comm);
  auto block = [n](int b) { return ((b % n) + n) % n; };
  for (int s = 0; s + 1 < n; ++s) {
    const int sb = block(me - s - 1), rb = block(me - s - 2);
    T* in = into(s, rb);
    Requests q;
    irecv(in, count(rb), block(me - 1), tag, comm, q);
    isend(out, count(sb), block(me + 1), tag, comm, q);
    wait(q);
    out = add(rb, in, s + 2 == n);
  }
}

/// Grows the reduce-scatter's workspace for blocks of up to `widest` elements. Call it in the
/// phase's prologue (where allocation failures are agreed), not between collectives.
template <class T>
void reserve_reduce_scatter(std::int64_t widest) {
  memory::get<T>(memory::Slot::Reduction0, widest);
  memory::get<T>(memory::Slot::Reduction1, widest);
}

/// Collective: `s` of rank `root` on every rank (messages and paths: far below INT_MAX).
void bcast_string(MPI_Comm comm, std::string& s, int root);

/// In-place sum all-reduce (16-bit types: summed in f32, rounded once per combination).
template <class T>
void allreduce_sum(T* buf, std::int64_t count, MPI_Comm comm);

}  // namespace shardmm::comm
