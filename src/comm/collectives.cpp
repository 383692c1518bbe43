#include "comm/collectives.hpp"

#include <algorithm>
#include <complex>
#include <numeric>

#include "comm/chain_bcast.hpp"
#include "comm/mpi_check.hpp"
#include "comm/traffic.hpp"
#include "comm/wait.hpp"
#include "comm/wire.hpp"
#include "core/instantiate.hpp"
#include "memory/workspace.hpp"

namespace shardmm::comm {

void Requests::land() {
  for (auto& f : landing) f();
  landing.clear();
}

void Requests::wait() {
  if (empty()) return;
  trace::Span span("MPI_Waitall", trace::Cat::Wait);
  span.waits_for(flights);
  if (!relays.empty()) relay_all(*this);
  wait_all(reqs);  // spinning or sleeping (comm/wait.hpp)
  reqs.clear();
  if (!flights.empty()) trace::landed(flights);
  land();
}

bool Requests::test() {
  if (empty()) return true;
  const bool relayed = relays.empty() || relay_arrived(*this);
  int done = 0;
  SHARDMM_MPI(MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE));
  if (done) reqs.clear();
  if (!relayed || !done) return false;
  if (!flights.empty()) trace::landed(flights);
  land();
  return true;
}

bool test_each(std::span<Requests* const> requests) {
  bool all = true;
  for (Requests* r : requests) all = r->test() && all;
  return all;
}

void describe(trace::Span& span, MPI_Comm comm, const char* role, int rank) {
  if (!span) return;
  span.text("comm", trace::comm_label(comm));
  if (role != nullptr) span.arg(role, std::int64_t{trace::world_ranks(comm).at(rank)});
}

namespace {
constexpr auto bytes = [](std::int64_t n, std::size_t size) {
  return n * static_cast<std::int64_t>(size);
};

// Calls post(offset, n) for consecutive pieces of at most max_message_elems().
template <class F>
void in_pieces(std::int64_t count, F&& post) {
  const std::int64_t limit = max_message_elems();
  for (std::int64_t off = 0; off < count; off += limit)
    post(off, static_cast<int>(std::min(limit, count - off)));
}

// A receiver's view of its float buffer while the 16-bit patterns arrive in its first half.
std::uint16_t* as_bits(float* buf) { return reinterpret_cast<std::uint16_t*>(buf); }

// Sends `count` floats as their 16-bit patterns: `post` gets the staging buffer, which `out`
// keeps until the transfer has landed.
template <class F>
void send_narrowed(const float* buf, std::int64_t count, Requests& out, F&& post) {
  const Wire w = wire();
  auto staged = std::make_shared<Staging>(count);
  narrow(w, buf, staged->data(), count);
  post(staged->data());
  out.landing.emplace_back([staged] {});  // holds the staging buffer until then
}

// Receives `count` floats as 16-bit patterns into the buffer's first half (`post`), widened
// in place once they have landed.
template <class F>
void receive_narrowed(float* buf, std::int64_t count, Requests& out, F&& post) {
  const Wire w = wire();
  post(as_bits(buf));
  out.landing.emplace_back([w, buf, count] { widen_in_place(w, buf, count); });
}
}  // namespace

template <class T>
void ibcast(T* buf, std::int64_t count, int root, MPI_Comm comm, Requests& out) {
  const int P = comm_size(comm);
  if (P == 1 || count == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (on_wire<T>()) {
      auto post = [&](std::uint16_t* bits) { ibcast(bits, count, root, comm, out); };
      if (comm_rank(comm) == root) send_narrowed(buf, count, out, post);
      else receive_narrowed(buf, count, out, post);
      return;
    }
  }
  trace::Span span("ibcast", trace::Cat::Comm);
  const std::int64_t b = bytes(count, sizeof(T));
  if (comm_rank(comm) == root) tally(span, b * (P - 1), 0, P - 1);
  else tally(span, 0, b, 0);
  describe(span, comm, "root", root);
  if (trace::active()) out.flights.push_back(trace::posted("ibcast", comm, root, b, true));
  const std::int64_t chunk =
      std::min(bcast_chunk_bytes() / std::int64_t{sizeof(T)}, max_message_elems());
  if (P >= 3 && chunk > 0 && count >= 2 * chunk) {
    chain_ibcast(buf, count, chunk, sizeof(T), mpi_type<T>(), root, comm, out);
    return;
  }
  in_pieces(count, [&](std::int64_t off, int n) {
    out.reqs.emplace_back();
    SHARDMM_MPI(MPI_Ibcast(buf + off, n, mpi_type<T>(), root, comm, &out.reqs.back()));
  });
}

