// Out-of-core products of matrix files: C <- alpha op(A) op(B) + beta C0 where A, B, C0 and C
// live in .npy or raw files and need not fit in memory. Under a per-rank budget
// (Options::memory_limit, else SHARDMM_MEMORY_LIMIT) the in-core path runs when the operands
// fit; otherwise C is computed in blocks that fit, each block streaming k-panels of op(A) and
// op(B) from the files, read ahead (double-buffered) while the current panel multiplies.
// docs/OUT_OF_CORE.md describes the schedule and when each I/O method wins.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <string>

#include "shardmm/options.hpp"
#include "shardmm/plan.hpp"
#include "shardmm/types.hpp"

namespace shardmm {

/// How the streamed path reads panels (the result is written behind the compute either way):
///  - Posix (the default): a reader thread preads each panel's runs into its buffer and a
///    writer thread pwrites each finished block; neither blocks the GEMM;
///  - MpiIo: collective MPI-IO (MPI_File_iread_at_all through a subarray file view), what
///    parallel file systems with collective buffering want; Open MPI completes these reads
///    inside the call, so they do not overlap the GEMM;
///  - Mmap: a reader thread maps only the byte span of the panel it reads, in windows (madvise
///    hints), and copies it out. Each mapped 4 KiB page costs a page-table entry: on virtual
///    machines that trap page faults this is the slowest of the three (docs/OUT_OF_CORE.md).
enum class IoMethod { Posix, MpiIo, Mmap };

std::string to_string(IoMethod io);
IoMethod parse_io_method(std::string_view text);  ///< "posix" | "mpiio" | "mmap"

/// A matrix in a file. An .npy file's header gives dtype, shape and order (the fields are
/// filled in by describe_file); a raw file is `data_offset` bytes that are skipped (another
/// format's header, say; 64-bit, so the data may start past 4 GiB) followed by exactly
/// rows*cols*dtype_size bytes of data to the end of the file.
struct MatrixFile {
  std::string path;
  bool raw = false;
  Dtype dtype = Dtype::F64;
  index_t rows = 0, cols = 0;  ///< as stored
  bool fortran_order = true;   ///< column-major (true) or row-major (false)
  std::int64_t data_offset = 0;

