#include "common/tracker.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace shardmm::examples {

void Tracker::record(const Step& s, double seconds, double comm_seconds,
                     std::int64_t bytes_received) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return e.step.name == s.name; });
  if (it == entries_.end()) it = entries_.insert(entries_.end(), Entry{s});
  it->seconds += seconds;
  it->comm += comm_seconds;
  it->words += static_cast<double>(bytes_received) / static_cast<double>(elem_);
}

void Tracker::reset() {
  for (Entry& e : entries_) e.seconds = e.comm = e.words = 0;
  reps_ = 0;
}

double Tracker::seconds_per_rep() const {
  double t = 0;
  for (const Entry& e : entries_) t += e.seconds;
  return t / reps();
}

double Tracker::comm_seconds_per_rep() const {
  double t = 0;
  for (const Entry& e : entries_) t += e.comm;
  return t / reps();
}

double Tracker::words_per_rep() const {
  double w = 0;
  for (const Entry& e : entries_) w += e.words;
  return w / reps();
}

std::string Tracker::words_mismatch(double tol) const {
  std::string out;
  for (const Entry& e : entries_) {
    const double got = e.words / reps();
    if (std::abs(got - e.step.formula_words) <= tol) continue;
    char line[160];
    (void)std::snprintf(line, sizeof line, "%s: %.1f words vs %.1f\n", e.step.name.c_str(), got,
                        e.step.formula_words);
    out += line;
  }
  return out;
}

bool words_match(const Tracker& tr, const Mesh& mesh, const std::string& tag) {
  const std::string bad = tr.words_mismatch(0.5);
  const double ranks_off = sum_over(mesh, {"x", "y"}, bad.empty() ? 0.0 : 1.0);
  if (!bad.empty())
    (void)std::fprintf(stderr, "%s: rank %d words differ from the formulas:\n%s", tag.c_str(),
                       mesh.rank(), bad.c_str());
  if (mesh.rank() == 0)
    std::printf("%s: words received equal the formulas on %s\n", tag.c_str(),
                ranks_off == 0 ? "every rank" : "NOT every rank: FAILED");
  return ranks_off == 0;
}

void Tracker::print(const std::string& title) const {
  std::printf("%s (per step, mean of %d, this rank)\n", title.c_str(), reps_);
  std::printf("  %-30s %-34s %9s %9s %12s %12s\n", "operation", "collectives", "ms", "comm ms",
              "words recv", "formula");
  double formula = 0;
  for (const Entry& e : entries_) {
    std::printf("  %-30s %-34s %9.3f %9.3f %12.0f %12.0f\n", e.step.name.c_str(),
                e.step.collectives.c_str(), 1e3 * e.seconds / reps(), 1e3 * e.comm / reps(),
                e.words / reps(), e.step.formula_words);
    formula += e.step.formula_words;
  }
  const double t = seconds_per_rep(), c = comm_seconds_per_rep();
  std::printf("  %-30s %-34s %9.3f %9.3f %12.0f %12.0f\n", "step total", "", 1e3 * t, 1e3 * c,
              words_per_rep(), formula);
  std::printf("  communication share: %.1f %% of the step time\n", t > 0 ? 100.0 * c / t : 0.0);
}

nlohmann::json Tracker::to_json() const {
  nlohmann::json ops = nlohmann::json::array();
  for (const Entry& e : entries_)
    ops.push_back({{"name", e.step.name},
                   {"collectives", e.step.collectives},
                   {"seconds", e.seconds / reps()},
                   {"comm_seconds", e.comm / reps()},
                   {"words", e.words / reps()},
                   {"formula_words", e.step.formula_words}});
  return {{"ops", ops},
          {"seconds_per_step", seconds_per_rep()},
          {"comm_seconds_per_step", comm_seconds_per_rep()},
          {"words_per_step", words_per_rep()}};
}

}  // namespace shardmm::examples
