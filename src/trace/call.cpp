// trace::Call: the outermost call switches recording and watching on and off; see call.hpp.
#include "trace/call.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "comm/mpi_check.hpp"
#include "memory/workspace.hpp"
#include "shardmm/config.hpp"
#include "shardmm/error.hpp"
#include "trace/events.hpp"
#include "trace/watchdog.hpp"

namespace shardmm::trace {
namespace {

int g_depth = 0;  // Calls open on this thread's stack

int world_rank() {
  int r = 0;
  SHARDMM_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &r));
  return r;
}

// Where rank 0 makes the status directory: SHARDMM_WATCHDOG_DIR, else TMPDIR, else /tmp.
std::string status_base() {
  if (auto dir = environment("SHARDMM_WATCHDOG_DIR")) return *dir;
  const char* tmp = std::getenv("TMPDIR");  // the system's variable, not one of ours
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// Collective, once per communicator: rank 0 makes the status directory; all learn its path.
// Watched already (with no directory to share yet): a rank that waits here for a rank that
// never comes (an SPMD mistake) says so and, with :abort, ends the job.
void watch_dir(MPI_Comm comm, CommFacts& f, const watchdog::Settings& watch, const char* call) {
  watchdog::begin_call(watch, {"", world_rank(), comm::comm_rank(comm), f.world});
  watchdog::push(call, Cat::Call, -1);
  watchdog::push("status directory", Cat::Wait, -1);
  watchdog::blocked("MPI_Bcast",
                    "the watchdog's status directory from rank " + std::to_string(f.world.front()),
                    f.world, {f.world.front()});
  std::string dir;
  try {
    if (comm::comm_rank(comm) == 0) {
      std::string templ = status_base() + "/shardmm-watchdog-XXXXXX";
      if (::mkdtemp(templ.data()) != nullptr) {
        dir = templ;
        watchdog::own(dir);
      }
    }
    int len = static_cast<int>(dir.size());
    SHARDMM_MPI(MPI_Bcast(&len, 1, MPI_INT, 0, comm));
    dir.resize(static_cast<std::size_t>(len));
    SHARDMM_MPI(MPI_Bcast(dir.data(), len, MPI_CHAR, 0, comm));
  } catch (...) {
    watchdog::end_call();
    throw;
  }
  watchdog::end_call();
  if (dir.empty())
    throw IoError("SHARDMM_WATCHDOG: rank 0 cannot create a status directory (set "
                  "SHARDMM_WATCHDOG_DIR to a writable directory)");
  f.watch_dir = dir;
}

// SHARDMM_WATCHDOG for a call of this kind: set-up leaves a malformed setting for the first
// library call to report (on every rank), and is not watched then.
watchdog::Settings settings_for(Call::Kind kind) {
  if (kind == Call::Kind::LibraryCall) return watchdog::settings();
  try {
    return watchdog::settings();
  } catch (const InvalidArgument&) {
    return {};
  }
}

}  // namespace

std::string trace_file(const std::string& option) {
  if (!option.empty()) return option;
  return environment("SHARDMM_TRACE").value_or("");
}

void prepare_watch(MPI_Comm comm) {
  watchdog::Settings watch;
  try {
    watch = watchdog::settings();
  } catch (const InvalidArgument&) {
    return;  // the first Call throws it, on every rank
  }
  // Inside a call (a mesh made by gemm), whose watching this must not disturb: the mesh's
  // own calls would be its phases anyway.
  if (watch.seconds <= 0 || comm == MPI_COMM_NULL || g_depth > 0) return;
  CommFacts& f = facts(comm);
  if (f.watch_dir.empty()) watch_dir(comm, f, watch, "mesh");
}

Call::Call(MPI_Comm comm, const char* name, const std::string& trace_file_option, Kind kind)
    : exceptions_(std::uncaught_exceptions()) {
  if (g_depth++ > 0 || comm == MPI_COMM_NULL) {
    span_.emplace(name, Cat::Phase);
    return;
  }
  try {
    const watchdog::Settings watch = settings_for(kind);
    file_ = kind == Kind::SetUp ? std::string() : trace_file(trace_file_option);
    if (!file_.empty() || watch.seconds > 0) {
      CommFacts& f = facts(comm);
      if (!file_.empty()) {
        if (std::find(f.checked.begin(), f.checked.end(), file_) == f.checked.end()) {
          check_target(comm, file_);
          f.checked.push_back(file_);
        }
        if (!f.synced) align_clock(comm, f);
        recorder().clear();
      }
      if (watch.seconds > 0) {
        if (f.watch_dir.empty()) watch_dir(comm, f, watch, name);
        watchdog::begin_call(watch, {f.watch_dir, world_rank(), comm::comm_rank(comm), f.world});
      }
      comm_ = comm;
      outer_ = true;
      detail::mode =
          (file_.empty() ? 0 : detail::kRecord) | (watch.seconds > 0 ? detail::kWatch : 0);
    }
  } catch (...) {
    --g_depth;
    throw;
  }
  span_.emplace(name, Cat::Call);
  counter("workspace bytes", static_cast<double>(memory::held_bytes()));
}

void Call::done() {
  if (!outer_) return;
  const bool recording = (detail::mode & detail::kRecord) != 0;
  CommFacts& f = facts(comm_);
  if (recording) {
    span_->arg("clock_offset_us", f.offset * 1e6).arg("clock_error_us", f.error * 1e6);
    if (recorder().dropped > 0) span_->arg("events_dropped", recorder().dropped);
    counter("workspace bytes", static_cast<double>(memory::held_bytes()));
  }
  span_.reset();
  if ((detail::mode & detail::kWatch) != 0) watchdog::end_call();
  detail::mode = 0;
  outer_ = false;
  if (!recording) return;
  const std::string mine = serialize(recorder().events, world_rank(), f.offset);
  recorder().clear();
  gather_and_write(comm_, file_, mine);
}

Call::~Call() {
  if (outer_ && std::uncaught_exceptions() == exceptions_) try {
      done();
    } catch (const std::exception& e) {  // a destructor cannot throw: say it
      (void)std::fprintf(stderr, "shardmm: %s\n", e.what());
    }
  span_.reset();
  if (outer_) {  // left by an exception: the records go
    if ((detail::mode & detail::kWatch) != 0) watchdog::end_call();
    detail::mode = 0;
    recorder().clear();
  }
  --g_depth;
}

}  // namespace shardmm::trace
