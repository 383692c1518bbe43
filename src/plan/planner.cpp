// Planner: enumerate candidates (local; ring in its three forms; SUMMA C/A/B-stationary and
// Cannon on every 2D factorisation of P; 2.5D on every factorisation with >= 2 k-slices),
// cost each one (cost_model.cpp), drop those over the memory limit, pick the cheapest.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "core/winograd.hpp"
#include "plan/cost_model.hpp"
#include "plan/request.hpp"
#include "shardmm/config.hpp"
#include "shardmm/error.hpp"
#include "shardmm/plan.hpp"

namespace shardmm {
namespace {

constexpr double kSmallWork = 2e6;  // flops (2mnk) below which the local path is chosen

}  // namespace

std::int64_t memory_limit(const PlanRequest& r) {
  if (r.memory_limit > 0) return r.memory_limit;
  const auto env = environment("SHARDMM_MEMORY_LIMIT");
  if (!env) return 0;
  try {
    return parse_bytes(*env);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("SHARDMM_MEMORY_LIMIT: ") + e.what());
  }
}

double memory_growth(const PlanRequest& r) {
  if (memory_limit(r) > 0) return 0;
  if (r.memory_growth != 0) return r.memory_growth;
  const auto env = environment("SHARDMM_MEMORY_GROWTH");
  if (!env) return kLeanMemoryGrowth;
  try {
    return parse_growth(*env);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string("SHARDMM_MEMORY_GROWTH: ") + e.what());
  }
}

std::int64_t plan::resident_bytes(const plan::Request& r) {
  return static_cast<std::int64_t>(plan::resident(r) * double(dtype_size(r.dtype)));
}

Candidate plan::priced(const plan::Request& r, Candidate c) {
  plan::evaluate(r, c);
  const std::int64_t limit = memory_limit(r);
  const double growth = limit > 0 ? -1 : memory_growth(r);
  c.fits = limit > 0
               ? c.memory_bytes <= limit
               : growth < 0 || double(c.added_bytes) <= growth * double(plan::resident_bytes(r));
  return c;
}

namespace {

std::vector<Candidate> enumerate(const plan::Request& r) {
  std::vector<Candidate> out;
  const int P = r.ranks;
  auto add = [&](Candidate c) { out.push_back(c); };
  add({Algorithm::Local});
  if (r.allow_fast)  // Strassen on every 2D factorisation of P (opt-in: a weaker error bound)
    for (int pm = 1; pm <= P; ++pm)
      if (P % pm == 0) add({Algorithm::Strassen, Stationary::C, RingForm::Auto, pm, P / pm, 1});
  if (r.allow_fast && winograd::caps_fits(P, r.m, r.n, r.k))  // and its breadth-first step
    add({Algorithm::Strassen, Stationary::C, RingForm::Auto, 1, P / winograd::kCapsGroups,
         winograd::kCapsGroups});
  if (P == 1) return out;
  if (r.sharded.words >= 0) add({Algorithm::Sharded});  // on the caller's mesh and layouts
  for (RingForm f : {RingForm::AllGatherA, RingForm::AllGatherB, RingForm::ReduceScatter})
    add({Algorithm::Ring, Stationary::C, f, P, 1, 1});
  for (int pm = 1; pm <= P; ++pm) {
    if (P % pm) continue;
    const int pn = P / pm;
    for (Stationary s : {Stationary::C, Stationary::A, Stationary::B})
      add({Algorithm::Summa, s, RingForm::Auto, pm, pn, 1});
    if (pm == pn) add({Algorithm::Cannon, Stationary::C, RingForm::Auto, pm, pn, 1});
    for (int pk = 2; pk <= pn; ++pk)
      if (pn % pk == 0) add({Algorithm::Gemm25D, Stationary::C, RingForm::Auto, pm, pn / pk, pk});
  }
  return out;
}

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(4);
  s << v;
  return s.str();
}

}  // namespace

