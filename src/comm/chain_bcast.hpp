// The pipelined chain broadcast behind comm::ibcast for large messages on 3 or more ranks, and
// the relaying that Requests::test / wait do for it.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "comm/collectives.hpp"

namespace shardmm::comm {

/// Posts this rank's part of a chain broadcast of `count` elements in chunks of `chunk`: the
/// root sends every chunk to root+1; a middle rank receives them and relays each on (a Relay
/// in `out`); the last rank only receives. Traffic is tallied by ibcast.
void chain_ibcast(void* buf, std::int64_t count, std::int64_t chunk, std::size_t elem,
                  MPI_Datatype type, int root, MPI_Comm comm, Requests& out);

/// Sends on every chunk that has arrived (in order) and stops at the first one still on its
/// way; true when every relay in `q` has forwarded all its chunks.
bool relay_arrived(Requests& q);

/// Blocks until every relay in `q` has received and sent on all its chunks (the sends join
/// q.reqs), relaying whichever chain's next chunk lands first.
void relay_all(Requests& q);

}  // namespace shardmm::comm
