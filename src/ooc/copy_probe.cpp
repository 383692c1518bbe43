// measure_mpiio_read_rate: what MPI-IO's collective reads of page-cached bytes cost a rank,
// every rank reading at once. One probe file in the directory holds a C-order f64 matrix of
// kProbeCols columns (128 KiB rows), `bytes_per_rank` of rows per rank; each rank writes its
// rows through the page cache (pwrite), then reads them back through the stream's own MPI-IO
// reader (ooc/panel_reader.hpp) in panels of kPanelRows x kPanelCols: 256 runs of 16 KiB,
// 128 KiB apart, as the stream reads a panel of a C-order operand. Open MPI completes these
// reads inside the call, so their time is what they cost the run. The slowest rank's time,
// median of kProbeReps after a warm-up; the file is removed whatever happens. (posix's and
// mmap's reader threads run beside the GEMMs; what they cost a stream is 3-4 x what such a
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

constexpr index_t kProbeCols = 16384, kPanelRows = 256, kPanelCols = 2048;
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

// Reads this rank's rows (from row `row0`) of the probe through `reader`, panel by panel, one
// at a time: the seconds that took; the first error into `err` (when it is still empty).
double read_rows(ooc::PanelReader& reader, index_t row0, index_t rows, std::vector<double>& buf,
                 std::string& err) {
  const double t0 = MPI_Wtime();
  for (index_t c = 0; c < kProbeCols; c += kPanelCols)
    for (index_t r = row0; r < row0 + rows; r += kPanelRows) {
      reader.start(0, ooc::Sub{r, r + kPanelRows, c, c + kPanelCols}, buf.data());
      const std::string e = reader.wait(0);
      if (err.empty()) err = e;
    }
  return MPI_Wtime() - t0;
}

// Collective: the slowest rank's read_rows through MPI-IO, median of kProbeReps after a
// warm-up.
double read_seconds(MPI_Comm comm, const MatrixFile& f, index_t row0, index_t rows,
                    std::vector<double>& buf) {
  const std::unique_ptr<ooc::PanelReader> reader = ooc::make_reader(IoMethod::MpiIo, f, comm);
  std::vector<double> times;
  std::string err;
  for (int rep = 0; rep <= kProbeReps; ++rep) {
    SHARDMM_MPI(MPI_Barrier(comm));
    double t = read_rows(*reader, row0, rows, buf, err), worst = 0;
    SHARDMM_MPI(MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, comm));
    if (rep > 0) times.push_back(worst);
  }
  err = io::first_error(comm, err);
  if (!err.empty()) throw IoError("read copy probe '" + f.path + "' (mpiio): " + err);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

double measure_mpiio_read_rate(MPI_Comm comm, const std::string& dir, std::int64_t bytes_per_rank) {
  int rank = 0, size = 1;
  SHARDMM_MPI(MPI_Comm_rank(comm, &rank));
  SHARDMM_MPI(MPI_Comm_size(comm, &size));
  const index_t row_bytes = kProbeCols * 8;
  const index_t rows = std::max<index_t>(1, bytes_per_rank / (row_bytes * kPanelRows)) * kPanelRows;
  const ProbeFile file(io::temp_name(comm, (dir.empty() ? "." : dir) + "/.shardmm-copy-probe"),
                       rank);
  std::vector<double> buf(static_cast<std::size_t>(kPanelRows * kPanelCols), 1.0);
  write_probe(comm, file, rows, buf);
  const MatrixFile f = MatrixFile::raw_file(file.path, Dtype::F64, rows * size, kProbeCols, false);
  const auto bytes = static_cast<double>(rows * row_bytes);
  // A cost under 0.1 ms: 0.1 ms.
  const double rate = bytes / std::max(read_seconds(comm, f, rank * rows, rows, buf), 1e-4);
  SHARDMM_MPI(MPI_Barrier(comm));  // every rank's reader closed before rank 0 removes the file
  return rate;
}

}  // namespace shardmm