template <class T>
void isend(const T* buf, std::int64_t count, int peer, int tag, MPI_Comm comm, Requests& out) {
  if (count == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (on_wire<T>())
      return send_narrowed(buf, count, out, [&](const std::uint16_t* bits) {
        isend(bits, count, peer, tag, comm, out);
      });
  }
  trace::Span span("isend", trace::Cat::Comm);
  tally(span, bytes(count, sizeof(T)), 0, 1);
  describe(span, comm, "peer", peer);
  if (trace::active())
    out.flights.push_back(trace::posted("isend", comm, peer, bytes(count, sizeof(T)), false));
  in_pieces(count, [&](std::int64_t off, int n) {
    out.reqs.emplace_back();
    SHARDMM_MPI(MPI_Isend(buf + off, n, mpi_type<T>(), peer, tag, comm, &out.reqs.back()));
  });
}

template <class T>
void irecv(T* buf, std::int64_t count, int peer, int tag, MPI_Comm comm, Requests& out) {
  if (count == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    if (on_wire<T>())
      return receive_narrowed(
          buf, count, out, [&](std::uint16_t* bits) { irecv(bits, count, peer, tag, comm, out); });
  }
  trace::Span span("irecv", trace::Cat::Comm);
  tally(span, 0, bytes(count, sizeof(T)), 0);
  describe(span, comm, "peer", peer);
  if (trace::active())
    out.flights.push_back(trace::posted("irecv", comm, peer, bytes(count, sizeof(T)), false));
  in_pieces(count, [&](std::int64_t off, int n) {
    out.reqs.emplace_back();
    SHARDMM_MPI(MPI_Irecv(buf + off, n, mpi_type<T>(), peer, tag, comm, &out.reqs.back()));
  });
}

namespace {
// allgatherv of floats as 16-bit patterns: the own piece is rounded into a staging buffer laid
// out like `recv`, the pieces are gathered there, and the others' are widened into `recv` (the
// own piece stays as it was).
void allgatherv_narrowed(float* recv, const std::vector<std::int64_t>& counts,
                         const std::vector<std::int64_t>& displs, MPI_Comm comm) {
  const int P = comm_size(comm), me = comm_rank(comm);
  std::int64_t end = 0;
  for (int r = 0; r < P; ++r) end = std::max(end, displs[r] + counts[r]);
  const Wire w = wire();
  Staging staged(end);
  narrow(w, recv + displs[me], staged.data() + displs[me], counts[me]);
  allgatherv(staged.data(), counts, displs, comm);
  for (int r = 0; r < P; ++r)
    if (r != me) widen(w, staged.data() + displs[r], recv + displs[r], counts[r]);
}
}  // namespace

template <class T>
void allgatherv(T* recv, const std::vector<std::int64_t>& counts,
                const std::vector<std::int64_t>& displs, MPI_Comm comm) {
  const int P = comm_size(comm), me = comm_rank(comm);
  if (P == 1) return;
  if constexpr (std::is_same_v<T, float>) {
    if (on_wire<T>()) return allgatherv_narrowed(recv, counts, displs, comm);
  }
  const std::int64_t total = std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
  trace::Span span("allgatherv", trace::Cat::Comm);
  tally(span, bytes(counts[me], sizeof(T)) * (P - 1), bytes(total - counts[me], sizeof(T)),
        counts[me] > 0 ? P - 1 : 0);
  describe(span, comm);
  if (span.seen())
    span.blocked("MPI_Allgatherv", std::to_string(bytes(total, sizeof(T))) + " B in all", comm);
  const std::int64_t limit = max_message_elems();
  const bool fits = std::all_of(displs.begin(), displs.end(), [&](auto d) { return d <= limit; }) &&
                    std::all_of(counts.begin(), counts.end(), [&](auto c) { return c <= limit; });
  if (fits) {
    std::vector<int> c(counts.begin(), counts.end()), d(displs.begin(), displs.end());
    SHARDMM_MPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, c.data(), d.data(),
                               mpi_type<T>(), comm));
    return;
  }
  // Split path: every rank broadcasts its piece (in pieces) to the others.
  Requests reqs;
  for (int r = 0; r < P; ++r)
    in_pieces(counts[r], [&](std::int64_t off, int n) {
      reqs.reqs.emplace_back();
      SHARDMM_MPI(MPI_Ibcast(recv + displs[r] + off, n, mpi_type<T>(), r, comm, &reqs.reqs.back()));
    });
  reqs.wait();
}

namespace {

// Ring reduce-scatter (ring_reduce_steps): the running sums live in the workspace. Open MPI's
// MPI_Reduce_scatter allocates its temporaries on every call, and first-touching fresh pages
// costs about 14 us per 4 KiB on these machines.
template <class T>
void ring_reduce_scatter(const T* send, T* recv, const std::vector<std::int64_t>& counts,
                         MPI_Comm comm) {
  const int P = comm_size(comm), me = comm_rank(comm);
  std::vector<std::int64_t> displs(counts.size(), 0);
  for (std::size_t r = 1; r < counts.size(); ++r) displs[r] = displs[r - 1] + counts[r - 1];
  const std::int64_t widest = *std::max_element(counts.begin(), counts.end());
  T* ring[2] = {memory::get<T>(memory::Slot::Reduction0, widest),
                memory::get<T>(memory::Slot::Reduction1, widest)};
  ring_reduce_steps(
      comm, 23, send + displs[static_cast<std::size_t>((me + P - 1) % P)],  // my part of r-1
      [&](int b) { return counts[static_cast<std::size_t>(b)]; },
      [&](int s, int) { return s + 2 == P ? recv : ring[s % 2]; },  // the last lands in recv
      [](Requests& q) { q.wait(); },
      [&](int b, T* in, bool) -> const T* {
        const T* mine = send + displs[static_cast<std::size_t>(b)];
        for (std::int64_t e = 0; e < counts[static_cast<std::size_t>(b)]; ++e) in[e] += mine[e];
        return in;
      });
}

}  // namespace

