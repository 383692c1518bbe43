// How a rank waits for its messages (Requests::wait, the chain broadcast's relays, and in
// sleep mode alltoallv's point-to-point exchange).
// Spin: MPI_Waitall / MPI_Waitany, the quickest answer, with a core kept busy polling. Sleep:
// MPI_Testall for 50 us, then sleeps of 20 us doubling to 200 us between tests. Where a node
// runs more ranks than it has cores (a shared node, CI, a cluster simulated on one machine) a
// spinning rank takes its core from a rank that could multiply, or from the network stack
// moving the very message it waits for.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "shardmm/options.hpp"

namespace shardmm::comm {

enum class WaitMode { Spin, Sleep };

/// The mode a call with Options::wait `option` waits in: Spin or Sleep as asked; Auto reads
/// SHARDMM_WAIT: `spin`, `sleep`, or `auto` (also when unset or empty): sleep when the launcher
/// says this node runs more ranks (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS,
/// MV2_COMM_WORLD_LOCAL_SIZE) than there are CPUs this process may run on, else spin. Any other
/// value throws InvalidArgument naming SHARDMM_WAIT (rank-local: every rank whose environment
/// has it throws the same).
[[nodiscard]] WaitMode resolve_wait(Wait option);

/// A library call's wait mode, opened at its entry (before its first message) with the call's
/// Options::wait, Wait::Auto for the calls that take no Options. The outermost scope on the
/// thread resolves it (resolve_wait: may throw) and sets the process's mode until it closes,
/// which restores the mode before (Spin outside any call); a scope opened inside a call (gemm's
/// redistributions, a group's product) keeps the caller's mode and reads nothing.
class WaitScope {
 public:
  explicit WaitScope(Wait option = Wait::Auto);
  ~WaitScope();
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;
  WaitScope(WaitScope&&) = delete;
  WaitScope& operator=(WaitScope&&) = delete;

 private:
  bool outer_ = false;
  WaitMode before_ = WaitMode::Spin;
};

/// The mode waits take now (the open WaitScope's).
[[nodiscard]] WaitMode wait_mode();

/// Completes every request (MPI_REQUEST_NULL on return).
void wait_all(std::vector<MPI_Request>& reqs);
/// Completes one of the requests and returns its index (MPI_UNDEFINED when none is active).
int wait_any(std::vector<MPI_Request>& reqs);

/// Sleeps taken by waits on this thread so far (tests: a sleeping wait slept).
[[nodiscard]] std::int64_t wait_sleeps();

}  // namespace shardmm::comm
