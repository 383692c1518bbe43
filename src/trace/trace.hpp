// Spans: named intervals of a rank's work (a call, a phase, an algorithm step, an exchange, a
// wait, a local GEMM, a file transfer), recorded for the trace (SHARDMM_TRACE, Options::trace)
// and shown by the watchdog (SHARDMM_WATCHDOG). Spans record only inside a call that is traced
// or watched (trace::Call, call.hpp, opened by the public entry points); otherwise a span costs
// one test of a global flag when it opens and one of its own index when it closes.
//
//   trace::Span s("alltoallv", trace::Cat::Comm);
//   if (s) s.arg("bytes_sent", n);            // arguments only when recording
//
// Names are string literals (the watchdog's thread reads them while the span is open). Spans
// nest strictly (RAII) and belong to the thread that opened the call.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace shardmm::trace {

/// What a span is; the trace's "cat" field and the watchdog's phase (Call, Phase).
enum class Cat : std::uint8_t { Call, Phase, Step, Comm, Wait, Blas, Io };
const char* category_name(Cat c);

namespace detail {
constexpr int kRecord = 1;               // a trace is being recorded
constexpr int kWatch = 2;                // the watchdog watches this rank
inline int mode = 0;                     // set by trace::Call for the duration of an outermost call
inline thread_local bool muted = false;  // this thread records nothing (trace::Muted)
constexpr int kOff = -1;                 // a span that records nothing
constexpr int kWatched = -2;             // a span the watchdog sees but no trace records
int open(const char* name, Cat cat, std::int64_t step) noexcept;
void close(int id) noexcept;
void arg(int id, const char* key, double value, bool integral) noexcept;
void text(int id, const char* key, std::string value) noexcept;
void rate(int id, double flops) noexcept;
void blocked(int id, const char* op, const std::string& what, MPI_Comm comm,
             const std::vector<int>& peers) noexcept;
}  // namespace detail

/// While it lives, spans opened on this thread record nothing: for a worker thread that runs
/// a GEMM beside the call's own thread (the recorder and the watchdog follow one thread's
/// stack of spans).
class Muted {
 public:
  Muted() noexcept : was_(detail::muted) { detail::muted = true; }
  ~Muted() { detail::muted = was_; }
  Muted(const Muted&) = delete;
  Muted& operator=(const Muted&) = delete;
  Muted(Muted&&) = delete;
  Muted& operator=(Muted&&) = delete;

 private:
  bool was_;
};

struct Flight;

class Span {
 public:
  Span(const char* name, Cat cat, std::int64_t step = -1) noexcept {
    if (detail::mode != 0 && !detail::muted) [[unlikely]]
      id_ = detail::open(name, cat, step);
  }
  ~Span() {
    if (id_ != detail::kOff) [[unlikely]]
      detail::close(id_);
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  Span(Span&&) = delete;
  Span& operator=(Span&&) = delete;

  /// True when a trace records this span (compute arguments only then).
  explicit operator bool() const noexcept { return id_ >= 0; }
  /// True when a trace records it or the watchdog watches it.
  [[nodiscard]] bool seen() const noexcept { return id_ != detail::kOff; }

  Span& arg(const char* key, std::int64_t value) noexcept {
    if (id_ >= 0) detail::arg(id_, key, static_cast<double>(value), true);
    return *this;
  }
  Span& arg(const char* key, double value) noexcept {
    if (id_ >= 0) detail::arg(id_, key, value, false);
    return *this;
  }
  Span& text(const char* key, std::string value) noexcept {
    if (id_ >= 0) detail::text(id_, key, std::move(value));
    return *this;
  }
  /// A local GEMM's floating-point operations: "gflops" is added when the span closes.
  Span& flops(double n) noexcept {
    if (id_ >= 0) detail::rate(id_, n);
    return *this;
  }
  /// While this span is open the rank blocks in MPI call `op` ("MPI_Waitall", ...): `what`
  /// says on what; every rank of `comm` must arrive (a collective; MPI_COMM_NULL: none) and
  /// `peers` (ranks in `comm`) must send. The trace gets it as arguments, the watchdog as the
  /// operation this rank waits in.
  void blocked(const char* op, const std::string& what, MPI_Comm comm,
               const std::vector<int>& peers = {}) noexcept {
    if (id_ != detail::kOff) detail::blocked(id_, op, what, comm, peers);
  }
  /// Blocks in MPI_Waitall until `flights` complete.
  void waits_for(const std::vector<Flight>& flights) noexcept;

 private:
  int id_ = detail::kOff;
};

/// A counter sample ("ph":"C"), e.g. the workspace's bytes held. Only while recording.
void counter(const char* name, double value) noexcept;

/// Seconds on this rank's steady clock (the trace's and the watchdog's clock).
double now() noexcept;

/// True inside a traced or watched call.
inline bool active() noexcept { return detail::mode != 0; }
/// True inside a traced call.
inline bool recording() noexcept { return (detail::mode & detail::kRecord) != 0; }

/// A non-blocking operation from posting to observed completion (an asynchronous event on the
/// rank's track): comm::Requests keeps them while active and lands them on completion.
struct Flight {
  const char* op = nullptr;  // "ibcast", "isend", "irecv"
  double posted = 0;
  std::int64_t bytes = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  int peer = -1;            // root or peer, rank in comm
  bool collective = false;  // every rank of comm takes part (ibcast)
};
inline Flight posted(const char* op, MPI_Comm comm, int peer, std::int64_t bytes, bool collective) {
  return Flight{op, now(), bytes, comm, peer, collective};
}
void landed(std::vector<Flight>& flights) noexcept;  ///< records them as completed now; clears

/// World ranks of `comm`'s members and a label ("ranks 0-3", "ranks 0,2"); cached on the
/// communicator (an MPI attribute), computed once per communicator.
const std::vector<int>& world_ranks(MPI_Comm comm);
const std::string& comm_label(MPI_Comm comm);

}  // namespace shardmm::trace
