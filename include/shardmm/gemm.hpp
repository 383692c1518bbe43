// C <- alpha * op(A) * op(B) + beta * C on distributed matrices.
#pragma once

#include <cstdint>
#include <string>

#include "shardmm/dist_matrix.hpp"
#include "shardmm/options.hpp"
#include "shardmm/plan.hpp"

namespace shardmm {

/// What one gemm call did on this rank.
struct GemmReport {
  Algorithm algorithm = Algorithm::Auto;  ///< the algorithm that ran
  std::string grid;                       ///< e.g. "2x3 (x,y)" or "ring over x (6)"
  std::string detail;                     ///< collectives / variant, human readable
  std::int64_t bytes_sent = 0;            ///< by this rank, algorithm + redistribution
  std::int64_t bytes_received = 0;
  std::int64_t messages = 0;
  std::int64_t redist_bytes_sent = 0;  ///< part of bytes_sent spent redistributing (in and
                                       ///< out of the algorithm's layouts, any mesh)
  std::int64_t redist_bytes_received = 0;
  /// The whole call (planning included) and the parts spent in local GEMMs, waiting for
  /// communication and redistributing.
  double seconds_total = 0, seconds_gemm = 0, seconds_comm = 0, seconds_redist = 0;
  int blas_threads = 0;  ///< OpenBLAS threads the local GEMMs ran with
  [[nodiscard]] std::string to_string() const;
  /// One JSON object with every field above ("algorithm" by name), for the user's own logs.
  [[nodiscard]] std::string to_json() const;
};

/// Collective over the operands' mesh. Shapes and layouts are validated on global metadata
/// before any communication: a mismatch throws DimensionMismatch on every rank.
template <Scalar T>
GemmReport gemm(Op opA, Op opB, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
                DistMatrix<T>& C, const Options& options = {});

/// What gemm would run for these operands and options (algorithm, grid, detail; the counters
/// stay 0), without running it: pure, no communication. Throws as gemm does on a bad call.
/// 16-bit products: A, B and C stored as bf16 (or f16), moved between ranks in 16 bits, each
/// local GEMM on tiles widened to f32 and every partial sum of C kept in f32; C is rounded to
/// 16 bits once. alpha and beta are f32. Error bound: docs/ALGORITHMS.md ("16-bit formats").
GemmReport gemm(Op opA, Op opB, float alpha, const DistMatrix<bf16>& A, const DistMatrix<bf16>& B,
                float beta, DistMatrix<bf16>& C, const Options& options = {});
GemmReport gemm(Op opA, Op opB, float alpha, const DistMatrix<f16>& A, const DistMatrix<f16>& B,
                float beta, DistMatrix<f16>& C, const Options& options = {});

template <Scalar T>
GemmReport gemm_dry_run(Op opA, Op opB, const DistMatrix<T>& A, const DistMatrix<T>& B,
                        const DistMatrix<T>& C, const Options& options = {});

/// The layout of a C the caller has not made yet, for gemm(opA, opB, alpha, A, B, beta, C,
/// options): the one the algorithm the planner picks works C in, so gemm moves no C. The
/// planner first prices the candidates for a C in the sharding rule's layout (op(A)'s row
/// sharding, op(B)'s column sharding, the columns replicated where that would use a mesh axis
/// twice); when the chosen algorithm works C in another layout, it plans again for a C there
/// (at most three plannings). The sharding rule's layout stays when the choice runs on another
/// arrangement of the ranks (C moves there and back anyway) or the product is empty. Pure, no
/// communication; throws as gemm does on a bad call. Make C with
/// DistMatrix<T>(A.mesh(), gemm_output_layout(opA, opB, A, B, options)).
template <Scalar T>
Layout gemm_output_layout(Op opA, Op opB, const DistMatrix<T>& A, const DistMatrix<T>& B,
                          const Options& options = {});

/// The layouts shardmm would choose for A, B and C, and the arrangement of the ranks.
struct PreferredLayouts {
  MeshShape mesh;  ///< make the operands' mesh so: Mesh(comm, mesh)
  Layout A, B, C;  ///< stored layouts on `mesh` (A is k x m when opA != N)
  Candidate plan;  ///< what gemm's Auto runs on them, with its predicted cost
  /// gemm moves none of A, B and C out of these layouts (false only when no candidate's
  /// layouts allow that; then the fastest plan's).
  bool in_place = false;
};

/// The layouts in which gemm's Auto runs op(A) * op(B) (request.m x request.n x request.k,
/// dtype, ranks, memory limit, allow_fast, machine profile) at the least predicted cost
/// without redistributing A, B or C: every candidate the planner has is tried in its own
/// layouts (a line for the ring, its grid for SUMMA, Cannon and Strassen; 2.5D always moves
/// its inputs), planned there as gemm plans, and the fastest that moves nothing wins. The
/// request's layouts (a, b, c) are ignored. gemm plans with
/// SHARDMM_PROFILE: set request.profile = MachineProfile::from_environment() to match it.
/// Pure, no communication; throws InvalidArgument for negative sizes, OutOfMemory when no
/// candidate fits the memory limit.
PreferredLayouts preferred_layouts(const PlanRequest& request, Op opA = Op::N, Op opB = Op::N);

/// The request for op(A) * op(B) (opA, opB set) with A, B and C held 2D block-cyclic
/// bc(nb, nb) (ScaLAPACK's layout) on a pm x pn grid: planned, it prices what gemm's Auto
/// sees for such inputs (SUMMA in place on that grid with the words of the actual tiles, the
/// rings in place when the grid is a line). Pure; `shardmm plan --grid --nb --transa
/// --transb` prints the plan of this request. Throws InvalidArgument for a grid that is not
/// request.ranks ranks or nb < 1.
PlanRequest block_cyclic_request(PlanRequest request, Op opA, Op opB, int pm, int pn,
                                 index_t nb = 64);

/// The same for operands in any layouts on one mesh (A and B as stored, before op): the
/// request names them (a, b, c), and its plan prices what they save (SUMMA on their grid,
/// rings on their line), the sharding rules' plan for them, and every candidate's
/// redistribution from them. Pure; `shardmm plan --grid --layout-a --layout-b --layout-c`
/// prints its plan. Throws InvalidArgument when the layouts are not on one mesh of
/// request.ranks ranks, DimensionMismatch when they do not fit m, n and k.
PlanRequest layouts_request(PlanRequest request, Op opA, Op opB, const Layout& A, const Layout& B,
                            const Layout& C);

}  // namespace shardmm
