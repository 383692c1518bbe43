// `shardmm multiply A.npy B.npy -o C.npy`: C = alpha op(A) op(B) + beta C0 from files, read
// and written with collective MPI-IO straight into / out of the distributed layouts.
#pragma once

#include <cstdint>
#include <string>

#include "shardmm/ooc.hpp"
#include "shardmm/plan.hpp"
#include "shardmm/types.hpp"

namespace shardmm::cli {

struct MultiplyConfig {
  std::string a, b, output, c_in;
  Op transa = Op::N, transb = Op::N;
  double alpha = 1.0, beta = 0.0;
  bool beta_given = false;  ///< --beta was given; else beta is 1 with --c-in
  std::string algo = "auto";
  std::string layout_a, layout_b, layout_c;  ///< notation; empty: bc(nb,nb)
  std::int64_t nb = 64;
  std::string format = "npy";             ///< npy | raw
  std::string shape_a, shape_b, shape_c;  ///< raw: "RxC"
  /// raw: bytes before A's, B's, C0's data (another format's header, say); 64-bit
  std::int64_t offset_a = 0, offset_b = 0, offset_c = 0;
  std::string dtype = "f64";  ///< raw: element type
  std::string order = "F";    ///< raw: C (row-major) or F (column-major) files
  bool fortran_out = true;    ///< npy output order
  bool quiet = false;
  // The algorithm options, as bench's (algo_options.hpp).
  std::string grid;                    ///< "PxQ" operand mesh, or "PxQxC" 2.5D grid
  index_t panel = 0;                   ///< SUMMA C-stationary's panel width
  index_t stationary_chunk = 0;        ///< SUMMA A/B-stationary's chunk per owner
  index_t ring_chunk = 0;              ///< the ring's chunk at p = 2, its pass at p > 2
  std::string strassen_step = "auto";  ///< auto|breadth-first|depth-first
  std::string stationary = "auto";     ///< SUMMA variant: auto|A|B|C
  std::string ring_axis;
  std::string wire = "f32";   ///< --wire: f32 | bf16 | f16 (Options::wire)
  std::string wait = "auto";  ///< --wait: auto | spin | sleep (Options::wait)
  bool bidirectional = false;
  bool allow_fast = false;    ///< --allow-fast: Auto may pick Strassen
  std::string memory_limit;   ///< per rank for the planner, e.g. 512M
  std::string memory_growth;  ///< Auto's cap on added memory, e.g. 2 or unlimited
  int blas_threads = 0;       ///< OpenBLAS threads per rank (0: as set)
  std::string trace;          ///< --trace: Options::trace of the products (docs/PROFILING.md)
  // Out of core (docs/OUT_OF_CORE.md): with a memory limit, a product that does not fit runs
  // streamed from the files.
  std::string io = "posix";        ///< how the streamed path reads: posix | mpiio | mmap
  std::string write = "buffered";  ///< how the streamed path writes C: buffered | direct
  bool out_of_core = false;        ///< --out-of-core: stream even when everything fits
  bool progress = false;           ///< --progress: stages, or blocks done and an ETA, on stderr
};

/// The out-of-core run of a 2-D product (multiply_ooc.cpp): false when it fits in memory
/// (the ordinary path runs then); else streams it, prints what ran and returns true.
bool run_multiply_out_of_core(const MultiplyConfig& cfg);

/// `plan --memory-limit`: in-core vs out-of-core for an m x n x k product, bytes read and
/// written per rank, passes over A and B and the predicted time with panels read through `io`,
/// and each read path's own plan's predicted time (rank 0 prints).
void print_out_of_core_plan(index_t m, index_t n, index_t k, Dtype dtype, int ranks,
                            std::int64_t budget, const MachineProfile& profile,
                            IoMethod io = IoMethod::Posix);

/// Collective: bytes per second a rank writes (then reads back, its pages dropped from the
/// page cache with posix_fadvise) a 32 MiB file in `dir`; the slowest rank's figure.
double measure_disk_bandwidth(const std::string& dir);

/// Checks the output's destination and every input's header (rank 0 looks, every rank throws
/// the same error) before any data moves; then reads, multiplies and writes C. 1-D .npy
/// operands follow numpy's matmul: A (k,) is a row, B (k,) a column, and the dimension they
/// add is dropped from C's shape. Returns 0 or throws.
int run_multiply(const MultiplyConfig& cfg);

}  // namespace shardmm::cli
