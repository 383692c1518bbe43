// The watchdog's two halves (see watchdog.hpp). The main thread mirrors its span stack and the
// MPI operation it blocks in under a mutex (only while watching). The helper thread wakes a few
// times per interval; when the stack has not changed for the interval, it reports once per
// stall: its line on stderr, its status file, and on rank 0 the who-waits-for-whom lines.
#include "trace/watchdog.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "shardmm/config.hpp"
#include "shardmm/error.hpp"

namespace shardmm::trace::watchdog {
namespace {

namespace fs = std::filesystem;
constexpr int kExitStatus = 124;  // the job ended by SHARDMM_WATCHDOG=SECONDS:abort

struct Frame {
  const char* name;
  Cat cat;
  std::int64_t step;
};

struct State {
  std::mutex m;
  std::condition_variable cv;
  std::vector<Frame> stack;
  std::size_t blocked_at = 0;  // depth of the frame that blocks (0: none)
  const char* op = nullptr;
  std::string what;
  std::vector<int> members, peers;
  Settings settings;
  Scope scope;
  bool in_call = false, stop = false;
  std::uint64_t progress = 0;
  std::thread helper;
  std::vector<std::string> owned;  // status directories this rank made (removed at exit)

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  State(State&&) = delete;
  State& operator=(State&&) = delete;
  ~State() {
    {
      const std::scoped_lock lock(m);
      stop = true;
    }
    cv.notify_all();
    if (helper.joinable()) helper.join();
    std::error_code ec;
    for (const std::string& d : owned) fs::remove_all(d, ec);
  }
};

State& state() {
  static State s;
  return s;
}

double wall() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The report of the stack as it stands (caller holds the lock).
Report snapshot(const State& s) {
  Report r;
  r.rank = s.scope.world_rank;
  r.time = wall();
  for (const Frame& f : s.stack) {
    r.stack += (r.stack.empty() ? "" : " > ") + std::string(f.name);
    if (f.cat == Cat::Call || f.cat == Cat::Phase) r.phase = f.name;
    if (f.step >= 0) r.step = f.step;
  }
  if (s.blocked_at > 0 && s.op != nullptr) {
    r.op = s.op;
    r.what = s.what;
    r.members = s.members;
    r.peers = s.peers;
  }
  return r;
}

void say(int rank, const std::string& text) {
  (void)std::fprintf(stderr, "shardmm watchdog [rank %d]: %s\n", rank, text.c_str());
  (void)std::fflush(stderr);
}

std::string status_file(const Scope& sc, int world) {
  return sc.dir + "/rank." + std::to_string(world);
}

void write_status(const Scope& sc, const Report& r) {
  const std::string path = status_file(sc, r.rank), tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << serialize(r);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
}

// Rank 0: the members' reports written since `since` (wall clock), waiting up to `patience`
// seconds for all of them.
std::vector<Report> collect(const Scope& sc, double since, double patience) {
  const double deadline = wall() + patience;
  std::vector<Report> out;
  for (;;) {
    out.clear();
    for (int w : sc.members) {
      std::ifstream in(status_file(sc, w));
      std::stringstream text;
      text << in.rdbuf();
      Report r;
      if (in && deserialize(text.str(), r) && r.time >= since) out.push_back(r);
    }
    if (out.size() == sc.members.size() || wall() > deadline) return out;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Before the process ends by _Exit (no destructors): the status directories this rank made,
// for any communicator (a mesh's made when the mesh was, the world's by a call on it), `last`
// (one of them or not) after the others.
void remove_owned(const std::string& last = "") {
  State& s = state();
  const std::scoped_lock lock(s.m);
  std::error_code ec;
  for (const std::string& d : s.owned)
    if (d != last) fs::remove_all(d, ec);
  if (!last.empty()) fs::remove_all(last, ec);
}

void fire(const Report& mine, const Scope& sc, const Settings& set, double idle) {
  say(mine.rank, format_line(mine, idle));
  if (sc.dir.empty()) {  // the status directory is not chosen yet: this rank's line is all
    say(mine.rank, "no status files yet (the call's rank 0 chooses their directory): only this "
                   "rank reports");
    if (!set.abort) return;
    say(mine.rank, "ending the job (SHARDMM_WATCHDOG=...:abort)");
    remove_owned();
    std::_Exit(kExitStatus);
  }
  write_status(sc, mine);
  std::error_code ec;
  if (sc.rank == 0) {
    // The others fire about when this rank did (their calls stalled together): up to 3 s,
    // or the watchdog's own interval when shorter, for their files.
    const auto reports = collect(sc, mine.time - set.seconds - 10, std::min(3.0, set.seconds));
    for (const std::string& line : who_waits(sc.members, reports)) say(mine.rank, line);
    if (set.abort) {
      say(mine.rank, "ending the job (SHARDMM_WATCHDOG=...:abort)");
      // The others end as soon as their files are gone, and the launcher may then kill this
      // rank at once: its directories go first, the one holding their files last.
      remove_owned(sc.dir);
      std::_Exit(kExitStatus);
    }
    for (int w : sc.members) fs::remove(status_file(sc, w), ec);  // read: the others may go
    return;
  }
  if (!set.abort) return;
  // Rank 0 reports first: it removes this rank's file once read (within 5 s).
  for (int i = 0; i < 50 && fs::exists(status_file(sc, mine.rank), ec); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  remove_owned();
  std::_Exit(kExitStatus);
}

void watch(State& s) {
  std::unique_lock<std::mutex> lock(s.m);
  std::uint64_t seen = s.progress;
  double since = wall();
  bool fired = false;
  while (!s.stop) {
    const double tick = std::clamp(s.settings.seconds / 8, 0.02, 0.25);
    s.cv.wait_for(lock, std::chrono::duration<double>(tick));
    if (s.stop) break;
    if (!s.in_call || s.progress != seen) {
      seen = s.progress;
      since = wall();
      fired = false;
      continue;
    }
    const double idle = wall() - since;
    if (fired || idle < s.settings.seconds) continue;
    fired = true;
    const Report r = snapshot(s);
    const Scope sc = s.scope;
    const Settings set = s.settings;
    lock.unlock();
    fire(r, sc, set, idle);
    lock.lock();
  }
}

}  // namespace

Settings parse(const std::string& text) {
  Settings s;
  if (text.empty()) return s;
  const std::size_t colon = text.find(':');
  const std::string num = text.substr(0, colon),
                    mode = colon == std::string::npos ? "" : text.substr(colon + 1);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(num, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != num.size() || !(v > 0) || v > 1e6 ||
      (colon != std::string::npos && mode != "abort"))
    throw InvalidArgument("SHARDMM_WATCHDOG='" + text +
                          "': expected SECONDS[:abort] (e.g. 60 or 30:abort), SECONDS > 0");
  s.seconds = v;
  s.abort = mode == "abort";
  return s;
}

Settings settings() { return parse(environment("SHARDMM_WATCHDOG").value_or("")); }

void begin_call(const Settings& set, Scope scope) {
  State& s = state();
  const std::scoped_lock lock(s.m);
  s.settings = set;
  s.scope = std::move(scope);
  s.stack.clear();
  s.blocked_at = 0;
  s.in_call = true;
  ++s.progress;
  if (!s.helper.joinable()) s.helper = std::thread(watch, std::ref(s));
}

void own(const std::string& dir) {
  State& s = state();
  const std::scoped_lock lock(s.m);
  s.owned.push_back(dir);
}

void end_call() noexcept {
  State& s = state();
  const std::scoped_lock lock(s.m);
  s.in_call = false;
  s.stack.clear();
  s.blocked_at = 0;
  ++s.progress;
}

void push(const char* name, Cat cat, std::int64_t step) noexcept {
  State& s = state();
  const std::scoped_lock lock(s.m);
  try {
    s.stack.push_back({name, cat, step});
  } catch (const std::bad_alloc&) {  // NOLINT(bugprone-empty-catch): on purpose
    // the frame is not shown
  }
  ++s.progress;
}

void pop() noexcept {
  State& s = state();
  const std::scoped_lock lock(s.m);
  if (s.blocked_at == s.stack.size()) s.blocked_at = 0;
  if (!s.stack.empty()) s.stack.pop_back();
  ++s.progress;
}

void blocked(const char* op, const std::string& what, const std::vector<int>& members,
             const std::vector<int>& peers) noexcept {
  State& s = state();
  const std::scoped_lock lock(s.m);
  try {
    s.what = what;
    s.members = members;
    s.peers = peers;
    s.op = op;
    s.blocked_at = s.stack.size();
  } catch (const std::bad_alloc&) {
    s.blocked_at = 0;
  }
}

}  // namespace shardmm::trace::watchdog
