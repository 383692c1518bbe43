// Clock alignment, once per communicator: rank 0 answers each other rank's ping (an empty
// message) with its clock reading t0; the asking rank reads its clock at t1 (send) and t2
// (reply), and offset = (t1 + t2) / 2 - t0 with the smallest round trip of kRounds wins. Rank
// 0's reading happened somewhere inside [t1, t2], so the offset is right within half that
// round trip (CommFacts::error). Ranks are served one after another. A rank keeps the offset it
// measured to a process for every later communicator led by that process: its spans in one file
// then share one clock correction (two estimates would shift one call against the next).
#include <limits>
#include <map>
#include <utility>

#include "comm/mpi_check.hpp"
#include "comm/tags.hpp"
#include "trace/events.hpp"

namespace shardmm::trace {
namespace {
constexpr int kRounds = 10;
constexpr int kTag = comm::tags::kTraceClock;

// Offset and error to each leading process measured so far, by its world rank.
std::map<int, std::pair<double, double>>& measured() {
  static std::map<int, std::pair<double, double>> m;
  return m;
}
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

namespace shardmm::trace {

void align_clock(MPI_Comm comm, CommFacts& f) {
  const int leader = f.world.at(0);
  const auto known = measured().find(leader);
  int need = known == measured().end() ? 1 : 0;
  SHARDMM_MPI(MPI_Allreduce(MPI_IN_PLACE, &need, 1, MPI_INT, MPI_MAX, comm));
  if (need) sync_clock(comm, f);
  if (known != measured().end()) {
    f.offset = known->second.first;
    f.error = known->second.second;
  } else {
    measured()[leader] = {f.offset, f.error};
  }
  f.synced = true;
}

}  // namespace shardmm::trace
