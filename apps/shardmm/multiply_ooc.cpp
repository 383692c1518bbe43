// multiply's streamed run: a 2-D product with Auto and the default layouts, or any product
// that does not fit the memory limit (--memory-limit or SHARDMM_MEMORY_LIMIT), goes to
// gemm_files, which streams it from the files: reads, GEMMs and writes overlap. This prints
// which path ran, the bytes read and written, where each rank's time went (open, read wait,
// GEMM, write wait, agreement, sync, rename) and each rank's peak resident memory.
// --progress shows blocks done, MB/s read and written and an ETA on stderr (a line per tenth
// of the blocks when stderr is not a terminal).
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
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

void show_progress(const FileGemmProgress& g, void* user) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto& p = *static_cast<Progress*>(user);
  if (rank != 0 || !p.line.due(g.blocks_done, g.blocks_total)) return;
  const double s = std::max(g.seconds, 1e-9);
  const double eta = g.blocks_done > 0 ? s * static_cast<double>(g.blocks_total - g.blocks_done) /
                                             static_cast<double>(g.blocks_done)
                                       : 0;
  char text[192];
  (void)std::snprintf(text, sizeof text,
                      "streamed: %lld/%lld blocks, read %.0f MB/s, written %.0f MB/s (rank 0), "
                      "%.1f s, ETA %.1f s",
                      static_cast<long long>(g.blocks_done), static_cast<long long>(g.blocks_total),
                      double(g.bytes_read) / s * 1e-6, double(g.bytes_written) / s * 1e-6, s, eta);
  p.line.update(text);
  if (g.blocks_done == g.blocks_total) p.line.finish();
}

// "title a|b c|d ...": each rank's two figures, milliseconds shown as seconds.
std::string per_rank_line(const std::string& title, const std::vector<long long>& a,
                          const std::vector<long long>& b) {
  std::string line = title;
  char buf[64];
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const int n =
        std::snprintf(buf, sizeof buf, " %.2f|%.2f", double(a[i]) * 1e-3, double(b[i]) * 1e-3);
    if (n > 0) line += buf;
  }
  return line;
}

// Rank 0 prints the run: path, plan, bytes, where the time went, and every rank's VmHWM.
void report(const FileGemmReport& r, const MultiplyConfig& cfg) {
  const std::vector<long long> rss = gather_on_root(r.peak_rss);
  const std::vector<long long> gemm_ms = gather_on_root(std::llround(r.compute_seconds * 1e3));
  const std::vector<long long> agree_ms = gather_on_root(std::llround(r.agree_seconds * 1e3));
  if (rss.empty() || cfg.quiet) return;  // rank 0 alone holds the gathered values
  std::printf("wrote %s: %lldx%lld %s %s (%s) in %.3f s\n", cfg.output.c_str(),
              static_cast<long long>(r.plan.m), static_cast<long long>(r.plan.n), cfg.io.c_str(),
              r.plan.out_of_core ? "out of core" : "in core", r.plan.to_string().c_str(),
              r.seconds);
  std::printf("rank 0: read %.1f MiB, wrote %.1f MiB (%.1f MiB direct); %.3f s = open %.3f + "
              "read wait %.3f + GEMM %.3f + write wait %.3f + agree %.3f + sync %.3f + rename "
              "%.3f + other %.3f\n",
              mib(double(r.bytes_read)), mib(double(r.bytes_written)),
              mib(double(r.bytes_written_direct)), r.seconds, r.open_seconds, r.read_wait_seconds,
              r.compute_seconds, r.write_wait_seconds, r.agree_seconds, r.sync_seconds,
              r.rename_seconds, r.other_seconds);
  std::printf(
      "%s\n",
      per_rank_line("GEMM | agree (wait for the others) per rank (s):", gemm_ms, agree_ms).c_str());
  std::printf("%s\n", peak_rss_line(rss).c_str());
}

// Streamed without a budget: Auto on the default layouts and grid (what else was asked for
// runs on the layouts, in core).
bool streams_in_core(const MultiplyConfig& cfg) {
  return cfg.algo == "auto" && cfg.layout_a.empty() && cfg.layout_b.empty() &&
         cfg.layout_c.empty() && cfg.grid.empty();
}

}  // namespace

