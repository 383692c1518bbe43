// The recorder: spans, counters and operations in flight of the current outermost call, kept in
// this process's memory until trace::Call writes them; the watchdog's stack follows the spans.
// Communicator facts (members' world ranks, label, clock offset) are cached as an MPI attribute.
#include <algorithm>
#include <chrono>
#include <memory>
#include <new>
#include <string_view>
#include <utility>

#include "comm/mpi_check.hpp"
#include "trace/events.hpp"
#include "trace/watchdog.hpp"

namespace shardmm::trace {

double now() noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const char* category_name(Cat c) {
  switch (c) {
    case Cat::Call: return "call";
    case Cat::Phase: return "phase";
    case Cat::Step: return "step";
    case Cat::Comm: return "comm";
    case Cat::Wait: return "wait";
    case Cat::Blas: return "blas";
    case Cat::Io: return "io";
  }
  return "other";
}

Recorder& recorder() {
  static Recorder r;
  return r;
}

namespace {

// Appends an event while there is room; its index, or kWatched when it was dropped.
int push(Event e) noexcept {
  Recorder& r = recorder();
  if (r.events.size() >= r.limit) {
    ++r.dropped;
    return detail::kWatched;
  }
  try {
    r.events.push_back(std::move(e));
  } catch (const std::bad_alloc&) {
    ++r.dropped;
    return detail::kWatched;
  }
  return static_cast<int>(r.events.size() - 1);
}

Event* event(int id) noexcept {
  Recorder& r = recorder();
  return id >= 0 && static_cast<std::size_t>(id) < r.events.size() ? &r.events[id] : nullptr;
}

// A key given again (a span that blocks in one call, then in another) keeps its last value.
void add(int id, Arg a) noexcept {
  if (Event* e = event(id)) try {
      for (Arg& x : e->args)
        if (std::string_view(x.key) == a.key) {
          x = std::move(a);
          return;
        }
      e->args.push_back(std::move(a));
    } catch (const std::bad_alloc&) {  // NOLINT(bugprone-empty-catch): on purpose
      // the argument is lost, the span stays
    }
}

std::string rank_list(const std::vector<int>& world) {
  std::string s;
  for (std::size_t i = 0; i < world.size(); ++i) s += (i ? "," : "") + std::to_string(world[i]);
  return s;
}

void text_arg(int id, const char* key, std::string value) noexcept {
  add(id, {key, 0, std::move(value), false, true});
}

// The span blocks in `op` on `what`: trace arguments and the watchdog's status.
void blocked_world(int id, const char* op, const std::string& what, const std::string& label,
                   const std::vector<int>& members, const std::vector<int>& peers) noexcept {
  try {
    if (id >= 0) {
      text_arg(id, "op", op);
      text_arg(id, "on", what);
      if (!label.empty()) text_arg(id, "comm", label);
      if (!peers.empty()) text_arg(id, "peers", rank_list(peers));
    }
    if ((detail::mode & detail::kWatch) != 0) watchdog::blocked(op, what, members, peers);
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): on purpose
    // no memory: nothing said about the wait
  }
}

}  // namespace

namespace detail {

int open(const char* name, Cat cat, std::int64_t step) noexcept {
  int id = kWatched;
  if ((mode & kRecord) != 0) id = push(Event{name, cat, 'X', step, now(), -1, 0, {}});
  if ((mode & kWatch) != 0) watchdog::push(name, cat, step);
  return id;
}

void close(int id) noexcept {
  if (Event* e = event(id)) {
    e->t1 = now();
    if (e->flops > 0 && e->t1 > e->t0)
      add(id, {"gflops", e->flops / (e->t1 - e->t0) * 1e-9, {}, false, false});
  }
  if ((mode & kWatch) != 0) watchdog::pop();
}

void arg(int id, const char* key, double value, bool integral) noexcept {
  add(id, {key, value, {}, integral, false});
}

void text(int id, const char* key, std::string value) noexcept {
  text_arg(id, key, std::move(value));
}

void rate(int id, double flops) noexcept {
  if (Event* e = event(id)) e->flops = flops;
}

void blocked(int id, const char* op, const std::string& what, MPI_Comm comm,
             const std::vector<int>& peers) noexcept {
  try {
    std::vector<int> members, peer_world;
    std::string label;
    if (comm != MPI_COMM_NULL) {
      members = world_ranks(comm);
      label = comm_label(comm);
      for (int p : peers)
        if (p >= 0 && static_cast<std::size_t>(p) < members.size())
          peer_world.push_back(members[p]);
    }
    blocked_world(id, op, what, label, members, peer_world);
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): on purpose
    // an MPI error or no memory: nothing said about the wait
  }
}

}  // namespace detail