std::string Candidate::name() const {
  std::string s = to_string(algorithm);
  if (algorithm == Algorithm::Summa)
    s += stationary == Stationary::A ? "(A)" : stationary == Stationary::B ? "(B)" : "(C)";
  if (algorithm == Algorithm::Ring)
    return s +
           (ring_form == RingForm::AllGatherA   ? "(AG-A) "
            : ring_form == RingForm::AllGatherB ? "(AG-B) "
                                                : "(RS) ") +
           std::to_string(pm);
  if (algorithm == Algorithm::Local || algorithm == Algorithm::Sharded) return s;
  s += " " + std::to_string(pm) + "x" + std::to_string(pn);
  return algorithm == Algorithm::Gemm25D || pk > 1 ? s + "x" + std::to_string(pk) : s;
}

namespace {

// No candidate fits: under a memory limit the call cannot run (OutOfMemory naming the bytes
// missing); under the lean cap, a default, the leanest candidate runs and the plan says so.
void choose_over_policy(GemmPlan& plan, std::int64_t limit) {
  std::int64_t least = plan.candidates.front().memory_bytes;
  for (const Candidate& c : plan.candidates) least = std::min(least, c.memory_bytes);
  if (limit > 0)
    throw OutOfMemory("plan: no algorithm fits the memory limit of " + std::to_string(limit) +
                      " bytes per rank; the leanest needs " + std::to_string(least) + " bytes (" +
                      std::to_string(least - limit) + " bytes missing)");
  plan.over_policy = true;
  plan.chosen = plan.candidates.front();
  for (const Candidate& c : plan.candidates)
    if (c.added_bytes < plan.chosen.added_bytes) plan.chosen = c;
}

// The fastest candidate over the policy when it beats the choice: what a larger budget buys.
void note_roomier(GemmPlan& plan) {
  for (const Candidate& c : plan.candidates)
    if (!c.fits && c.seconds < plan.chosen.seconds &&
        (plan.roomier.empty() || c.seconds < plan.roomier.front().seconds))
      plan.roomier = {c};
}

}  // namespace

GemmPlan plan::plan_gemm(const plan::Request& r) {
  if (r.m < 0 || r.n < 0 || r.k < 0 || r.ranks < 1)
    throw InvalidArgument("plan: sizes must be >= 0 and ranks >= 1");
  GemmPlan plan;
  plan.request = static_cast<const PlanRequest&>(r);  // the public part; facts stay here
  plan.resident_bytes = plan::resident_bytes(r);
  plan.lower_bound = lower_bound_words(r.m, r.n, r.k, r.ranks);
  const std::int64_t limit = memory_limit(r);
  plan.policy = limit > 0 ? "limit" : memory_growth(r) < 0 ? "none" : "lean";
  plan.candidates = enumerate(r);
  for (Candidate& c : plan.candidates) c = plan::priced(r, c);
  std::stable_sort(plan.candidates.begin(), plan.candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     return a.fits != b.fits ? a.fits : a.seconds < b.seconds;
                   });
  if (!plan.candidates.front().fits) {
    choose_over_policy(plan, limit);
  } else {
    plan.chosen = plan.candidates.front();
    // Predicted within 1 % of the fastest: the model cannot tell them apart (its overlap and
    // rates are estimates), the words it knows exactly, so the fewest words moved wins.
    for (const Candidate& c : plan.candidates)
      if (c.fits && c.seconds <= plan.candidates.front().seconds * (1 + plan::kNearTie) &&
          c.words + c.redist_words < plan.chosen.words + plan.chosen.redist_words)
        plan.chosen = c;
  }
  // Small problems go local: below this much work the per-call overheads (communicators,
  // phases, latency) outweigh splitting it. The lean cap does not apply (a few KiB); a memory
  // limit does.
  const double work = 2.0 * double(r.m) * double(r.n) * double(r.k);
  if (work < kSmallWork && (limit == 0 || plan.candidates.back().fits))
    for (const Candidate& c : plan.candidates)
      if (c.algorithm == Algorithm::Local) plan.chosen = c;
  note_roomier(plan);
  return plan;
}

