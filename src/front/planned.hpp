// gemm's two halves (gemm.cpp), for callers that plan once and run many products of the same
// layouts (gemm_batched's batch elements): the plan (rank-local, no communication) and the
// run of one product with it (collective over the product's mesh, no planning).
#pragma once

#include <optional>

#include "algo/algo.hpp"
#include "front/resolve.hpp"
#include "shardmm/gemm.hpp"

namespace shardmm::front {

/// A call's plan: the planner's choices and the algorithm's setup on the caller's mesh (none
/// when the product runs remeshed, or is trivial: k = 0 or alpha = 0).
struct Planned {
  Resolved how;
  std::optional<algo::Setup> setup;
  bool trivial = false;
};

/// Options::wire kept for f32 only; a 16-bit wire leaves Strassen out (NotSupported when it
/// is asked for by name). Every rank alike.
template <Scalar T>
Options wire_checked(const Options& options);

/// Plans problem `p` on `mesh` (the operands'), `options` as wire_checked returns them.
/// Rank-local: reads the machine profile (SHARDMM_PROFILE) and may throw (a bad profile, the
/// memory check), so call it where failures are agreed.
template <Scalar T>
Planned plan_product(const algo::Problem& p, const Mesh& mesh, bool trivial,
                     const Options& options);

/// Runs one product of the planned problem's shapes and layouts, with `options` under an
/// open comm::WireScope of options.wire: operands into the setup's layouts, the algorithm, C
/// folded back. Collective over C's mesh (active there, m and n > 0); no planning and no
/// agreement on the plan. The report's counters are this product's.
template <Scalar T>
GemmReport run_product(const Planned& d, const algo::Problem& p, Op opA, Op opB, T alpha,
                       const DistMatrix<T>& A, const DistMatrix<T>& B, T beta, DistMatrix<T>& C);

/// algo::SubProduct, the front end's entry for a product an algorithm composes on a group of
/// its ranks (Strassen's breadth-first step): validated, wire_checked and planned (agreed by
/// C's ranks) as gemm plans a call, traced as a "gemm" phase of the call around it, run; its
/// times added to `t`. Collective over C's mesh.
template <Scalar T>
void sub_product(const algo::Operands<T>& x, const Options& o, algo::Timers& t);

}  // namespace shardmm::front