void counter(const char* name, double value) noexcept {
  if (!recording()) return;
  const int id = push(Event{name, Cat::Call, 'C', -1, now(), -1, 0, {}});
  detail::arg(id, "value", value, true);
}

void landed(std::vector<Flight>& flights) noexcept {
  if (recording()) try {
      const double t = now();
      for (const Flight& f : flights) {
        const std::vector<int>& w = world_ranks(f.comm);
        const int peer =
            f.peer >= 0 && static_cast<std::size_t>(f.peer) < w.size() ? w[f.peer] : -1;
        const int id = push(Event{f.op, Cat::Comm, 'b', -1, f.posted, t, 0, {}});
        detail::arg(id, "bytes", static_cast<double>(f.bytes), true);
        detail::arg(id, f.collective ? "root" : "peer", peer, true);
        detail::text(id, "comm", comm_label(f.comm));
      }
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): on purpose
      // an MPI error or no memory: the flights go unrecorded
    }
  flights.clear();
}

void Span::waits_for(const std::vector<Flight>& flights) noexcept {
  if (id_ == detail::kOff) return;
  try {
    static const int me = [] {
      int r = 0;
      SHARDMM_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &r));
      return r;
    }();
    std::string what, label;
    std::vector<int> members, peers;
    std::size_t shown = 0;
    for (const Flight& f : flights) {
      const std::vector<int>& w = world_ranks(f.comm);
      const int peer = f.peer >= 0 && static_cast<std::size_t>(f.peer) < w.size() ? w[f.peer] : -1;
      if (f.collective && members.empty()) members = w, label = comm_label(f.comm);
      if (peer >= 0 && peer != me && std::find(peers.begin(), peers.end(), peer) == peers.end())
        peers.push_back(peer);  // a root waits for the other members, not for itself
      if (++shown > 4) continue;
      what += std::string(what.empty() ? "" : "; ") + f.op +
              (f.collective     ? " root "
               : f.op[1] == 's' ? " to "
                                : " from ") +
              std::to_string(peer) + " over " + comm_label(f.comm) + ", " +
              std::to_string(f.bytes) + " B";
    }
    if (shown > 4) what += "; " + std::to_string(shown - 4) + " more";
    blocked_world(id_, "MPI_Waitall", what, label, members, peers);
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): on purpose
    // an MPI error or no memory: nothing said about the wait
  }
}

// ---------------------------------------------------------------- communicator facts

namespace {

int delete_facts(MPI_Comm, int, void* value, void*) {
  delete static_cast<CommFacts*>(value);
  return MPI_SUCCESS;
}

int facts_keyval() {
  static int key = [] {
    int k = MPI_KEYVAL_INVALID;
    SHARDMM_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_facts, &k, nullptr));
    return k;
  }();
  return key;
}

// "ranks 0-3", "ranks 0,2,4", "ranks 0,1,...,63 (64)".
std::string label_of(const std::vector<int>& w) {
  bool run = true;
  for (std::size_t i = 1; i < w.size(); ++i) run = run && w[i] == w[i - 1] + 1;
  if (w.size() > 2 && run)
    return "ranks " + std::to_string(w.front()) + "-" + std::to_string(w.back());
  if (w.size() <= 8) return "ranks " + rank_list(w);
  const std::vector<int> head(w.begin(), w.begin() + 6);
  return "ranks " + rank_list(head) + ",...," + std::to_string(w.back()) + " (" +
         std::to_string(w.size()) + ")";
}

}  // namespace

CommFacts& facts(MPI_Comm comm) {
  void* value = nullptr;
  int found = 0;
  SHARDMM_MPI(MPI_Comm_get_attr(comm, facts_keyval(), static_cast<void*>(&value), &found));
  if (found) return *static_cast<CommFacts*>(value);
  auto f = std::make_unique<CommFacts>();
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  SHARDMM_MPI(MPI_Comm_group(comm, &group));
  SHARDMM_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int n = 0;
  SHARDMM_MPI(MPI_Group_size(group, &n));
  std::vector<int> mine(static_cast<std::size_t>(n));
  f->world.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) mine[static_cast<std::size_t>(i)] = i;
  SHARDMM_MPI(MPI_Group_translate_ranks(group, n, mine.data(), world, f->world.data()));
  SHARDMM_MPI(MPI_Group_free(&group));
  SHARDMM_MPI(MPI_Group_free(&world));
  f->label = label_of(f->world);
  SHARDMM_MPI(MPI_Comm_set_attr(comm, facts_keyval(), f.get()));
  return *f.release();  // owned by the attribute now
}

const std::vector<int>& world_ranks(MPI_Comm comm) { return facts(comm).world; }
const std::string& comm_label(MPI_Comm comm) { return facts(comm).label; }

}  // namespace shardmm::trace
