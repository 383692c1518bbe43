#include "comm/wait.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "comm/mpi_check.hpp"
#include "shardmm/config.hpp"
#include "shardmm/error.hpp"

namespace shardmm::comm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kSpinFirst = std::chrono::microseconds(50);
constexpr auto kFirstNap = std::chrono::microseconds(20),
               kLongestNap = std::chrono::microseconds(200);

WaitMode g_mode = WaitMode::Spin;  // the open call's (WaitScope), for all of the process's threads
thread_local int g_scopes = 0;     // WaitScopes open on this thread's stack
thread_local std::int64_t g_sleeps = 0;

// The launcher's count of ranks on this node (Open MPI; MPICH's and Intel MPI's Hydra;
// MVAPICH), 0 when unknown: auto then spins, as it would on a node with a core per rank.
long local_ranks() {
  for (const char* name :
       {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_LOCAL_SIZE"})
    if (const char* v = std::getenv(name)) return std::strtol(v, nullptr, 10);
  return 0;
}

long usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  return CPU_COUNT(&set);
}

// Sleep mode's loop: test until `done` says so; spin for the first 50 us, then sleep between
// tests, each nap twice the last up to 200 us.
template <class Test>
void politely(Test&& done) {
  const auto start = Clock::now();
  auto nap = kFirstNap;
  while (!done()) {
    if (Clock::now() - start < kSpinFirst) continue;
    std::this_thread::sleep_for(nap);
    ++g_sleeps;
    nap = std::min(nap * 2, kLongestNap);
  }
}

}  // namespace

WaitMode resolve_wait(Wait option) {
  if (option == Wait::Auto) {
    const std::string v = environment("SHARDMM_WAIT").value_or("auto");
    try {
      option = parse_wait(v);
    } catch (const InvalidArgument&) {
      throw InvalidArgument("SHARDMM_WAIT='" + v + "': expected spin, sleep or auto");
    }
  }
  if (option == Wait::Spin) return WaitMode::Spin;
  if (option == Wait::Sleep) return WaitMode::Sleep;
  static const WaitMode automatic = [] {  // the node's ranks and CPUs do not change
    const long ranks = local_ranks(), cpus = usable_cpus();
    return ranks > 0 && cpus > 0 && ranks > cpus ? WaitMode::Sleep : WaitMode::Spin;
  }();
  return automatic;
}

WaitScope::WaitScope(Wait option) {
  if (g_scopes > 0) {  // inside a call: its mode stays
    ++g_scopes;
    return;
  }
  const WaitMode mode = resolve_wait(option);  // throws before anything is set
  outer_ = true, before_ = g_mode, g_mode = mode;
  ++g_scopes;
}

WaitScope::~WaitScope() {
  --g_scopes;
  if (outer_) g_mode = before_;
}

WaitMode wait_mode() { return g_mode; }

void wait_all(std::vector<MPI_Request>& reqs) {
  const int n = static_cast<int>(reqs.size());
  if (g_mode == WaitMode::Spin) {
    SHARDMM_MPI(MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE));
    return;
  }
  politely([&] {
    int done = 0;
    SHARDMM_MPI(MPI_Testall(n, reqs.data(), &done, MPI_STATUSES_IGNORE));
    return done != 0;
  });
}

int wait_any(std::vector<MPI_Request>& reqs) {
  const int n = static_cast<int>(reqs.size());
  int i = MPI_UNDEFINED;
  if (g_mode == WaitMode::Spin) {
    SHARDMM_MPI(MPI_Waitany(n, reqs.data(), &i, MPI_STATUS_IGNORE));
    return i;
  }
  politely([&] {
    int flag = 0;
    SHARDMM_MPI(MPI_Testany(n, reqs.data(), &i, &flag, MPI_STATUS_IGNORE));
    return flag != 0;
  });
  return i;
}

std::int64_t wait_sleeps() { return g_sleeps; }

}  // namespace shardmm::comm
