// Clock alignment, once per communicator: rank 0 answers each other rank's ping (an empty
// message) with its clock reading t0; the asking rank reads its clock at t1 (send) and t2
// (reply), and offset = (t1 + t2) / 2 - t0 with the smallest round trip of kRounds wins. Rank
// 0's reading happened somewhere inside [t1, t2], so the offset is right within half that
// round trip (CommFacts::error). Ranks are served one after another.
#include <limits>

#include "comm/mpi_check.hpp"
#include "trace/events.hpp"

namespace shardmm::trace {
namespace {
constexpr int kRounds = 10;
constexpr int kTag = 31249;  // below the standard's smallest MPI_TAG_UB (32767)
}  // namespace

void sync_clock(MPI_Comm comm, CommFacts& f) {
  const int me = comm::comm_rank(comm), P = comm::comm_size(comm);
  f.offset = 0;
  f.error = 0;
  if (me == 0) {
    for (int r = 1; r < P; ++r)
      for (int i = 0; i < kRounds; ++i) {
        SHARDMM_MPI(MPI_Recv(nullptr, 0, MPI_BYTE, r, kTag, comm, MPI_STATUS_IGNORE));
        const double t0 = now();
        SHARDMM_MPI(MPI_Send(&t0, 1, MPI_DOUBLE, r, kTag, comm));
      }
  } else {
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < kRounds; ++i) {
      double t0 = 0;
      const double t1 = now();
      SHARDMM_MPI(MPI_Send(nullptr, 0, MPI_BYTE, 0, kTag, comm));
      SHARDMM_MPI(MPI_Recv(&t0, 1, MPI_DOUBLE, 0, kTag, comm, MPI_STATUS_IGNORE));
      const double t2 = now();
      if (t2 - t1 < best) {
        best = t2 - t1;
        f.offset = (t1 + t2) / 2 - t0;
        f.error = best / 2;
      }
    }
  }
  f.synced = true;
}

}  // namespace shardmm::trace
