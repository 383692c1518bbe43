// The planner's whole request: the public PlanRequest plus what the caller's layouts save.
// Only the front end works those facts out (front/resolve.cpp: caller_request, request_for),
// from the layouts; the cost model reads them. A request without them is priced with the
// balanced estimates.
#pragma once

#include <array>
#include <functional>

#include "shardmm/plan.hpp"

namespace shardmm::plan {

struct Request : PlanRequest {
  Request() = default;
  /// The public request alone: its layouts (if any) are not described (front::caller_request
  /// does that).
  explicit Request(const PlanRequest& r) : PlanRequest(r) {}

  /// Elements of the caller's local A + B + C on the busiest rank; 0: the balanced share
  /// (m k + k n + m n) / P.
  double resident = 0;
  /// The caller's grid (pm x pn) when its operands are already 2D block-cyclic on it;
  /// candidates on that grid then pay no redistribution. 0 = unknown.
  int current_pm = 0, current_pn = 0;
  /// With current_pm/pn: the words SUMMA C-stationary receives on the busiest rank of that
  /// grid, from the caller's actual tiles (uneven block-cyclic splits, e.g. k <= nb on 2 rows,
  /// where one process row holds all of B). 0 = the balanced formula.
  double current_summa_words = 0;
  /// Which of A, B, C ([0..2]) already sit in each ring form's layouts on the caller's mesh,
  /// indexed by RingForm - 1 (AllGatherA, AllGatherB, ReduceScatter); those operands pay no
  /// redistribution. Set when the caller's mesh is a line (one axis longer than 1).
  std::array<std::array<bool, 3>, 3> ring_in_place{};
  /// Per ring form (same index): whether it streams its non-circulating operand at p = 2
  /// (op(B) split along k for AllGatherA, op(A) for AllGatherB) instead of re-splitting it.
  std::array<bool, 3> ring_streamed{};
  /// The sharding rules' plan for the caller's layouts (words < 0: none, and no sharded
  /// candidate): elements the busiest rank receives (of them `streamed` while the product
  /// runs), its messages, its flops in real arithmetic (2 m' n' k', duplicated work included)
  /// and the elements it holds (operands, moved operands, product, buffers).
  struct Sharded {
    double words = -1, streamed = 0, messages = 0, flops = 0, memory = 0;
  } sharded;
  /// Exact words the busiest rank receives to move the caller's operands into a candidate's
  /// layouts and the result back; unset, or a negative answer: the balanced estimate (A, B and
  /// C's shares, (P - 1) / P of each).
  std::function<double(const Candidate&)> redistribution_words;
  /// Elements the front end adds on the busiest rank to run a candidate in its layouts: the
  /// copies of the operands that move and the redistributions' send and receive buffers;
  /// unset, or a negative answer: the balanced estimate.
  std::function<double(const Candidate&)> staged_elements;
};

/// plan_gemm, cheapest_of, evaluate and resident_bytes of include/shardmm/plan.hpp on the whole
/// request (planner.cpp); the public ones describe the request's layouts first.
GemmPlan plan_gemm(const Request& request);
Candidate cheapest_of(const Request& request, Algorithm algorithm, int pm = 0, int pn = 0);
Candidate priced(const Request& request, Candidate candidate);
std::int64_t resident_bytes(const Request& request);

}  // namespace shardmm::plan