template <class T>
void reduce_scatter(const T* send, T* recv, const std::vector<std::int64_t>& counts,
                    MPI_Comm comm) {
  if (comm_size(comm) == 1) {
    std::copy_n(send, std::accumulate(counts.begin(), counts.end(), std::int64_t{0}), recv);
    return;
  }
  trace::Span span("reduce_scatter", trace::Cat::Comm);  // bytes: in its isend/irecv spans
  describe(span, comm);
  const WireScope sums(Wire::F32);                // partial sums travel as stored
  ring_reduce_scatter(send, recv, counts, comm);  // isend/irecv count and split the messages
}

void bcast_string(MPI_Comm comm, std::string& s, int root) {
  trace::Span span("bcast_string", trace::Cat::Comm);
  describe(span, comm, "root", root);
  if (span.seen()) span.blocked("MPI_Bcast", "a string", comm, {root});
  auto len = static_cast<std::int64_t>(s.size());
  SHARDMM_MPI(MPI_Bcast(&len, 1, MPI_INT64_T, root, comm));
  s.resize(static_cast<std::size_t>(len));
  SHARDMM_MPI(MPI_Bcast(s.data(), static_cast<int>(len), MPI_CHAR, root, comm));
}

namespace {
// MPI has no 16-bit floating-point type: the sum of two bf16 or f16 vectors, in f32, rounded.
template <class H>
// NOLINTNEXTLINE(readability-non-const-parameter): MPI_User_function's signature
void half_sum(void* in, void* inout, int* len, MPI_Datatype* /*type*/) {
  const auto* a = static_cast<const H*>(in);
  auto* b = static_cast<H*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = H(float(a[i]) + float(b[i]));
}

template <class T>
MPI_Op sum_op() {
  if constexpr (is_half_v<T>) {
    static const MPI_Op op = [] {
      MPI_Op made = MPI_OP_NULL;
      SHARDMM_MPI(MPI_Op_create(&half_sum<T>, 1, &made));
      return made;
    }();
    return op;
  } else {
    return MPI_SUM;
  }
}
}  // namespace

template <class T>
void allreduce_sum(T* buf, std::int64_t count, MPI_Comm comm) {
  const int P = comm_size(comm);
  if (P == 1 || count == 0) return;
  trace::Span span("allreduce", trace::Cat::Comm);
  // logical: reduce-scatter then all-gather of the result
  const std::int64_t share = bytes(count, sizeof(T)) * (P - 1) / P;
  tally(span, 2 * share, 2 * share, 2 * std::int64_t{P - 1});
  describe(span, comm);
  if (span.seen())
    span.blocked("MPI_Allreduce", "sum of " + std::to_string(bytes(count, sizeof(T))) + " B", comm);
  in_pieces(count, [&](std::int64_t off, int n) {
    SHARDMM_MPI(MPI_Allreduce(MPI_IN_PLACE, buf + off, n, mpi_type<T>(), sum_op<T>(), comm));
  });
}

#define SHARDMM_INSTANTIATE(T)                                                               \
  template void ibcast<T>(T*, std::int64_t, int, MPI_Comm, Requests&);                       \
  template void isend<T>(const T*, std::int64_t, int, int, MPI_Comm, Requests&);             \
  template void irecv<T>(T*, std::int64_t, int, int, MPI_Comm, Requests&);                   \
  template void allgatherv<T>(T*, const std::vector<std::int64_t>&,                          \
                              const std::vector<std::int64_t>&, MPI_Comm);                   \
  template void reduce_scatter<T>(const T*, T*, const std::vector<std::int64_t>&, MPI_Comm); \
  template void allreduce_sum<T>(T*, std::int64_t, MPI_Comm);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
SHARDMM_FOR_EACH_HALF(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

// The 16-bit patterns of the f32 wire (movement only).
template void ibcast<std::uint16_t>(std::uint16_t*, std::int64_t, int, MPI_Comm, Requests&);
template void isend<std::uint16_t>(const std::uint16_t*, std::int64_t, int, int, MPI_Comm,
                                   Requests&);
template void irecv<std::uint16_t>(std::uint16_t*, std::int64_t, int, int, MPI_Comm, Requests&);
template void allgatherv<std::uint16_t>(std::uint16_t*, const std::vector<std::int64_t>&,
                                        const std::vector<std::int64_t>&, MPI_Comm);

}  // namespace shardmm::comm
