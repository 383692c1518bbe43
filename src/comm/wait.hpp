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

namespace shardmm::comm {

enum class WaitMode { Spin, Sleep };

/// SHARDMM_WAIT: `spin`, `sleep`, or `auto` (also when unset or empty): sleep when the launcher
/// says this node runs more ranks (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS,
/// MV2_COMM_WORLD_LOCAL_SIZE) than there are CPUs this process may run on, else spin. Read at every
/// top-level library call (trace::Call); any other value throws InvalidArgument there, on every
/// rank alike.
void read_wait_setting();
[[nodiscard]] WaitMode wait_mode();

/// Completes every request (MPI_REQUEST_NULL on return).
void wait_all(std::vector<MPI_Request>& reqs);
/// Completes one of the requests and returns its index (MPI_UNDEFINED when none is active).
int wait_any(std::vector<MPI_Request>& reqs);

/// Sleeps taken by waits on this thread so far (tests: a sleeping wait slept).
[[nodiscard]] std::int64_t wait_sleeps();

}  // namespace shardmm::comm
