// measure_read_copy_rates: what each read path costs per byte it reads from the page cache,
// every rank reading at once. One probe file in the directory holds a C-order f64 matrix of
// kProbeCols columns (128 KiB rows), `bytes_per_rank` of rows per rank; each rank writes its
// rows through the page cache (pwrite), then reads them back through each path's reader
// (ooc/panel_reader.hpp, the stream's own) in panels of kPanelRows x kPanelCols: 256 runs of
// 16 KiB, 128 KiB apart, as the stream reads a panel of a C-order operand (the first product of
// docs/OUT_OF_CORE.md reads runs of 3-19 KiB, 16-128 KiB apart; a 4 MiB mmap window then holds
// 32 runs). One panel at a time. Per path the slowest rank's cost, median of kProbeReps after
// a warm-up; the file is removed whatever happens.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/mpi_check.hpp"
#include "io/file_transfer.hpp"
#include "ooc/panel_reader.hpp"
#include "ooc/run_io.hpp"
#include "shardmm/error.hpp"
#include "shardmm/ooc.hpp"
#include "shardmm/runtime.hpp"

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
// at a time: "" or the first error.
std::string read_rows(ooc::PanelReader& reader, index_t row0, index_t rows,
                      std::vector<double>& buf) {
  std::string err;
  for (index_t c = 0; c < kProbeCols; c += kPanelCols)
    for (index_t r = row0; r < row0 + rows; r += kPanelRows) {
      reader.start(0, ooc::Sub{r, r + kPanelRows, c, c + kPanelCols}, buf.data());
      const std::string e = reader.wait(0);
      if (err.empty()) err = e;
    }
  return err;
}

// One kGemmSide^3 GEMM on this rank's operands: what the copies share the cores with.
constexpr index_t kGemmSide = 256;
struct GemmLoad {
  std::vector<double> a, b, c;
  GemmLoad() : a(static_cast<std::size_t>(kGemmSide * kGemmSide), 1.0), b(a), c(a.size(), 0.0) {}
  void run() {
    local_gemm(Op::N, Op::N, kGemmSide, kGemmSide, kGemmSide, 1.0, a.data(), kGemmSide, b.data(),
               kGemmSide, 0.0, c.data(), kGemmSide);
  }
};

// The seconds this rank's reads take (MPI-IO, whose reads block: alone) or add to GEMMs running
// on its main thread while a thread reads (posix and mmap, whose reader threads share the cores
// with the GEMMs in a stream): the time of both less the GEMMs done at one GEMM's time alone
// (timed just before, every rank at once).
double read_cost(IoMethod io, ooc::PanelReader& reader, index_t row0, index_t rows,
                 std::vector<double>& buf, GemmLoad& load, std::string& err) {
  if (io == IoMethod::MpiIo) {
    const double t0 = MPI_Wtime();
    const std::string e = read_rows(reader, row0, rows, buf);
    if (err.empty()) err = e;
    return MPI_Wtime() - t0;
  }
  constexpr int kAlone = 48;
  double t0 = MPI_Wtime();
  for (int g = 0; g < kAlone; ++g) load.run();
  const double one = (MPI_Wtime() - t0) / kAlone;
  std::atomic<bool> done{false};
  std::string e;
  t0 = MPI_Wtime();
  std::thread reading([&] {
    e = read_rows(reader, row0, rows, buf);
    done = true;
  });
  int gemms = 0;
  for (; !done; ++gemms) load.run();
  reading.join();
  if (err.empty()) err = e;
  return MPI_Wtime() - t0 - gemms * one;
}

// Collective: the slowest rank's read_cost through `io`, median of kProbeReps after a warm-up.
double read_seconds(MPI_Comm comm, IoMethod io, const MatrixFile& f, index_t row0, index_t rows,
                    std::vector<double>& buf, GemmLoad& load) {
  const std::unique_ptr<ooc::PanelReader> reader = ooc::make_reader(io, f, comm);
  std::vector<double> times;
  std::string err;
  for (int rep = 0; rep <= kProbeReps; ++rep) {
    SHARDMM_MPI(MPI_Barrier(comm));
    double t = read_cost(io, *reader, row0, rows, buf, load, err), worst = 0;
    SHARDMM_MPI(MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, comm));
    if (rep > 0) times.push_back(worst);
  }
  err = io::first_error(comm, err);
  if (!err.empty())
    throw IoError("read copy probe '" + f.path + "' (" + to_string(io) + "): " + err);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

MachineProfile::ReadCopyRates measure_read_copy_rates(MPI_Comm comm, const std::string& dir,
                                                      std::int64_t bytes_per_rank) {
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
  GemmLoad load;
  auto rate = [&](IoMethod io) {  // a cost under 0.1 ms (spare cores): 0.1 ms
    return bytes / std::max(read_seconds(comm, io, f, rank * rows, rows, buf, load), 1e-4);
  };
  MachineProfile::ReadCopyRates r;
  r.posix = rate(IoMethod::Posix);
  r.mpiio = rate(IoMethod::MpiIo);
  r.mmap = rate(IoMethod::Mmap);
  SHARDMM_MPI(MPI_Barrier(comm));  // every rank's readers closed before rank 0 removes the file
  return r;
}

}  // namespace shardmm