Candidate plan::cheapest_of(const plan::Request& r, Algorithm algorithm, int pm, int pn) {
  std::optional<Candidate> best;
  for (Candidate c : enumerate(r)) {
    if (c.algorithm != algorithm || (pm > 0 && pn > 0 && (c.pm != pm || c.pn != pn))) continue;
    c = plan::priced(r, c);
    if (!best || (c.fits != best->fits ? c.fits : c.seconds < best->seconds)) best = c;
  }
  if (!best)
    throw NotSupported(
        "plan: " + to_string(algorithm) + " has no candidate for " + std::to_string(r.ranks) +
        " ranks" +
        (pm > 0 ? " on a " + std::to_string(pm) + "x" + std::to_string(pn) + " grid" : ""));
  return *best;
}

namespace {

std::string mib(double bytes) { return fmt(bytes / 1048576.0) + " MiB"; }

// "adds 12 MiB/rank = 0.8 x the local operands"
std::string added_text(double res, const Candidate& c) {
  return "adds " + mib(double(c.added_bytes)) + "/rank" +
         (res > 0 ? " = " + fmt(double(c.added_bytes) / res) + " x the local operands" : "");
}

// The memory policy, what the choice adds, and what a larger budget would buy.
void explain_memory(std::ostringstream& s, const GemmPlan& plan) {
  const PlanRequest& r = plan.request;
  const double res = double(plan.resident_bytes), growth = memory_growth(r);
  if (plan.policy == "lean")
    s << "memory policy: lean, Auto adds at most " << fmt(growth) << " x the local A+B+C ("
      << mib(growth * res) << "/rank of " << mib(res) << ")";
  else if (plan.policy == "limit")
    s << "memory policy: limit " << mib(double(memory_limit(r))) << "/rank";
  else s << "memory policy: none (memory growth unlimited)";
  s << "; chosen " << added_text(res, plan.chosen) << "\n";
  if (plan.over_policy) s << "  no candidate fits the policy: the leanest runs\n";
  for (const Candidate& c : plan.roomier)
    s << "larger budget: " << c.name() << " would take " << fmt(c.seconds) << " s instead of "
      << fmt(plan.chosen.seconds) << " s, " << fmt(c.words + c.redist_words)
      << " words/rank instead of " << fmt(plan.chosen.words + plan.chosen.redist_words) << ", "
      << added_text(res, c) << " (--memory-growth "
      << fmt(std::ceil(double(c.added_bytes) / std::max(res, 1.0) * 10) / 10)
      << " or --memory-limit " << mib(double(c.memory_bytes)) << ")\n";
}

}  // namespace

std::string GemmPlan::explain(std::size_t max_rows) const {
  std::ostringstream s;
  const auto& r = request;
  s << "plan for m=" << r.m << " n=" << r.n << " k=" << r.k << " " << to_string(r.dtype) << " on "
    << r.ranks << " ranks (profile: " << r.profile.source << "); lower bound " << fmt(lower_bound)
    << " words/rank\n";
  s << "  candidate            pred_s     words/rank  /LB     redist     msgs    MiB/rank  "
       "+MiB/rank  fits\n";
  for (std::size_t i = 0; i < candidates.size() && i < max_rows; ++i) {
    const Candidate& c = candidates[i];
    char line[220];
    const int len = std::snprintf(line, sizeof line,
                                  "  %-18s %10.4g %12.4g %6s %10.4g %8.4g %10.1f %10.1f  %s\n",
                                  c.name().c_str(), c.seconds, c.words,
                                  lower_bound > 0 ? fmt(c.words / lower_bound).c_str() : "-",
                                  c.redist_words, c.messages, double(c.memory_bytes) / 1048576.0,
                                  double(c.added_bytes) / 1048576.0, c.fits ? "yes" : "no");
    // snprintf returns the untruncated length (negative on an encoding error): write what fits.
    s.write(line, std::clamp(len, 0, static_cast<int>(sizeof line) - 1));
  }
  s << "chosen: " << chosen.name() << " (predicted " << fmt(chosen.seconds) << " s, "
    << fmt(chosen.words) << " words/rank";
  if (lower_bound > 0) s << " = " << fmt(chosen.words / lower_bound) << " x lower bound";
  s << ")\n";
  explain_memory(s, *this);
  return s.str();
}

}  // namespace shardmm
