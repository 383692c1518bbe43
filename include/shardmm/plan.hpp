// The planner: a cost model over candidate algorithms and grids, and the machine profile it
// uses. Pure functions and values: planning needs no communication and runs for any P on one
// rank.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardmm/layout.hpp"
#include "shardmm/options.hpp"
#include "shardmm/types.hpp"

namespace shardmm {

/// Memory-independent lower bound on the words moved by the busiest rank for an m x n x k
/// product on P ranks (Al Daas, Ballard, Grigori, Kumar, Rouse 2022): with d1 >= d2 >= d3 the
/// sorted dimensions,
///   P <= d1/d2:               d2*d3*(1 - 1/P)
///   d1/d2 <= P <= d1*d2/d3^2: 2*sqrt(d1*d2*d3^2/P) - (d1*d3 + d2*d3)/P
///   otherwise:                3*(d1*d2*d3/P)^(2/3) - (d1*d2 + d1*d3 + d2*d3)/P
double lower_bound_words(std::int64_t m, std::int64_t n, std::int64_t k, int P);

/// Latency, bandwidth and local GEMM rate the cost model charges. Defaults are documented in
/// docs/ALGORITHMS.md; `shardmm calibrate` measures them and writes JSON.
struct MachineProfile {
  double latency_s = 5e-6;              ///< alpha: seconds per message
  double bytes_per_s = 4e9;             ///< 1 / beta: point-to-point bandwidth per rank
  double gflops[4] = {60, 30, 60, 30};  ///< local GEMM rate per rank: f32, f64, c64, c128
  /// Strassen: smallest min(m, n, k) at which one Winograd step beats a classical GEMM
  /// (JSON "strassen_crossover", optional; calibrate measures it).
  std::int64_t strassen_crossover = 1536;
  /// Out of core: bytes per second one rank reads or writes a matrix file (JSON
  /// "disk_bytes_per_s", optional; calibrate measures it; docs/OUT_OF_CORE.md).
  double disk_bytes_per_s = 1e9;
  /// Out of core: bytes of a matrix file in the page cache one rank reads per second of what
  /// the reading costs its GEMMs, by read path (IoMethod), every rank reading (JSON
  /// "read_copy_bytes_per_s": {"posix", "mpiio", "mmap"}, each optional; calibrate measures
  /// mpiio's; docs/OUT_OF_CORE.md). The defaults were measured on the development machine.
  struct ReadCopyRates {
    double posix = 1.5e9;  ///< a reader thread's preads beside the GEMMs
    double mpiio = 2e9;    ///< collective MPI-IO reads, which block (the GEMMs wait)
    double mmap = 0.25e9;  ///< a reader thread's copies out of fresh mappings beside the GEMMs
  } read_copy_bytes_per_s;
  /// Out of core: seconds each contiguous run of a read costs on top of its bytes, by read
  /// path (JSON "read_run_seconds": {"posix", "mpiio", "mmap"}, each optional, >= 0; calibrate
  /// measures mpiio's). posix's and mmap's are 0: their rates above were measured on whole
  /// runs of products, runs included.
  struct ReadRunSeconds {
    double posix = 0;
    double mpiio = 6.5e-6;  ///< Open MPI's collective reads, per run of a panel's file view
    double mmap = 0;
  } read_run_seconds;
  /// Of communication that runs during the local GEMM, the share of the smaller of the two
  /// that is not hidden (JSON "overlap_exposed", optional, 0 .. 1): 0 is perfect overlap, 1
  /// none (ranks that share cores with others' progress and TCP stacks come close to that).
  double overlap_exposed = 0.25;
  std::string source = "defaults";