bool run_multiply_out_of_core(const MultiplyConfig& cfg) {
  const Options o = algo_options(cfg, cfg.algo);
  PlanRequest q;
  q.memory_limit = o.memory_limit;
  if (memory_limit(q) == 0 && !cfg.out_of_core && !streams_in_core(cfg)) return false;
  const MatrixFile a =
      describe_file(operand(cfg, cfg.a, cfg.shape_a, cfg.offset_a), MPI_COMM_WORLD);
  const MatrixFile b =
      describe_file(operand(cfg, cfg.b, cfg.shape_b, cfg.offset_b), MPI_COMM_WORLD);
  MatrixFile c0;
  if (!cfg.c_in.empty())
    c0 = describe_file(operand(cfg, cfg.c_in, cfg.shape_c, cfg.offset_c), MPI_COMM_WORLD);
  const Op opA = cfg.transa, opB = cfg.transb;
  const bool fortran = cfg.format == "raw" ? cfg.order == "F" : cfg.fortran_out;
  const IoMethod io = parse_io_method(cfg.io);
  const OocPlan plan =
      plan_files(MPI_COMM_WORLD, opA, a, opB, b, c0, fortran, o, cfg.out_of_core, io);
  if (!plan.out_of_core && !streams_in_core(cfg)) return false;
  MatrixFile out = cfg.format == "raw" ? MatrixFile::raw_file(cfg.output, a.dtype, 0, 0, fortran)
                                       : MatrixFile::npy(cfg.output);
  out.fortran_order = fortran;
  FileGemmSettings s;
  s.io = io;
  s.force_out_of_core = cfg.out_of_core;
  s.direct_writes = cfg.write == "direct";
  Progress progress;
  if (cfg.progress && !cfg.quiet) s.progress = show_progress, s.progress_user = &progress;
  const double beta = cfg.c_in.empty() ? 0.0 : cfg.beta_given ? cfg.beta : 1.0;
  report(gemm_files(MPI_COMM_WORLD, opA, a, opB, b, cfg.alpha, beta, c0, out, o, s), cfg);
  return true;
}

}  // namespace shardmm::cli

namespace shardmm::cli {

void print_out_of_core_plan(index_t m, index_t n, index_t k, Dtype dtype, int ranks,
                            std::int64_t budget, const MachineProfile& profile, IoMethod io) {
  auto plan = [&](IoMethod via) {
    return plan_out_of_core(m, n, k, dtype, ranks, budget, false, false, false, true, 0, via);
  };
  const OocPlan p = plan(io);
  std::printf("\nmemory: %s\n", p.out_of_core ? "out of core" : "in core");
  std::printf("  %s\n", p.to_string().c_str());
  std::printf("  per rank: read %.1f MiB, write %.1f MiB; passes over A %d, over B %d\n",
              mib(double(p.bytes_read)), mib(double(p.bytes_written)), p.passes_a, p.passes_b);
  const MachineProfile::ReadCopyRates& r = profile.read_copy_bytes_per_s;
  std::printf("  predicted %.3g s at %.3g GB/s disk, page-cache reads posix %.3g, mpiio %.3g, "
              "mmap %.3g GB/s (%s)\n",
              predict_out_of_core_seconds(p, dtype, profile), profile.disk_bytes_per_s * 1e-9,
              r.posix * 1e-9, r.mpiio * 1e-9, r.mmap * 1e-9, profile.source.c_str());
  std::string each = "  each read path's own plan (--io):";
  for (const IoMethod via : {IoMethod::Posix, IoMethod::MpiIo, IoMethod::Mmap}) {
    const OocPlan q = plan(via);
    char part[160];
    const int w =
        std::snprintf(part, sizeof part, " %s %.3g s (%lldx%lld, k-panels %lld)%s",
                      to_string(via).c_str(), predict_out_of_core_seconds(q, dtype, profile),
                      static_cast<long long>(q.bm), static_cast<long long>(q.bn),
                      static_cast<long long>(q.kb), via == IoMethod::Mmap ? "" : ";");
    if (w > 0) each += part;
  }
  std::printf("%s\n", each.c_str());
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
