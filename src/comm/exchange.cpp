// alltoallv: pack-free exchange of contiguous per-peer segments.
//   fast path: MPI_Alltoallv over `comm` (counts fit in int and below max_message_elems()).
//   split path: each segment goes as ceil(count / limit) Isend/Irecv pieces (comm/tags.hpp),
//   all posted at once and completed by comm::wait_all. Also taken when any rank sleeps while
//   it waits (SHARDMM_WAIT, comm/wait.hpp): MPI_Alltoallv would spin inside Open MPI, taking
//   the shared cores from the TCP stacks that move the very data it waits for.
#include "comm/exchange.hpp"

#include <algorithm>
#include <complex>

#include "comm/collectives.hpp"
#include "comm/mpi_check.hpp"
#include "comm/tags.hpp"
#include "comm/traffic.hpp"
#include "comm/wait.hpp"
#include "comm/wire.hpp"
#include "core/instantiate.hpp"

namespace shardmm::comm {

Traffic& traffic() {
  static Traffic t;
  return t;
}

Traffic& redistribution_traffic() {
  static Traffic t;
  return t;
}

void tally(trace::Span& span, std::int64_t sent, std::int64_t received, std::int64_t messages) {
  Traffic& t = traffic();
  t.bytes_sent += sent;
  t.bytes_received += received;
  t.messages += messages;
  if (span) span.arg("bytes_sent", sent).arg("bytes_received", received).arg("messages", messages);
}

namespace {
thread_local bool g_layout_change = true;
}  // namespace

RedistributionRole::RedistributionRole(bool layout_change) : previous_(g_layout_change) {
  g_layout_change = layout_change;
}
RedistributionRole::~RedistributionRole() { g_layout_change = previous_; }
bool RedistributionRole::layout_change() { return g_layout_change; }

namespace {

thread_local std::int64_t g_pointwise = 0;

bool fits(const std::vector<std::int64_t>& v, std::int64_t limit) {
  return std::all_of(v.begin(), v.end(), [&](std::int64_t x) { return x <= limit; });
}

template <class T>
void exchange_split(MPI_Comm comm, const T* send, const std::vector<std::int64_t>& sc,
                    const std::vector<std::int64_t>& sd, T* recv,
                    const std::vector<std::int64_t>& rc, const std::vector<std::int64_t>& rd) {
  const std::int64_t limit = max_message_elems();
  const int P = comm_size(comm);
  std::vector<MPI_Request> reqs;
  auto post = [&](bool is_send, int peer, T* base, std::int64_t count) {
    for (std::int64_t off = 0, piece = 0; off < count; off += limit, ++piece) {
      const int n = static_cast<int>(std::min(limit, count - off));
      const int tag = tags::kExchangeBase + static_cast<int>(piece % tags::kExchangeCount);
      reqs.emplace_back();
      if (is_send)
        SHARDMM_MPI(MPI_Isend(base + off, n, mpi_type<T>(), peer, tag, comm, &reqs.back()));
      else SHARDMM_MPI(MPI_Irecv(base + off, n, mpi_type<T>(), peer, tag, comm, &reqs.back()));
    }
  };
  for (int r = 0; r < P; ++r) post(false, r, recv + rd[r], rc[r]);
  for (int r = 0; r < P; ++r) post(true, r, const_cast<T*>(send) + sd[r], sc[r]);
  wait_all(reqs);
}

}  // namespace

namespace {
std::int64_t extent(const std::vector<std::int64_t>& counts,
                    const std::vector<std::int64_t>& displs) {
  std::int64_t end = 0;
  for (std::size_t r = 0; r < counts.size(); ++r)
    if (counts[r] > 0) end = std::max(end, displs[r] + counts[r]);
  return end;
}

// alltoallv of floats under a 16-bit wire (comm/wire.hpp): the segments to others are rounded
// into a staging buffer laid out like `send`, exchanged as 16-bit patterns into one laid out
// like `recv`, and the others' segments widened into `recv` (the own one is copied as is).
void alltoallv_narrowed(MPI_Comm comm, const float* send, const std::vector<std::int64_t>& sc,
                        const std::vector<std::int64_t>& sd, float* recv,
                        const std::vector<std::int64_t>& rc, const std::vector<std::int64_t>& rd) {
  const int P = comm_size(comm), me = comm_rank(comm);
  const Wire w = wire();
  Staging out(extent(sc, sd)), in(extent(rc, rd));
  for (int r = 0; r < P; ++r)
    if (r != me) narrow(w, send + sd[r], out.data() + sd[r], sc[r]);
  std::vector<std::int64_t> sc2 = sc, rc2 = rc;
  sc2[me] = rc2[me] = 0;  // the own segment is not rounded
  alltoallv(comm, static_cast<const std::uint16_t*>(out.data()), sc2, sd, in.data(), rc2, rd);
  for (int r = 0; r < P; ++r)
    if (r != me) widen(w, in.data() + rd[r], recv + rd[r], rc[r]);
  std::copy_n(send + sd[me], sc[me], recv + rd[me]);
}
}  // namespace

template <class T>
void alltoallv(MPI_Comm comm, const T* send, const std::vector<std::int64_t>& send_counts,
               const std::vector<std::int64_t>& send_displs, T* recv,
               const std::vector<std::int64_t>& recv_counts,
               const std::vector<std::int64_t>& recv_displs) {
  if constexpr (std::is_same_v<T, float>) {
    if (wire() != Wire::F32)
      return alltoallv_narrowed(comm, send, send_counts, send_displs, recv, recv_counts,
                                recv_displs);
  }
  const auto& sc = send_counts;
  const auto& sd = send_displs;
  const auto& rc = recv_counts;
  const auto& rd = recv_displs;
  const int P = comm_size(comm);
  const int me = comm_rank(comm);
  Traffic moved;
  for (int r = 0; r < P; ++r) {
    if (r == me) continue;
    moved.bytes_sent += sc[r] * static_cast<std::int64_t>(sizeof(T));
    moved.bytes_received += rc[r] * static_cast<std::int64_t>(sizeof(T));
    moved.messages += sc[r] > 0 ? 1 : 0;
  }
  trace::Span span("alltoallv", trace::Cat::Comm);
  tally(span, moved.bytes_sent, moved.bytes_received, moved.messages);
  describe(span, comm);
  const std::int64_t limit = max_message_elems();
  // Every rank must take the same path: a rank whose own counts fit, or that spins, would
  // otherwise enter MPI_Alltoallv while a peer posts point-to-point pieces (deadlock).
  const bool all_fit = fits(sc, limit) && fits(sd, limit) && fits(rc, limit) && fits(rd, limit);
  int split = all_fit && wait_mode() == WaitMode::Spin ? 0 : 1;
  if (span.seen()) span.blocked("MPI_Allreduce", "agree the exchange's path", comm);
  SHARDMM_MPI(MPI_Allreduce(MPI_IN_PLACE, &split, 1, MPI_INT, MPI_MAX, comm));
  // The hang reporter names the call the rank now waits in.
  if (span.seen())
    span.blocked(split ? "MPI_Waitall" : "MPI_Alltoallv",
                 std::to_string(moved.bytes_sent) + " B out, " +
                     std::to_string(moved.bytes_received) + " B in" +
                     (split ? ", the exchange's point-to-point pieces" : ""),
                 comm);
  if (split) {
    ++g_pointwise;
    exchange_split(comm, send, sc, sd, recv, rc, rd);
    return;
  }
  std::vector<int> isc(sc.begin(), sc.end()), isd(sd.begin(), sd.end());
  std::vector<int> irc(rc.begin(), rc.end()), ird(rd.begin(), rd.end());
  SHARDMM_MPI(MPI_Alltoallv(send, isc.data(), isd.data(), mpi_type<T>(), recv, irc.data(),
                            ird.data(), mpi_type<T>(), comm));
}

std::int64_t pointwise_exchanges() { return g_pointwise; }

#define SHARDMM_INSTANTIATE(T)                                                     \
  template void alltoallv<T>(MPI_Comm, const T*, const std::vector<std::int64_t>&, \
                             const std::vector<std::int64_t>&, T*,                 \
                             const std::vector<std::int64_t>&, const std::vector<std::int64_t>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
SHARDMM_FOR_EACH_HALF(SHARDMM_INSTANTIATE)
SHARDMM_INSTANTIATE(std::uint16_t)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::comm