  [[nodiscard]] double flops_per_s(Dtype d) const { return gflops[static_cast<int>(d)] * 1e9; }
  /// Reads a profile written by to_json (throws IoError).
  static MachineProfile from_json_file(const std::string& path);
  /// SHARDMM_PROFILE (a JSON file) if set, else the defaults.
  static MachineProfile from_environment();
  [[nodiscard]] std::string to_json() const;
};

/// One way to run the product, with its predicted cost on the busiest rank.
struct Candidate {
  Algorithm algorithm = Algorithm::Auto;
  Stationary stationary = Stationary::C;  ///< SUMMA variant
  RingForm ring_form = RingForm::Auto;
  int pm = 1, pn = 1, pk = 1;  ///< grid: rows x cols x k-slices (ring: pm = P)
  double words = 0;            ///< received by the busiest rank inside the algorithm
  double redist_words = 0;     ///< plus these to move into / out of its layouts
  double messages = 0;
  double flops = 0;               ///< per rank
  std::int64_t memory_bytes = 0;  ///< peak per rank: operands, result, buffers
  /// What the call adds to the caller's own A, B and C on the busiest rank: the workspace
  /// pool's high-water mark (the algorithm's buffers, the operands' copies in its layouts and
  /// the redistributions' buffers). The lean policy compares it with PlanRequest::resident.
  std::int64_t added_bytes = 0;
  double seconds = 0;                      ///< predicted time
  bool fits = true;                        ///< within the memory limit
  [[nodiscard]] std::string name() const;  ///< e.g. "25d 2x2x2", "summa(A) 1x4", "ring(RS) 4"
};

/// What the planner is asked: the product, the ranks, the options that steer it and the
/// machine. A closed value: every field is something a caller knows. With the caller's
/// layouts (a, b, c) the planner prices what they save: SUMMA on their grid, rings on their
/// line, the sharding rules on them, and every candidate's exact redistribution from them
/// (block_cyclic_request and layouts_request fill them in); without, balanced estimates.
struct PlanRequest {
  std::int64_t m = 0, n = 0, k = 0;
  int ranks = 1;
  Dtype dtype = Dtype::F64;
  Op opA = Op::N, opB = Op::N;    ///< op(A), op(B): a, b are stored before op
  std::int64_t memory_limit = 0;  ///< bytes per rank; 0 = SHARDMM_MEMORY_LIMIT or none
  /// Options::memory_growth: without a memory limit, the cap on a candidate's added_bytes as
  /// a multiple of the caller's operands (0: SHARDMM_MEMORY_GROWTH, else kLeanMemoryGrowth;
  /// negative: no cap).
  double memory_growth = 0;
  /// Fast algorithms (Strassen) are candidates only when set (Options::allow_fast).
  bool allow_fast = false;
  /// Strassen's crossover (Options::fast_crossover); 0 = profile.strassen_crossover.
  std::int64_t fast_crossover = 0;
  /// Options::stationary_chunk: SUMMA A/B-stationary's chunk of C's columns (rows) per owner;
  /// 0 = the algorithm's own rule (blocking::stationary_chunk_width).
  std::int64_t stationary_chunk = 0;
  /// Options::ring_chunk: the ring's chunk at p = 2, its pass at p > 2; 0 = the algorithm's
  /// own rules (blocking::ring_chunk_width, rs_chunk_width, rs_pass_width, ag_pass_width).
  std::int64_t ring_chunk = 0;
  /// The machine the costs are for. gemm fills it once per call from SHARDMM_PROFILE
  /// (MachineProfile::from_environment); a request made by hand gets the built-in defaults.
  MachineProfile profile;
  /// Whether the mesh spans nodes, so that a chain broadcast's relays go on while the ranks
  /// multiply (the GEMM polls the messages in flight): each panel's pipeline fill then overlaps
  /// the next panel's transfer and a stream of panels pays it once.
  bool relays_in_gemm = false;
  /// The caller's A, B and C as stored, on one mesh of `ranks` ranks: all three or none.
  std::optional<Layout> a, b, c;
};

struct GemmPlan {
  PlanRequest request;
  /// The caller's local A + B + C on the busiest rank, bytes (from request.a/b/c, else the
  /// balanced share): what the lean policy's cap multiplies.
  std::int64_t resident_bytes = 0;
  std::vector<Candidate> candidates;  ///< cheapest first
  Candidate chosen;
  double lower_bound = 0;  ///< words per rank
  /// The memory policy in force: "limit" (a memory limit), "lean" (the growth cap) or "none".
  std::string policy;
  /// No candidate fits the lean cap: the leanest one was chosen (the cap is a default, not a
  /// limit the caller set, so Auto still runs).
  bool over_policy = false;
  /// The fastest candidate over the policy, when it is faster than the chosen one: what a
  /// larger budget (memory_limit, memory_growth) would buy. Empty otherwise.
  std::vector<Candidate> roomier;
  /// Table of candidates and the choice, with predicted words / lower bound.
  [[nodiscard]] std::string explain(std::size_t max_rows = 12) const;
};

/// Evaluates every candidate and picks the cheapest that fits the memory limit. Throws
/// OutOfMemory naming the bytes missing when none fits.
GemmPlan plan_gemm(const PlanRequest& request);

/// The cheapest candidate of one algorithm, priced as plan_gemm prices it: among every grid
/// and variant it has for these ranks, or only grid pm x pn when both are > 0. Candidates
/// within the memory limit come first; when none fits, the cheapest is returned with
/// `fits` false (the caller reports the shortfall). Throws NotSupported when the algorithm
/// has no candidate here (e.g. 2.5D on one rank).
Candidate cheapest_of(const PlanRequest& request, Algorithm algorithm, int pm = 0, int pn = 0);

/// Fills in the cost of one given candidate (words, messages, memory, time, fits).
Candidate evaluate(const PlanRequest& request, Candidate candidate);

/// The per-rank memory limit in force: request.memory_limit, else SHARDMM_MEMORY_LIMIT (read
/// with parse_bytes), else 0.
std::int64_t memory_limit(const PlanRequest& request);

/// The lean policy's growth cap in force: 0 when a memory limit is set (the limit rules), else
/// request.memory_growth, else SHARDMM_MEMORY_GROWTH (read with parse_growth), else
/// kLeanMemoryGrowth; negative: no cap.
double memory_growth(const PlanRequest& request);

/// The caller's local A + B + C on the busiest rank, bytes (from request.a/b/c, else the
/// balanced share (m k + k n + m n) / P).
std::int64_t resident_bytes(const PlanRequest& request);

/// A growth cap as people write one (--memory-growth, SHARDMM_MEMORY_GROWTH): a number >= 0
/// (1.3, 2), or "unlimited" (returned as -1). Throws InvalidArgument naming the text otherwise.
double parse_growth(std::string_view text);

/// A byte count as people write one (--memory-limit, SHARDMM_MEMORY_LIMIT): a number, then
/// optionally a unit. IEC and the short forms are powers of 1024: K = k = KiB = 2^10, M = MiB
/// = 2^20, G = GiB = 2^30, T = TiB = 2^40; SI spellings are powers of 1000: KB = kB = 10^3,
/// MB = 10^6, GB = 10^9, TB = 10^12; B or nothing: bytes. "1.5G" is allowed; the result must be
/// at least 1 byte and fit int64. Throws InvalidArgument naming the text otherwise.
std::int64_t parse_bytes(std::string_view text);

}  // namespace shardmm
