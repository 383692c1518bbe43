// measure_mpiio_reads: what MPI-IO's collective reads of page-cached bytes cost a rank, every
// rank reading at once, per byte and per contiguous run. One probe file in the directory holds
// a C-order f64 matrix of kProbeCols columns (128 KiB rows), `bytes_per_rank` of rows per rank
// (whole blocks of kBlockRows); each rank writes its rows through the page cache (pwrite), then
// reads them back through the stream's own MPI-IO reader (ooc/panel_reader.hpp) in 1 MiB
// panels, as the stream reads k-panels of a C-order operand: first 16 rows x 8192 columns
// (runs of 64 KiB, 128 KiB apart), then 512 x 256 (runs of 2 KiB). Open MPI completes these
// reads inside the call, so their time is what they cost the run. The same bytes in as many
// reads, in 32 x the runs, give the cost per run and per byte (the two ends of the runs the
// stream reads; between them the line ran up to 40 % low here, at 16 KiB). The slowest rank's
// time, median of kProbeReps after a warm-up; the file is removed whatever happens. (posix's
// and mmap's reader threads run beside the GEMMs; what they cost a stream is 3-4 x what such a
// probe shows, so their rates are the profile's: docs/OUT_OF_CORE.md.)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "comm/mpi_check.hpp"
#include "io/file_transfer.hpp"
#include "ooc/panel_reader.hpp"
#include "ooc/run_io.hpp"
#include "shardmm/error.hpp"
#include "shardmm/ooc.hpp"

