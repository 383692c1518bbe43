// Blas3Plan::explain and the plan's "why": the table `shardmm plan --op` prints.
#include <algorithm>
#include <cstdio>
#include <string>

#include "front/plan_blas3_text.hpp"

namespace shardmm {
namespace {

std::string num(double v, const char* fmt = "%.3g") {
  char b[48];
  (void)std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string mib(double bytes) { return num(bytes / (1024.0 * 1024.0), "%.1f") + " MiB"; }

// What each algorithm is for, in a clause.
std::string purpose(const std::string& algorithm) {
  if (algorithm == "triangle")
    return "computes only C's triangle where C lies, moving op(A)'s rows beside C's rows and "
           "columns";
  if (algorithm == "reduce")
    return "moves op(A) once, split along k, and sums every rank's n x n triangle into C";
  if (algorithm == "steps")
    return "keeps B in place and broadcasts one solved (multiplied) block of B per step";
  if (algorithm == "local")
    return "gives every rank all of op(A) and whole columns (rows) of B to solve alone";
  if (algorithm == "square+gemm")
    return "forms A's full square in A's layout, then runs gemm's own plan";
  return "moves op(A) into C's layout once (the routine's only algorithm)";
}

std::string flags(const Blas3Request& q) {
  std::string t = to_string(q.routine);
  const Blas3Routine r = q.routine;
  const bool sided = r == Blas3Routine::Symm || r == Blas3Routine::Hemm ||
                     r == Blas3Routine::Trmm || r == Blas3Routine::Trsm;
  if (sided) t += std::string(" side=") + (q.side == Side::Left ? "L" : "R");
  if (r != Blas3Routine::Tran && r != Blas3Routine::Geadd)
    t += std::string(" uplo=") + (q.uplo == Uplo::Lower ? "L" : "U");
  if (r != Blas3Routine::Symm && r != Blas3Routine::Hemm) t += " trans=" + to_string(q.op);
  return t;
}

}  // namespace

namespace front {

std::string blas3_why(const Blas3Plan& plan) {
  const Blas3Candidate& c = plan.chosen;
  std::string s = c.algorithm + " " + purpose(c.algorithm);
  if (plan.candidates.size() < 2) return s + "; the only candidate";
  const Blas3Candidate& o = plan.candidates[1];
  if (!o.fits && c.fits)
    return s + "; " + o.algorithm + " would add " + mib(double(o.memory_bytes)) +
           " per rank, over the cap of " + mib(double(plan.cap_bytes));
  if (!c.fits) s += " (every candidate is over the memory cap: the leanest wins)";
  return s + "; predicted " + num(c.seconds) + " s and " + num(c.words) + " words against " +
         o.algorithm + "'s " + num(o.seconds) + " s and " + num(o.words) + " words";
}

}  // namespace front

std::string Blas3Plan::explain() const {
  const Blas3Request& q = request;
  std::string s = flags(q) + ", m=" + std::to_string(q.m) + " n=" + std::to_string(q.n) +
                  " k=" + std::to_string(q.k) + ", " + to_string(q.dtype) + " on " +
                  std::to_string(q.ranks) + " ranks\n";
  s += "lower bound " + num(lower_bound) + " words/rank; " + num(flops) + " flops in all\n";
  char line[160];
  (void)std::snprintf(line, sizeof line, "  %-20s %12s %8s %12s %12s\n", "candidate", "words/rank",
                      "/LB", "memory/rank", "predicted s");
  s += line;
  for (const Blas3Candidate& c : candidates) {
    const std::string ratio = lower_bound > 0 ? num(c.words / lower_bound, "%.2f") : "-";
    const std::string mem = mib(double(c.memory_bytes)) + (c.fits ? "" : "!");
    (void)std::snprintf(line, sizeof line, "%c %-20s %12s %8s %12s %12s\n",
                        c.algorithm == chosen.algorithm ? '*' : ' ', c.name().c_str(),
                        num(c.words).c_str(), ratio.c_str(), mem.c_str(), num(c.seconds).c_str());
    s += line;
  }
  s += "chosen: " + chosen.name() + ": " + chosen.detail + "\nwhy: " + why + "\n";
  const bool any_over =
      std::any_of(candidates.begin(), candidates.end(), [](const auto& c) { return !c.fits; });
  if (cap_bytes > 0 && any_over)
    s += "(! over the memory cap of " + mib(double(cap_bytes)) + " per rank)\n";
  return s;
}

}  // namespace shardmm