  static MatrixFile npy(std::string path);
  static MatrixFile raw_file(std::string path, Dtype dtype, index_t rows, index_t cols,
                             bool fortran_order, std::int64_t data_offset = 0);
};

/// Collective: for an .npy file, reads its header (rank 0) and fills in dtype, shape, order and
/// data offset; for a raw file, checks its size (data_offset plus the data). Same IoError on
/// every rank when unusable; a negative data_offset is an InvalidArgument.
MatrixFile describe_file(MatrixFile f, MPI_Comm comm);

/// How the operands' files lie, for the runs a panel's read takes: true where op(X)'s rows are
/// contiguous in X's file (C order and not transposed, or Fortran order and transposed), so a
/// panel's read is a run per row (one run when its rows are whole), else a run per column.
struct FileOrders {
  bool a_rows = true, b_rows = true, c0_rows = true;
};

/// The schedule of a product under a budget (the same on every rank).
struct OocPlan {
  bool out_of_core = false;
  std::int64_t budget = 0;      ///< bytes per rank in force (0: none)
  std::int64_t min_budget = 0;  ///< the least budget the out-of-core path can run in
  /// The least budget the in-core path runs in: the planner's per-rank memory estimate of the
  /// leanest in-core algorithm, at least the tiles read from the files plus a staging tile.
  std::int64_t in_core_bytes = 0;
  index_t m = 0, n = 0, k = 0;
  int ranks = 1;
  index_t bm = 0, bn = 0, kb = 0;  ///< C block rows x cols, k-panel width (out of core)
  index_t blocks = 0;  ///< C blocks in all, dealt round-robin (balanced: taken) to the ranks
  /// The predicted wall time of the streamed run on the busiest rank and its parts: the
  /// GEMMs (at the panel width's efficiency) plus the copies that share their cores (the
  /// kernel's and the GEMM's packing), the disk time of every byte read and written (overlapped
  /// with the GEMMs: the run takes the larger), and what cannot overlap (the first panels'
  /// read, the last block's write and sync, the wait for the other ranks' last blocks).
  double predicted_seconds = 0, predicted_compute = 0, predicted_disk = 0, predicted_edges = 0;
  /// The share of the operands' bytes the page cache held when planned (0-1; plan_files asks
  /// the kernel): their reads are priced as copies, the rest at the disk's rate.
  double cached = 0;
  /// The last `ranks` blocks (one per rank) are each cut into this many strips of the computed
  /// result's columns (1: not cut), so the ranks end a strip's GEMM apart, not a block's.
  index_t tail_strips = 1;
  /// The read path the schedule is priced for: its copies out of the page cache cost the
  /// profile's read_copy_bytes_per_s for it, and MPI-IO's reads do not overlap the GEMMs.
  IoMethod io = IoMethod::Posix;
  int passes_a = 0, passes_b = 0;                  ///< times op(A) / op(B) is read whole
  std::int64_t bytes_read = 0, bytes_written = 0;  ///< by the busiest rank
  /// The contiguous runs of the files the busiest rank's reads take (a panel of a C-order
  /// operand: one per row, unless its rows are whole): each costs the profile's
  /// read_run_seconds for the read path on top of its bytes.
  std::int64_t runs_read = 0;
  std::string to_string() const;
};

/// What ran. The seconds of this rank: `seconds` is the whole call, split into its parts
/// (their sum is `seconds`; `other_seconds` is what no part claims: setup, planning, buffers).
struct FileGemmReport {
  OocPlan plan;
  double seconds = 0;
  double open_seconds = 0;        ///< describing and opening the files, the output's reservation
  double read_wait_seconds = 0;   ///< waiting for panels and C0 blocks not yet read
  double compute_seconds = 0;     ///< the local GEMMs (and C0's scaling)
  double write_wait_seconds = 0;  ///< waiting for block writes not yet done
  double agree_seconds = 0;       ///< at each block's error agreement: waiting for other ranks
  double sync_seconds = 0;        ///< the durability step: sync (fsync) before the rename
  double rename_seconds = 0;      ///< closing, checking the size, renaming, agreeing on it
  double other_seconds = 0;
  double io_wait_seconds = 0;                      ///< read_wait_seconds + write_wait_seconds
  std::int64_t bytes_read = 0, bytes_written = 0;  ///< this rank
  std::int64_t bytes_written_direct = 0;           ///< of bytes_written, with O_DIRECT
  std::int64_t peak_rss = 0;                       ///< this rank (VmHWM), bytes
};

/// Progress of a streamed product, as seen by the rank that reports it.
struct FileGemmProgress {
  index_t blocks_done = 0, blocks_total = 0;       ///< C blocks, all ranks
  std::int64_t bytes_read = 0, bytes_written = 0;  ///< this rank so far
  double seconds = 0;                              ///< since the call started
};

/// The settings of gemm_files besides Options.
struct FileGemmSettings {
  IoMethod io = IoMethod::Posix;
  /// Run the out-of-core path even when everything fits (testing, benchmarks).
  bool force_out_of_core = false;
  /// posix and mmap, ranks on one host: a rank done with its C blocks takes the others' not
  /// yet started ones (counters in shared memory), so a slower rank no longer holds everyone
  /// up. The plan's read counts are those of the round-robin deal, which false keeps; MPI-IO
  /// and ranks on several hosts keep it too.
  bool balance = true;
  /// true: the result's whole pages are written with O_DIRECT (from a bounce buffer: no copy
  /// into the page cache), the partial pages at the ends of each run buffered; a file system
  /// that refuses O_DIRECT gets buffered writes (FileGemmReport::bytes_written_direct then 0).
  /// Off by default: on ext4 in the development VM it cost more system time than it saved
  /// (docs/OUT_OF_CORE.md, "Measured").
  bool direct_writes = false;
  /// Called on every rank after each of its slots of C blocks is handed to the writer. With
  /// MPI-IO every rank calls it at the same steps and it may communicate on the gemm's
  /// communicator; with `balance` the ranks' counts differ: it must not.
  void (*progress)(const FileGemmProgress& progress, void* user) = nullptr;
  void* progress_user = nullptr;
};

/// The plan of an m x n x k product of `dtype` on `ranks` ranks under `budget` bytes per rank
/// (0: Options/SHARDMM_MEMORY_LIMIT): in core when there is no budget or in_core_bytes fits
/// it, else out of core; either way the streamed schedule's shape, for an output in
/// `out_fortran_order`, with `cached` (0-1) of the operands' bytes in the page cache, its
/// panels read through `io` (SHARDMM_PROFILE's rates). Pure, no files. Throws OutOfMemory when
/// the budget cannot hold one panel.
/// `orders`: how the operands' files lie (the runs their panels' reads take).
OocPlan plan_out_of_core(index_t m, index_t n, index_t k, Dtype dtype, int ranks,
                         std::int64_t budget, bool with_c0 = false, bool c0_staging = false,
                         bool force_out_of_core = false, bool out_fortran_order = true,
                         double cached = 0, IoMethod io = IoMethod::Posix,
                         const FileOrders& orders = {});

/// Predicted seconds of a plan's out-of-core run with `profile`'s rates: the local GEMMs at its
/// rate for `dtype` and the copies of plan.io's reads and of the writes, against the disk time
/// at its disk_bytes_per_s, overlapped.
double predict_out_of_core_seconds(const OocPlan& plan, Dtype dtype, const MachineProfile& profile);

/// Collective: the plan gemm_files would follow (no data moves; the files described). `c0`
/// with an empty path: no C0. `out_fortran_order`: the result's order (a C0 in the other
/// order needs a staging block). Throws InvalidArgument / DimensionMismatch on a bad
/// product, OutOfMemory when the budget cannot hold one panel (the message says the minimum).
/// `io`: the read path the schedule is priced for (FileGemmSettings::io).
OocPlan plan_files(MPI_Comm comm, Op opA, const MatrixFile& A, Op opB, const MatrixFile& B,
                   const MatrixFile& c0, bool out_fortran_order, const Options& options = {},
                   bool force_out_of_core = false, IoMethod io = IoMethod::Posix);

/// What MPI-IO's collective reads of page-cached bytes cost a rank, every rank reading at once
/// (the slowest rank's): seconds = bytes / bytes_per_s + runs * run_seconds.
struct MpiioReadCost {
  double bytes_per_s = 0;  ///< MachineProfile::read_copy_bytes_per_s.mpiio
  double run_seconds = 0;  ///< MachineProfile::read_run_seconds.mpiio
};

/// Collective: measures MpiioReadCost. A probe file in `dir` holds about `bytes_per_rank` per
/// rank (whole 64 MiB blocks of 128 KiB rows, at least one), written through the page cache;
/// each rank reads its part through the stream's MPI-IO reader in 1 MiB panels of 64 KiB runs
/// and again of 2 KiB runs, as the stream reads k-panels of a C-order operand; the two times
/// give the cost per byte and per run. The probe file is removed whatever happens. Throws
/// IoError (the same on every rank) when it cannot be written or read.
MpiioReadCost measure_mpiio_reads(MPI_Comm comm, const std::string& dir,
                                  std::int64_t bytes_per_rank = 64 << 20);

/// Collective over `comm`: out <- alpha op(A) op(B) + beta C0 (C0: `c0`, read when
/// beta != 0; it must not be `out`). `out` is written as .npy (raw = false) or raw, in its
/// fortran_order, to a temporary file in its directory renamed onto out.path only after every
/// rank succeeded. Every check (files, shapes, dtypes, budget, destination) runs before any
/// data moves and fails with the same error on every rank.
FileGemmReport gemm_files(MPI_Comm comm, Op opA, const MatrixFile& A, Op opB, const MatrixFile& B,
                          std::complex<double> alpha, std::complex<double> beta,
                          const MatrixFile& c0, const MatrixFile& out, const Options& options = {},
                          const FileGemmSettings& settings = {});

}  // namespace shardmm