namespace shardmm {
namespace {

// Both panel shapes hold 1 MiB (the same reads, calls and bytes); the narrow one 32 x the runs.
constexpr index_t kProbeCols = 16384, kBlockRows = 512;
constexpr index_t kWideRows = 16, kWideCols = 8192, kNarrowRows = 512, kNarrowCols = 256;
constexpr int kProbeReps = 5;

// Rank 0 removes the probe file when this leaves scope (after the readers, declared later).
struct ProbeFile {
  std::string path;
  int rank = 0;
  ProbeFile(std::string p, int r) : path(std::move(p)), rank(r) {}
  ~ProbeFile() {
    if (rank == 0) (void)::unlink(path.c_str());
  }
  ProbeFile(const ProbeFile&) = delete;
  ProbeFile& operator=(const ProbeFile&) = delete;
  ProbeFile(ProbeFile&&) = delete;
  ProbeFile& operator=(ProbeFile&&) = delete;
};

// Every rank writes its `rows` rows (from row rank * rows) of the probe file through the page
// cache, `buf` at a time; rank 0 creates the file first. The same IoError on every rank when
// any rank fails.
void write_probe(MPI_Comm comm, const ProbeFile& f, index_t rows, std::vector<double>& buf) {
  std::string err;
  if (f.rank == 0) {
    const int fd = ::open(f.path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) err = std::string("create failed: ") + std::strerror(errno);
    else ::close(fd);
  }
  err = io::first_error(comm, err);
  if (!err.empty()) throw IoError("read copy probe '" + f.path + "': " + err);
  const int fd = ::open(f.path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) err = std::string("open failed: ") + std::strerror(errno);
  const auto chunk = static_cast<std::int64_t>(buf.size() * sizeof(double));
  const std::int64_t first = f.rank * rows * kProbeCols * 8, end = first + rows * kProbeCols * 8;
  for (std::int64_t off = first; fd >= 0 && err.empty() && off < end; off += chunk)
    err = ooc::pwrite_all(fd, reinterpret_cast<const char*>(buf.data()), std::min(chunk, end - off),
                          off);
  if (fd >= 0) ::close(fd);
  err = io::first_error(comm, err);
  if (!err.empty()) throw IoError("read copy probe '" + f.path + "': " + err);
}

// Reads this rank's rows (from row `row0`) of the probe through `reader`, in panels of
// `prows` x `pcols`, one at a time: the seconds that took; the first error into `err` (when it
// is still empty).
double read_rows(ooc::PanelReader& reader, index_t row0, index_t rows, index_t prows, index_t pcols,
                 std::vector<double>& buf, std::string& err) {
  const double t0 = MPI_Wtime();
  for (index_t c = 0; c < kProbeCols; c += pcols)
    for (index_t r = row0; r < row0 + rows; r += prows) {
      reader.start(0, ooc::Sub{r, r + prows, c, c + pcols}, buf.data());
      const std::string e = reader.wait(0);
      if (err.empty()) err = e;
    }
  return MPI_Wtime() - t0;
}

// Collective: the slowest rank's read_rows through MPI-IO in panels of `prows` x `pcols`,
// median of kProbeReps after a warm-up.
double read_seconds(MPI_Comm comm, const MatrixFile& f, index_t row0, index_t rows, index_t prows,
                    index_t pcols, std::vector<double>& buf) {
  const std::unique_ptr<ooc::PanelReader> reader = ooc::make_reader(IoMethod::MpiIo, f, comm);
  std::vector<double> times;
  std::string err;
  for (int rep = 0; rep <= kProbeReps; ++rep) {
    SHARDMM_MPI(MPI_Barrier(comm));
    double t = read_rows(*reader, row0, rows, prows, pcols, buf, err), worst = 0;
    SHARDMM_MPI(MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, comm));
    if (rep > 0) times.push_back(worst);
  }
  err = io::first_error(comm, err);
  if (!err.empty()) throw IoError("read copy probe '" + f.path + "' (mpiio): " + err);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The cost per byte and per run from the seconds of the same bytes read in `wide` runs and in
// `narrow` runs (more of them): a noisy difference below 0 is no run cost, one above the wide
// read's whole time leaves it 5 % for the bytes; each time at least 0.1 ms.
MpiioReadCost fit(double bytes, double wide_runs, double wide_s, double narrow_runs,
                  double narrow_s) {
  wide_s = std::max(wide_s, 1e-4), narrow_s = std::max(narrow_s, 1e-4);
  MpiioReadCost c;
  c.run_seconds =
      std::clamp((narrow_s - wide_s) / (narrow_runs - wide_runs), 0.0, 0.95 * wide_s / wide_runs);
  c.bytes_per_s = bytes / (wide_s - wide_runs * c.run_seconds);
  return c;
}

}  // namespace

MpiioReadCost measure_mpiio_reads(MPI_Comm comm, const std::string& dir,
                                  std::int64_t bytes_per_rank) {
  int rank = 0, size = 1;
  SHARDMM_MPI(MPI_Comm_rank(comm, &rank));
  SHARDMM_MPI(MPI_Comm_size(comm, &size));
  const index_t row_bytes = kProbeCols * 8;
  const index_t rows = std::max<index_t>(1, bytes_per_rank / (row_bytes * kBlockRows)) * kBlockRows;
  const ProbeFile file(io::temp_name(comm, (dir.empty() ? "." : dir) + "/.shardmm-copy-probe"),
                       rank);
  std::vector<double> buf(static_cast<std::size_t>(kWideRows * kWideCols), 1.0);
  write_probe(comm, file, rows, buf);
  const MatrixFile f = MatrixFile::raw_file(file.path, Dtype::F64, rows * size, kProbeCols, false);
  const double wide = read_seconds(comm, f, rank * rows, rows, kWideRows, kWideCols, buf);
  const double narrow = read_seconds(comm, f, rank * rows, rows, kNarrowRows, kNarrowCols, buf);
  SHARDMM_MPI(MPI_Barrier(comm));  // every rank's reader closed before rank 0 removes the file
  const auto runs_per_col = static_cast<double>(rows * kProbeCols);  // runs x their width
  return fit(static_cast<double>(rows * row_bytes), runs_per_col / kWideCols, wide,
             runs_per_col / kNarrowCols, narrow);
}

}  // namespace shardmm
