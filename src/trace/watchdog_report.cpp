// The watchdog's words: a rank's line, its status file (key=value lines) and rank 0's verdict.
// A rank blocked in a collective waits for the members of its communicator that are not blocked
// in the same operation on the same communicator; a rank blocked on messages waits for the
// peers that are not inside MPI at all. Those, when they are not waiting themselves, are the
// ranks that did not arrive.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "trace/watchdog.hpp"

namespace shardmm::trace::watchdog {
namespace {

std::string join(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

std::vector<int> split(const std::string& s) {
  std::vector<int> v;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) v.push_back(std::stoi(item));
  return v;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

std::string ranks(const std::vector<int>& v) {
  return (v.size() == 1 ? "rank " : "ranks ") + join(v);
}

std::string where(const Report& r) {
  std::string s = "phase '" + (r.phase.empty() ? std::string("?") : r.phase) + "'";
  if (r.step >= 0) s += ", step " + std::to_string(r.step);
  return s;
}

// "ranks 0-3" for a run of three or more, else "ranks 0,2" ("rank 1" alone).
std::string span_of(const std::vector<int>& v) {
  bool run = v.size() > 2;
  for (std::size_t i = 1; i < v.size() && run; ++i) run = v[i] == v[i - 1] + 1;
  return run ? "ranks " + std::to_string(v.front()) + "-" + std::to_string(v.back()) : ranks(v);
}

std::string waiting(const Report& r) {
  if (r.op.empty()) return "not in an MPI call";
  std::string s = "waiting in " + r.op + " (" + r.what + ")";
  if (!r.members.empty() && r.what.find(" over ") == std::string::npos)
    s += " over " + span_of(r.members);
  return s;
}

// The ranks `r` waits for among the reports (by world rank).
std::vector<int> culprits(const Report& r, const std::map<int, const Report*>& by_rank) {
  std::vector<int> out;
  for (int x : r.members) {
    if (x == r.rank) continue;
    const auto it = by_rank.find(x);
    const Report* o = it == by_rank.end() ? nullptr : it->second;
    if (o == nullptr || o->op != r.op || o->members != r.members) out.push_back(x);
  }
  for (int p : r.peers) {
    const auto it = by_rank.find(p);
    if ((it == by_rank.end() || it->second->op.empty()) && p != r.rank &&
        std::find(out.begin(), out.end(), p) == out.end())
      out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string format_line(const Report& r, double idle_seconds) {
  char head[64];
  (void)std::snprintf(head, sizeof head, "no progress for %.1f s in ", idle_seconds);
  return head + where(r) + " (" + r.stack + "): " + waiting(r);
}

std::string serialize(const Report& r) {
  char time[32];
  (void)std::snprintf(time, sizeof time, "%.3f", r.time);
  return "rank=" + std::to_string(r.rank) + "\ntime=" + time + "\nphase=" + one_line(r.phase) +
         "\nstep=" + std::to_string(r.step) + "\nstack=" + one_line(r.stack) +
         "\nop=" + one_line(r.op) + "\nwhat=" + one_line(r.what) + "\nmembers=" + join(r.members) +
         "\npeers=" + join(r.peers) + "\n";
}

bool deserialize(const std::string& text, Report& r) {
  std::stringstream in(text);
  std::string line;
  int fields = 0;
  try {
    while (std::getline(in, line)) {
      const std::size_t eq = line.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = line.substr(0, eq), v = line.substr(eq + 1);
      ++fields;
      if (key == "rank") r.rank = std::stoi(v);
      else if (key == "time") r.time = std::stod(v);
      else if (key == "phase") r.phase = v;
      else if (key == "step") r.step = std::stoll(v);
      else if (key == "stack") r.stack = v;
      else if (key == "op") r.op = v;
      else if (key == "what") r.what = v;
      else if (key == "members") r.members = split(v);
      else if (key == "peers") r.peers = split(v);
      else --fields;
    }
  } catch (const std::exception&) {
    return false;
  }
  return fields == 9;
}

std::vector<std::string> who_waits(const std::vector<int>& members,
                                   const std::vector<Report>& reports) {
  std::map<int, const Report*> by_rank;
  for (const Report& r : reports) by_rank[r.rank] = &r;
  // Ranks waiting in the same operation on the same ranks for the same culprits: one line.
  std::map<std::string, std::vector<int>> groups;
  std::vector<int> blamed;
  for (const Report& r : reports) {
    if (r.op.empty()) continue;
    const std::vector<int> c = culprits(r, by_rank);
    const std::string key =
        "in " + r.op + " (" + r.what + ")" +
        (c.empty() ? std::string(": every rank they need waits too") : " for " + ranks(c));
    groups[key].push_back(r.rank);
    for (int x : c)
      if (std::find(blamed.begin(), blamed.end(), x) == blamed.end()) blamed.push_back(x);
  }
  std::vector<std::string> out;
  for (auto& [key, who] : groups) {
    std::sort(who.begin(), who.end());
    out.push_back(ranks(who) + (who.size() == 1 ? " waits " : " wait ") + key);
  }
  std::sort(blamed.begin(), blamed.end());
  for (int x : blamed) {
    const auto it = by_rank.find(x);
    if (it == by_rank.end())
      out.push_back("rank " + std::to_string(x) +
                    " did not arrive and sent no report (not inside a shardmm call, or its "
                    "status file is not visible here: SHARDMM_WATCHDOG_DIR)");
    else if (it->second->op.empty())
      out.push_back("rank " + std::to_string(x) + " did not arrive: it is in " +
                    where(*it->second) + " (" + it->second->stack + "), not in an MPI call");
    else
      out.push_back("rank " + std::to_string(x) + " is elsewhere: " + where(*it->second) + ", " +
                    waiting(*it->second));
  }
  for (int m : members)
    if (by_rank.count(m) == 0 && std::find(blamed.begin(), blamed.end(), m) == blamed.end())
      out.push_back("rank " + std::to_string(m) + ": no report");
  if (out.empty()) out.emplace_back("no rank waits in MPI: the call is computing or stalled");
  return out;
}

}  // namespace shardmm::trace::watchdog
