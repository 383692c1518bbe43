// The planning half of the gemm front end (gemm.cpp): a call's global description, the
// planner's answers turned into explicit options, the memory check, and the chosen
// algorithm's setup. Global metadata only: no communication, the same on every rank.
#pragma once

#include <optional>
#include <string>

#include "algo/algo.hpp"
#include "plan/request.hpp"
#include "shardmm/plan.hpp"

namespace shardmm::front {

/// A call's global description: shapes, ops, the caller's layouts. Throws
/// DimensionMismatch / InvalidArgument / NotSupported on a bad call (every rank alike).
template <Scalar T>
algo::Problem validate(Op opA, Op opB, const DistMatrix<T>& A, const DistMatrix<T>& B,
                       const DistMatrix<T>& C);
/// The same for a C not made yet, of layout C on A's mesh (gemm_output_layout).
template <Scalar T>
algo::Problem validate(Op opA, Op opB, const DistMatrix<T>& A, const DistMatrix<T>& B,
                       const Layout& C);

/// The planner's request for this call on `mesh` (the operands'): sizes, dtype, the memory
/// limit, the machine profile (SHARDMM_PROFILE, read here once per call), whether the GEMMs
/// relay broadcasts (the mesh spans nodes) and what the caller's layouts save.
plan::Request request_for(const algo::Problem& p, const Mesh& mesh, Dtype dtype, const Options& o);

/// The whole request for a public one: when it names the caller's layouts (a, b, c), checked
/// and described (what they save). Throws InvalidArgument / DimensionMismatch for layouts
/// that are not all three, not on one mesh of its ranks, or do not fit m, n, k.
plan::Request caller_request(const PlanRequest& request);

/// Fills the request's description of the caller's layouts (what they save): SUMMA on the
/// caller's grid, rings on the caller's line, the sharding rules, every candidate's exact
/// redistribution.
void describe_inputs(const algo::Problem& p, plan::Request& q);

/// Options with every choice the planner makes filled in: Auto's algorithm, variant and grid
/// (`remesh`: the mesh shape to run on when it is not the caller's), 2.5D's grid when none
/// is given, SUMMA's variant when Stationary::Auto. `why` says what Auto chose.
struct Resolved {
  Options options;
  std::optional<MeshShape> remesh;
  std::string why;
};
/// The step a Strassen candidate takes: its grid 1xQx7 is the breadth-first step.
StrassenStep strassen_step_of(const Candidate& c);

/// Throws InvalidArgument (the same on every rank: options only) for a negative panel or
/// chunk, and for an option given to a named algorithm that reads another's: a panel for the
/// ring (its chunk is ring_chunk), a grid for Strassen (its step is strassen_step).
void check_options(const Options& o);
/// Checks the options (check_options), then fills in the planner's choices.
Resolved resolve(const algo::Problem& p, const plan::Request& q, const Options& o);

/// Elements of the caller's local A + B + C on the busiest rank (memory.cpp).
double resident_elements(const algo::Problem& p);

/// Elements the front end (or 2.5D itself) adds on the busiest rank to run in layouts `to`:
/// the copies of the operands not already in them and the redistributions' largest send and
/// receive buffers (memory.cpp).
double staged_elements(const algo::Problem& p, const algo::Layouts25D& to);

/// The algorithm's setup (its layouts) for explicit options.
algo::Setup make_setup(const algo::Problem& p, const Options& o);

/// The planner's candidate the setup runs (its algorithm's own part: variant, form, grid).
Candidate candidate_of(const algo::Problem& p, const algo::Setup& s);
/// The planner's candidate for the setup, priced (memory_bytes, added_bytes, fits).
Candidate predicted(const algo::Problem& p, const algo::Setup& setup, const plan::Request& q);

/// Throws OutOfMemory when the setup's predicted peak per rank exceeds the memory limit.
void check_memory(const algo::Problem& p, const algo::Setup& setup, const plan::Request& q);

/// The problem on the same ranks arranged as `shape`, with layouts that fit nothing (so the
/// algorithm's own layouts are used).
algo::Problem remeshed(const algo::Problem& p, const MeshShape& shape);

}  // namespace shardmm::front
