// Options of gemm, with their defaults in one place. Environment knobs: see README.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace shardmm {

enum class Algorithm { Auto, Local, Summa, Cannon, Ring, Sharded, Gemm25D, Strassen };

std::string to_string(Algorithm a);
/// auto|local|summa|cannon|ring|sharded|25d|strassen
Algorithm parse_algorithm(std::string_view text);

/// Which ring form the 1D collective matmul uses.
enum class RingForm {
  Auto,           ///< circulate the smallest of A, B and C
  AllGatherA,     ///< A's row blocks circulate: A[I_X,K] . B[K,J_X] -> C[I,J_X]
  AllGatherB,     ///< B's column blocks circulate: A[I_X,K] . B[K,J_X] -> C[I_X,J]
  ReduceScatter,  ///< partial C blocks circulate: A[I,K_X] . B[K_X,J] -> C[I_X,J]
};

/// SUMMA variants, named by the matrix that does not move (ScaLAPACK's AB/AC/BC,
/// Elemental's SUMMA_NNA/NNB/NNC).
enum class Stationary { Auto, A, B, C };

/// The format f32 operands travel in (Options::wire).
enum class Wire {
  F32,   ///< as stored (the default)
  BF16,  ///< bfloat16: half the bytes, each moved element rounded once (unit roundoff 2^-8)
  F16,   ///< IEEE half: half the bytes, unit roundoff 2^-11, finite only below 65520
};

std::string to_string(Wire w);
/// f32|bf16|f16 (also "none" for f32)
Wire parse_wire(std::string_view text);

/// Strassen's first step (Options::strassen_step).
enum class StrassenStep {
  /// Breadth-first on 7 Q ranks when the smallest side of the product reaches the crossover
  /// (Options::fast_crossover), else depth-first.
  Auto,
  /// Breadth-first (CAPS): the seven half-size products at once, each on its own group of
  /// P / 7 ranks. NotSupported unless the ranks are a multiple of 7, m and n at least twice
  /// the ranks and k at least 2.
  BreadthFirst,
  /// Depth-first: no breadth-first step; the ranks share the product in the classical
  /// distributions (line, column or grid form) and each recurses locally.
  DepthFirst,
};

std::string to_string(StrassenStep s);
/// auto|breadth-first|depth-first (also with '_' for '-')
StrassenStep parse_strassen_step(std::string_view text);

/// How a call's ranks wait for their messages (Options::wait).
enum class Wait {
  Auto,   ///< SHARDMM_WAIT, else Sleep when the node runs more ranks than it has CPUs, else Spin
  Spin,   ///< MPI_Waitall / MPI_Waitany: the quickest answer, a core kept busy polling
  Sleep,  ///< MPI_Testall for 50 us, then naps of 20-200 us between tests: the core left to others
};

std::string to_string(Wait w);
/// auto|spin|sleep
Wait parse_wait(std::string_view text);

/// Auto's default cap on added memory, as a multiple of the caller's local A + B + C
/// (Options::memory_growth).
inline constexpr double kLeanMemoryGrowth = 1.3;

