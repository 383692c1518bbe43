// The sharding-rule matmul's plan (pure: layout metadata only; sharded.cpp runs it, the front
// end hands its cost to the planner). op(A) = [I, K], op(B) = [K, J] in the caller's (block)
// layouts, C asked as [I_c, J_c]{U_c}. A plan picks the layouts the local product runs on:
//   op(A') = [I', K'], op(B') = [K', J'], product P = [I', J']{U_K'},
// with I', J', K' over disjoint mesh axes, each taken from the operands' own groups with some
// axes gathered away (a suffix: blocks merge; a prefix: the remaining axes keep their blocks),
// or from C's groups (a slice when the operand is replicated there). Each move is one
// redistribution pattern (matrix/redistribute_plan.hpp) priced exactly: A -> A', B -> B' and
// P -> C (nothing when P is C's distribution; ReduceScatter or AllReduce over the K' axes;
// otherwise a slice or an exchange). The plan with the least predicted time (words,
// messages and the local product's flops, duplicated work included) wins; ties go to the
// smaller memory. This covers the guide's four cases and their variants: no communication,
// AllGather one operand (over part of an axis group when only part must go), multiply
// locally then ReduceScatter / AllReduce, AllToAll an operand, whichever moves least.
#pragma once

#include <string>

#include "algo/algo.hpp"

namespace shardmm::algo::sharded {

struct Plan {
  Layout A, B;          ///< stored layouts the operands are multiplied in
  Layout P;             ///< the local products' layout: [I', J']{U_K'}
  double words = 0;     ///< elements the busiest rank receives over all three moves
  double streamed = 0;  ///< of them, the most any rank receives while the product runs
  double messages = 0;  ///< messages the busiest rank sends
  double flops = 0;     ///< 2 m' n' k' of the busiest rank's local product (real arithmetic)
  double memory = 0;    ///< elements a rank holds beside the operands (moved operands,
                        ///< product, buffers), at the peak
  std::string detail;   ///< the moves, e.g. "A: AllGather over {y}; B: -; P = C"
};

/// The caller's layout as the sharding rules take it: block shardings over the same axes.
Layout as_block(const Layout& L);

/// The cheapest plan for a problem (its layouts taken as_block). Cached per problem (the
/// examples call the same shapes every step).
Plan plan_product(const Problem& caller);

}  // namespace shardmm::algo::sharded
