#include "comm/chain_bcast.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "comm/mpi_check.hpp"
#include "comm/tags.hpp"
#include "comm/wait.hpp"
#include "shardmm/error.hpp"

namespace shardmm::comm {

namespace {

// Chain broadcasts on one communicator get consecutive tags from a counter cached on it (an
// attribute, so a new communicator starts at 0 on every member). Two chains in flight on the
// same communicator, with different roots, then never match each other's chunks.
// The tags are comm::tags::kChainBase onwards (comm/tags.hpp).

int delete_counter(MPI_Comm /*comm*/, int /*key*/, void* value, void* /*extra*/) {
  delete static_cast<std::int64_t*>(value);
  return MPI_SUCCESS;
}

int next_tag(MPI_Comm comm) {
  static int key = MPI_KEYVAL_INVALID;
  if (key == MPI_KEYVAL_INVALID)
    SHARDMM_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_counter, &key, nullptr));
  void* value = nullptr;
  int found = 0;
  SHARDMM_MPI(MPI_Comm_get_attr(comm, key, static_cast<void*>(&value), &found));
  auto* counter = static_cast<std::int64_t*>(value);
  if (found == 0) {
    counter = new std::int64_t{0};  // owned by the attribute: delete_counter frees it
    SHARDMM_MPI(MPI_Comm_set_attr(comm, key, counter));
  }
  return tags::kChainBase + static_cast<int>((*counter)++ % tags::kChainCount);
}

// Chunk c of relay r's message: where it starts and how many elements it holds.
std::pair<char*, int> chunk_of(const Relay& r, std::size_t c) {
  const auto first = static_cast<std::int64_t>(c) * r.chunk;
  return {r.base + first * static_cast<std::int64_t>(r.elem),
          static_cast<int>(std::min(r.chunk, r.count - first))};
}

// Sends chunk c of relay r on to its next rank (the request joins q.reqs).
void send_on(const Relay& r, std::size_t c, Requests& q) {
  const auto [at, n] = chunk_of(r, c);
  q.reqs.emplace_back();
  SHARDMM_MPI(MPI_Isend(at, n, r.type, r.next, r.tag, r.comm, &q.reqs.back()));
}

// Relays relay r's chunks that have arrived, in order, up to the first one still on its way.
void forward_ready(Relay& r, Requests& q) {
  while (!r.done()) {
    int arrived = 0;
    SHARDMM_MPI(MPI_Test(&r.arrivals[r.forwarded], &arrived, MPI_STATUS_IGNORE));
    if (arrived == 0) return;
    send_on(r, r.forwarded++, q);
  }
}

}  // namespace

void chain_ibcast(void* buf, std::int64_t count, std::int64_t chunk, std::size_t elem,
                  MPI_Datatype type, int root, MPI_Comm comm, Requests& out) {
  const int P = comm_size(comm), me = comm_rank(comm), tag = next_tag(comm);
  const int pos = (me - root + P) % P;  // place in the chain: the root is 0
  Relay r{{}, static_cast<char*>(buf), count, chunk, elem, type, (me + 1) % P, tag, comm, 0};
  const std::size_t chunks = static_cast<std::size_t>((count + chunk - 1) / chunk);
  if (pos == 0) {  // the root: every chunk to the next rank now
    r.forwarded = chunks;
    for (std::size_t c = 0; c < chunks; ++c) send_on(r, c, out);
    return;
  }
  std::vector<MPI_Request> arrivals(chunks);  // chunk c from the previous rank into its place
  for (std::size_t c = 0; c < chunks; ++c) {
    const auto [at, n] = chunk_of(r, c);
    SHARDMM_MPI(MPI_Irecv(at, n, type, (me + P - 1) % P, tag, comm, &arrivals[c]));
  }
  if (pos == P - 1) {  // the last rank only receives
    out.reqs.insert(out.reqs.end(), arrivals.begin(), arrivals.end());
    return;
  }
  r.arrivals = std::move(arrivals);
  out.relays.push_back(std::move(r));
}

bool relay_arrived(Requests& q) {
  bool all = true;
  for (Relay& r : q.relays) {
    forward_ready(r, q);
    all = all && r.done();
  }
  if (all) q.relays.clear();
  return all;
}

void relay_all(Requests& q) {
  std::vector<MPI_Request> heads;
  std::vector<Relay*> owners;
  while (!relay_arrived(q)) {  // wait for any chain's next chunk, relay it, then the rest ready
    heads.clear();
    owners.clear();
    for (Relay& r : q.relays)
      if (!r.done()) {
        heads.push_back(r.arrivals[r.forwarded]);
        owners.push_back(&r);
      }
    const int i = wait_any(heads);
    if (i == MPI_UNDEFINED) throw Error("chain broadcast: no chunk left to wait for");
    Relay& r = *owners[static_cast<std::size_t>(i)];
    r.arrivals[r.forwarded] = MPI_REQUEST_NULL;  // completed and freed by wait_any
    send_on(r, r.forwarded++, q);
  }
}

}  // namespace shardmm::comm