struct Options {
  Algorithm algorithm = Algorithm::Auto;
  /// Let Auto consider fast (Strassen-Winograd) algorithms. Their error bound is weaker than
  /// classical GEMM's (docs/ALGORITHMS.md), so Auto never picks one unless this is set;
  /// Algorithm::Strassen asked for by name runs regardless.
  bool allow_fast = false;
  /// Strassen: smallest min(m, n, k) of a local product at which a Winograd step is taken
  /// (0: the machine profile's, measured by `shardmm calibrate`).
  std::int64_t fast_crossover = 0;
  /// SUMMA C-stationary (and 2.5D's SUMMA per slice): the panel width along k (0: the widest
  /// of 4, 2 or 1 x 384 whose buffers fit in a fifth of the rank's A + B + C, else 256 if its
  /// buffers fit in a quarter, else 128; panels cut at the operands' k-block boundaries).
  /// See src/core/blocking.hpp. Not read by any other algorithm: a named Algorithm::Ring
  /// with a panel is rejected (InvalidArgument), its chunk is ring_chunk.
  std::int64_t panel = 0;
  /// SUMMA A/B-stationary: the columns (A stays) or rows (B stays) of C per owner that one
  /// chunk of the moving operand streams (0: the widest whose buffers fit in half of the
  /// rank's A + B + C, at least 32).
  std::int64_t stationary_chunk = 0;
  /// Ring at p = 2: the chunk in which the two ranks swap, the AllGather forms' chunk of k (0:
  /// 4, 2 or 1 x 384, else 256) and the ReduceScatter form's chunk of C's split dimension (0:
  /// 4, 2 or 1 x 384). Longer rings: the ReduceScatter form's pass, the columns (rows) of C's
  /// unsplit dimension whose sums circulate at once (0: all of them when their buffers fit in
  /// half the rank's A + B + C, else the widest multiple of 384 that fits); the AllGather
  /// forms' pass, the k of the tiles that circulate at once (0: all of it when two arriving
  /// tiles fit in half the rank's A + B + C, else the widest multiple of 384 that fits).
  std::int64_t ring_chunk = 0;
  /// Block size of the layouts an algorithm redistributes into (0: block layouts).
  std::int64_t block = 0;
  /// SUMMA: which matrix stays in place (Auto: the planner prices the three variants on the
  /// grid SUMMA runs on and picks the one predicted fastest).
  Stationary stationary = Stationary::Auto;
  /// Overlap communication with the local GEMM (non-blocking, double-buffered).
  bool overlap = true;
  /// Ring: the mesh axis to run along (empty: the only mesh axis longer than 1, so a 1 x P
  /// grid is a line; with two or more axes longer than 1, the longest, the first of equal
  /// ones, the others replicating the ring).
  std::string ring_axis;
  RingForm ring_form = RingForm::Auto;
  /// Ring, AllGather forms: split the circulating tiles along k and send halves both ways.
  bool bidirectional = false;
  /// 2.5D: grid rows x cols x k-slices (all 0: the planner chooses among grids with >= 2
  /// slices). Their product must equal the number of ranks. Only 2.5D reads them: a named
  /// Algorithm::Strassen with a grid is rejected (InvalidArgument), its step is strassen_step.
  int grid_m = 0, grid_n = 0, grid_k = 0;
  /// Strassen: how the first Winograd step of the distributed product is taken.
  StrassenStep strassen_step = StrassenStep::Auto;
  /// Per-rank memory limit in bytes for the planner (0: SHARDMM_MEMORY_LIMIT, else none).
  /// When set it replaces the default policy below: Auto picks among the plans within it.
  std::int64_t memory_limit = 0;
  /// Without a memory limit, Auto is lean: it picks only plans whose added memory (the
  /// workspace pool's high-water mark: buffers, copies of operands in other layouts) is at
  /// most this multiple of the caller's local A + B + C on the busiest rank (0:
  /// SHARDMM_MEMORY_GROWTH, else kLeanMemoryGrowth = 1.3; a negative value: no cap, Auto may
  /// pick any plan). Named algorithms run regardless. See docs/PERFORMANCE.md.
  double memory_growth = 0;
  /// OpenBLAS threads for the local GEMMs (0: leave OpenBLAS's setting, OPENBLAS_NUM_THREADS).
  /// One rank per core wants 1; one rank per node wants the node's cores. The count is the
  /// BLAS's, process-wide: it stays set after the call.
  int blas_threads = 0;
  /// Trace this call into this file: Chrome trace-event JSON (Perfetto, chrome://tracing), one
  /// track per rank with the call's phases, steps, exchanges, waits and local GEMMs
  /// (docs/PROFILING.md). Empty: the file SHARDMM_TRACE names, else no trace. A file collects
  /// every call of the process traced into it and is rewritten whole after each.
  std::string trace;
  /// f32 products: the format A and B travel in between ranks. BF16 or F16 halve the bytes of
  /// every operand transfer (redistributions into the algorithm's layouts, broadcasts, shifts,
  /// gathers); each moved element is rounded once to the format, partial sums of C still travel
  /// in f32, and the local GEMMs accumulate in f32. Error bound: docs/ALGORITHMS.md ("Wire
  /// formats"). Ignored for other element types (16-bit products always move 16 bits); not
  /// with Algorithm::Strassen (NotSupported), and Auto then leaves fast algorithms out.
  Wire wire = Wire::F32;
  /// How this call's ranks wait for messages, and the calls it makes inside (its
  /// redistributions) with it: Spin or Sleep; Auto: SHARDMM_WAIT, else sleep when the launcher
  /// puts more ranks on the node than it has CPUs, else spin (docs/ALGORITHMS.md). Resolved
  /// once at the call's entry (comm::WaitScope).
  Wait wait = Wait::Auto;
};

}  // namespace shardmm
