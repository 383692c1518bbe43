// Reading a trace file in tests: parses the Chrome trace-event JSON, builds each rank's span
// tree (failing the test when spans overlap without nesting) and collects its flights.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace shardmm::testing::trace {

using nlohmann::json;

struct Span {
  std::string name, cat;
  std::int64_t ts = 0, end = 0;  // nanoseconds
  json args;
  int parent = -1;
  std::vector<int> children;
  [[nodiscard]] double seconds() const { return static_cast<double>(end - ts) * 1e-9; }
};

struct Track {
  std::string name;         // process_name
  std::vector<Span> spans;  // in start order
  std::vector<int> roots;   // top-level spans
  int flights = 0;          // completed asynchronous pairs
  int counters = 0;
};

inline std::int64_t ns(const json& v) { return std::llround(v.get<double>() * 1000.0); }

/// Links spans to their parents; adds a failure for spans that overlap without nesting.
inline void nest(int pid, Track& t) {
  std::sort(t.spans.begin(), t.spans.end(), [](const Span& a, const Span& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.end - a.ts > b.end - b.ts;
  });
  std::vector<int> stack;
  for (int i = 0; i < static_cast<int>(t.spans.size()); ++i) {
    Span& s = t.spans[i];
    while (!stack.empty() && s.ts >= t.spans[stack.back()].end) stack.pop_back();
    if (stack.empty()) {
      t.roots.push_back(i);
    } else {
      const Span& p = t.spans[stack.back()];
      EXPECT_LE(s.end, p.end) << "rank " << pid << ": '" << s.name << "' overlaps '" << p.name
                              << "' without nesting in it";
      s.parent = stack.back();
      t.spans[stack.back()].children.push_back(i);
    }
    stack.push_back(i);
  }
}

/// The trace in `path` by world rank; a failure when it does not parse.
inline std::map<int, Track> load(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::map<int, Track> tracks;
  json doc;
  try {
    doc = json::parse(text.str());
  } catch (const std::exception& e) {
    ADD_FAILURE() << path << " does not parse as JSON: " << e.what();
    return tracks;
  }
  EXPECT_TRUE(doc.contains("traceEvents") && doc["traceEvents"].is_array()) << path;
  std::map<std::pair<int, std::string>, int> open;
  for (const json& e : doc["traceEvents"]) {
    const std::string ph = e.at("ph");
    const int pid = e.at("pid");
    Track& t = tracks[pid];
    if (ph == "M" && e.at("name") == "process_name") t.name = e["args"]["name"];
    if (ph == "C") ++t.counters;
    if (ph == "b") ++open[{pid, e.at("id").get<std::string>()}];
    if (ph == "e" && open[{pid, e.at("id").get<std::string>()}]-- == 1) ++t.flights;
    if (ph != "X") continue;
    Span s{e.at("name"),
           e.value("cat", ""),
           ns(e.at("ts")),
           ns(e.at("ts")) + ns(e.at("dur")),
           e.value("args", json::object()),
           -1,
           {}};
    EXPECT_GE(s.end, s.ts) << "negative duration: " << e.dump();
    t.spans.push_back(std::move(s));
  }
  for (const auto& [key, n] : open) EXPECT_EQ(n, 0) << "flight " << key.second << " unmatched";
  for (auto& [pid, t] : tracks) nest(pid, t);
  return tracks;
}

/// Sum of argument `key` over the spans of category `cat` under span `i` (itself included).
inline double sum_arg(const Track& t, int i, const std::string& cat, const std::string& key) {
  const Span& s = t.spans[i];
  double v = s.cat == cat && s.args.contains(key) ? s.args[key].get<double>() : 0.0;
  for (int c : s.children) v += sum_arg(t, c, cat, key);
  return v;
}

/// Seconds spent in spans named `name` of category `cat` under span `i`.
inline double seconds_in(const Track& t, int i, const std::string& cat, const std::string& name) {
  const Span& s = t.spans[i];
  if (s.cat == cat && s.name == name) return s.seconds();
  double v = 0;
  for (int c : s.children) v += seconds_in(t, c, cat, name);
  return v;
}

/// Number of spans of category `cat` under span `i`.
inline int count(const Track& t, int i, const std::string& cat) {
  int n = t.spans[i].cat == cat ? 1 : 0;
  for (int c : t.spans[i].children) n += count(t, c, cat);
  return n;
}

}  // namespace shardmm::testing::trace
