// multiply's out-of-core run: with a memory limit (--memory-limit or SHARDMM_MEMORY_LIMIT) the
// library plans the product; when it does not fit, gemm_files streams it from the files and
// this prints which path ran, bytes read and written, I/O wait vs compute and each rank's peak
// resident memory. --progress shows blocks done and an ETA on stderr (a line per tenth of
// the blocks when stderr is not a terminal).
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "algo_options.hpp"
#include "commands.hpp"
#include "multiply.hpp"
#include "progress.hpp"
#include "shardmm/ooc.hpp"
#include "shardmm/shardmm.hpp"

namespace shardmm::cli {
namespace {

using Clock = std::chrono::steady_clock;

MatrixFile operand(const MultiplyConfig& cfg, const std::string& path, const std::string& shape,
                   std::int64_t offset) {
  if (cfg.format != "raw") return MatrixFile::npy(path);
  const auto s = MeshShape::parse(shape);
  if (s.ndims() != 2) throw InvalidArgument("a raw shape must be RxC, got '" + shape + "'");
  return MatrixFile::raw_file(path, parse_dtype(cfg.dtype), s.sizes[0], s.sizes[1],
                              cfg.order == "F", offset);
}

// --progress on rank 0: blocks done and an ETA (progress.hpp: redrawn on a terminal, a line
// per tenth of the blocks in a log).
struct Progress {
  Clock::time_point t0 = Clock::now();
  ProgressLine line;
};

void show_progress(index_t done, index_t total, void* user) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto& p = *static_cast<Progress*>(user);
  if (rank != 0 || !p.line.due(done, total)) return;
  const double s = std::chrono::duration<double>(Clock::now() - p.t0).count();
  const double eta =
      done > 0 ? s * static_cast<double>(total - done) / static_cast<double>(done) : 0;
  char text[128];
  (void)std::snprintf(text, sizeof text, "out-of-core: %lld/%lld blocks, %.1f s, ETA %.1f s",
                      static_cast<long long>(done), static_cast<long long>(total), s, eta);
  p.line.update(text);
  if (done == total) p.line.finish();
}

// Rank 0 prints the run: path, plan, bytes, I/O wait vs compute, and every rank's VmHWM.
void report(const FileGemmReport& r, const MultiplyConfig& cfg) {
  const std::vector<long long> rss = gather_on_root(r.peak_rss);
  if (rss.empty() || cfg.quiet) return;  // rank 0 alone holds the gathered values
  std::printf("wrote %s: %lldx%lld %s out of core (%s) in %.3f s\n", cfg.output.c_str(),
              static_cast<long long>(r.plan.m), static_cast<long long>(r.plan.n), cfg.io.c_str(),
              r.plan.to_string().c_str(), r.seconds);
  std::printf("rank 0: read %.1f MiB, wrote %.1f MiB, I/O wait %.3f s, compute %.3f s\n",
              mib(double(r.bytes_read)), mib(double(r.bytes_written)), r.io_wait_seconds,
              r.compute_seconds);
  std::printf("%s\n", peak_rss_line(rss).c_str());
}

}  // namespace

bool run_multiply_out_of_core(const MultiplyConfig& cfg) {
  const Options o = algo_options(cfg, cfg.algo);
  PlanRequest q;
  q.memory_limit = o.memory_limit;
  if (memory_limit(q) == 0 && !cfg.out_of_core) return false;  // no budget: the ordinary path
  const MatrixFile a =
      describe_file(operand(cfg, cfg.a, cfg.shape_a, cfg.offset_a), MPI_COMM_WORLD);
  const MatrixFile b =
      describe_file(operand(cfg, cfg.b, cfg.shape_b, cfg.offset_b), MPI_COMM_WORLD);
  MatrixFile c0;
  if (!cfg.c_in.empty())
    c0 = describe_file(operand(cfg, cfg.c_in, cfg.shape_c, cfg.offset_c), MPI_COMM_WORLD);
  const Op opA = parse_op(cfg.transa), opB = parse_op(cfg.transb);
  const bool fortran = cfg.format == "raw" ? cfg.order == "F" : cfg.fortran_out;
  const OocPlan plan = plan_files(MPI_COMM_WORLD, opA, a, opB, b, c0, fortran, o, cfg.out_of_core);
  if (!plan.out_of_core) return false;
  MatrixFile out = cfg.format == "raw" ? MatrixFile::raw_file(cfg.output, a.dtype, 0, 0, fortran)
                                       : MatrixFile::npy(cfg.output);
  out.fortran_order = fortran;
  FileGemmSettings s;
  s.io = parse_io_method(cfg.io);
  s.force_out_of_core = cfg.out_of_core;
  Progress progress;
  if (cfg.progress && !cfg.quiet) s.progress = show_progress, s.progress_user = &progress;
  const double beta = cfg.c_in.empty() ? 0.0 : cfg.beta_given ? cfg.beta : 1.0;
  report(gemm_files(MPI_COMM_WORLD, opA, a, opB, b, cfg.alpha, beta, c0, out, o, s), cfg);
  return true;
}

}  // namespace shardmm::cli

namespace shardmm::cli {

void print_out_of_core_plan(index_t m, index_t n, index_t k, Dtype dtype, int ranks,
                            std::int64_t budget, const MachineProfile& profile) {
  const OocPlan p = plan_out_of_core(m, n, k, dtype, ranks, budget);
  std::printf("\nmemory: %s\n", p.out_of_core ? "out of core" : "in core");
  std::printf("  %s\n", p.to_string().c_str());
  std::printf("  per rank: read %.1f MiB, write %.1f MiB; passes over A %d, over B %d\n",
              mib(double(p.bytes_read)), mib(double(p.bytes_written)), p.passes_a, p.passes_b);
  std::printf("  predicted %.3g s at %.3g GB/s disk (%s)\n",
              predict_out_of_core_seconds(p, dtype, profile), profile.disk_bytes_per_s * 1e-9,
              profile.source.c_str());
}

double measure_disk_bandwidth(const std::string& dir) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string path = dir + "/.shardmm-disk-probe." + std::to_string(rank);
  const std::size_t bytes = std::size_t{32} << 20;
  std::vector<char> buf(bytes, 'x');
  double rate = 0;
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) {
    MPI_Barrier(MPI_COMM_WORLD);
    auto t = Clock::now();
    bool ok = ::write(fd, buf.data(), bytes) == static_cast<ssize_t>(bytes) && ::fsync(fd) == 0;
    const double w = std::chrono::duration<double>(Clock::now() - t).count();
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // clean pages leave the page cache
    MPI_Barrier(MPI_COMM_WORLD);
    t = Clock::now();
    ok = ok && ::pread(fd, buf.data(), bytes, 0) == static_cast<ssize_t>(bytes);
    const double r = std::chrono::duration<double>(Clock::now() - t).count();
    if (ok) rate = static_cast<double>(bytes) / std::max({w, r, 1e-9});
    ::close(fd);
    ::unlink(path.c_str());
  }
  double slowest = 0;
  MPI_Allreduce(&rate, &slowest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return slowest;
}

}  // namespace shardmm::cli
