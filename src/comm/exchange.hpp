// All-to-all exchange with 64-bit counts: one MPI_Alltoallv when every count and displacement
// fits a message and no rank sleeps while it waits (comm/wait.hpp), otherwise point-to-point
// pieces of at most max_message_elems() each.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace shardmm::comm {

/// Sends send[send_displs[r] .. +send_counts[r]) to rank r and receives recv_counts[r]
/// elements from rank r at recv[recv_displs[r]]. The own entry is exchanged too (callers
/// normally pass 0 for it and copy locally). Adds the volume to traffic(). Collective.
template <class T>
void alltoallv(MPI_Comm comm, const T* send, const std::vector<std::int64_t>& send_counts,
               const std::vector<std::int64_t>& send_displs, T* recv,
               const std::vector<std::int64_t>& recv_counts,
               const std::vector<std::int64_t>& recv_displs);

/// Exchanges this thread has sent as point-to-point pieces so far (tests: which path ran).
[[nodiscard]] std::int64_t pointwise_exchanges();

}  // namespace shardmm::comm
