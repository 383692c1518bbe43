// gemm_files: describe the files (rank 0 reads headers, every rank gets the same answer),
// check the product, the destination and the budget before any data moves, then run the
// in-core path when the operands fit the budget, else the streamed schedule.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "comm/agree.hpp"
#include "comm/mpi_check.hpp"
#include "comm/wait.hpp"
#include "io/file_transfer.hpp"
#include "io/page_cache.hpp"
#include "ooc/stream.hpp"
#include "plan/ooc_cost.hpp"
#include "shardmm/error.hpp"
#include "shardmm/io.hpp"
#include "shardmm/plan.hpp"
#include "trace/call.hpp"

namespace shardmm {
namespace {

namespace fs = std::filesystem;

std::string dims(index_t r, index_t c) { return std::to_string(r) + "x" + std::to_string(c); }

// Rank 0: the destination can take the result and is none of the inputs (same inode: a hard
// or symbolic link too).
void check_destination(const MatrixFile& out, const std::vector<const MatrixFile*>& inputs) {
  const std::string said = "output '" + out.path + "': ";
  if (out.path.empty()) throw InvalidArgument("output: the path is empty");
  const fs::path path(out.path);
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw IoError(said + "is a directory");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw IoError(said + "directory '" + dir.string() + "' does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw IoError(said + "directory '" + dir.string() + "' is not writable");
  struct stat o {};
  if (::stat(out.path.c_str(), &o) != 0) return;
  for (const MatrixFile* in : inputs) {
    struct stat i {};
    if (::stat(in->path.c_str(), &i) == 0 && i.st_dev == o.st_dev && i.st_ino == o.st_ino)
      throw InvalidArgument(said + "is also an input ('" + in->path + "'); choose another path");
  }
}

std::int64_t peak_rss() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  return 0;
}

// op(A) op(B)'s m, n, k; throws on mismatched dtypes or inner dimensions.
void product_dims(Op opA, const MatrixFile& A, Op opB, const MatrixFile& B, OocPlan& p) {
  if (A.dtype != B.dtype)
    throw InvalidArgument("A is " + to_string(A.dtype) + " but B is " + to_string(B.dtype) +
                          "; both operands must have the same dtype");
  if (A.dtype == Dtype::F16 || A.dtype == Dtype::BF16)
    throw NotSupported("products from files in " + to_string(A.dtype) +
                       " are not supported yet: read the files (read_npy / read_raw) and call "
                       "gemm, or convert them to f32");
  p.m = opA == Op::N ? A.rows : A.cols;
  p.k = opA == Op::N ? A.cols : A.rows;
  const index_t kb = opB == Op::N ? B.rows : B.cols;
  p.n = opB == Op::N ? B.cols : B.rows;
  if (p.k != kb)
    throw DimensionMismatch("inner dimensions differ: op(A) is " + dims(p.m, p.k) + " ('" + A.path +
                            "') but op(B) is " + dims(kb, p.n) + " ('" + B.path + "')");
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

template <Scalar T>
void run_as(const ooc::Job& job, FileGemmReport& rep, bool stream) {
  if (stream) ooc::stream_gemm<T>(job, rep);
  else ooc::in_core_gemm<T>(job, rep);
}

void run_typed(const ooc::Job& job, FileGemmReport& rep, bool stream) {
  switch (job.A.dtype) {
    case Dtype::F32: return run_as<float>(job, rep, stream);
    case Dtype::F64: return run_as<double>(job, rep, stream);
    case Dtype::C64: return run_as<std::complex<float>>(job, rep, stream);
    case Dtype::C128: return run_as<std::complex<double>>(job, rep, stream);
    case Dtype::F16:
    case Dtype::BF16: break;  // refused by product_dims
  }
}

}  // namespace

std::string to_string(IoMethod io) {
  return io == IoMethod::Mmap ? "mmap" : io == IoMethod::Posix ? "posix" : "mpiio";
}

IoMethod parse_io_method(std::string_view text) {
  if (text == "mpiio") return IoMethod::MpiIo;
  if (text == "mmap") return IoMethod::Mmap;
  if (text == "posix") return IoMethod::Posix;
  throw InvalidArgument("unknown I/O method '" + std::string(text) +
                        "': expected posix, mpiio or mmap");
}

MatrixFile MatrixFile::npy(std::string path) {
  MatrixFile f;
  f.path = std::move(path);
  return f;
}

MatrixFile MatrixFile::raw_file(std::string path, Dtype dtype, index_t rows, index_t cols,
                                bool fortran_order, std::int64_t data_offset) {
  MatrixFile f{std::move(path), true, dtype, rows, cols, fortran_order, data_offset};
  return f;
}

MatrixFile describe_file(MatrixFile f, MPI_Comm comm) {
  if (!f.raw) {
    const NpyHeader h = read_npy_header(f.path, comm);
    f.dtype = h.dtype, f.rows = h.rows, f.cols = h.cols, f.fortran_order = h.fortran_order;
    f.data_offset = h.data_offset;
    return f;
  }
  if (f.data_offset < 0)
    throw InvalidArgument("raw file '" + f.path + "': data offset " +
                          std::to_string(f.data_offset) + " is negative");
  const std::string err =
      io::raw_size_error(comm, f.path, f.rows, f.cols, f.dtype, f.data_offset, true);
  if (!err.empty()) throw IoError("cannot read raw file '" + f.path + "': " + err);
  return f;
}

std::string OocPlan::to_string() const {
  char buf[512];
  const char* path = out_of_core ? "out-of-core" : "in-core";
  if (bm == 0) {
    (void)std::snprintf(
        buf, sizeof buf, "in-core (%lld x %lld x %lld needs %lld of %lld bytes/rank)",
        static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
        static_cast<long long>(in_core_bytes), static_cast<long long>(budget));
    return buf;
  }
  (void)std::snprintf(buf, sizeof buf,
                      "%s, streamed: %lld blocks of %lldx%lld, k-panels %lld, passes A %d B %d, "
                      "read (%s) %lld B in %lld runs, written %lld B per rank (budget %lld, "
                      "minimum %lld; in core needs %lld); predicted %.3g s = max(GEMM+copies "
                      "%.3g s, disk %.3g s) + first read and last write %.3g s; operands %.0f%% in "
                      "the page cache; last blocks in %lld strips",
                      path, static_cast<long long>(blocks), static_cast<long long>(bm),
                      static_cast<long long>(bn), static_cast<long long>(kb), passes_a, passes_b,
                      shardmm::to_string(io).c_str(), static_cast<long long>(bytes_read),
                      static_cast<long long>(runs_read), static_cast<long long>(bytes_written),
                      static_cast<long long>(budget), static_cast<long long>(min_budget),
                      static_cast<long long>(in_core_bytes), predicted_seconds, predicted_compute,
                      predicted_disk, predicted_edges, 100.0 * cached,
                      static_cast<long long>(tail_strips));
  return buf;
}

namespace {

// A per-read-path entry of the profile (read_copy_bytes_per_s, read_run_seconds): `io`'s.
template <class Paths>
double of_path(const Paths& paths, IoMethod io) {
  return io == IoMethod::Mmap ? paths.mmap : io == IoMethod::MpiIo ? paths.mpiio : paths.posix;
}

// The product's sizes and the profile's rates for it, its reads through `io`.
plan::OocProblem ooc_problem(index_t m, index_t n, index_t k, Dtype dtype, int ranks, bool with_c0,
                             bool c0_staging, const MachineProfile& profile, IoMethod io) {
  plan::OocProblem q{m,     n, k,       static_cast<std::int64_t>(dtype_size(dtype)),
                     ranks, 0, with_c0, with_c0 && c0_staging};
  q.flops_per_s = profile.flops_per_s(dtype);
  q.disk_bytes_per_s = profile.disk_bytes_per_s;
  q.read_copy_bytes_per_s = of_path(profile.read_copy_bytes_per_s, io);
  q.read_run_seconds = of_path(profile.read_run_seconds, io);
  q.reads_block = io == IoMethod::MpiIo;  // Open MPI completes them inside the call
  return q;
}

// What the page cache holds of the operands and whether it can keep them (plan_files).
struct PageCacheView {
  double cached = 0;   ///< the share of the operands' data in the page cache (0-1)
  bool keeps = false;  ///< the node could keep the operands and `extra` bytes (MemAvailable)
};

// Collective, one reduction: the least any rank sees (ranks on other hosts have other caches),
// so that every rank plans alike. `extra`: bytes the run adds to the page cache besides the
// operands (the result), which the operands must fit beside for a stream's later passes to
// find them cached.
PageCacheView page_cache_view(MPI_Comm comm, const std::vector<const MatrixFile*>& files,
                              std::int64_t extra) {
  double cached = 0, total = 0;
  for (const MatrixFile* f : files) {
    if (f->path.empty()) continue;
    const std::int64_t bytes = f->rows * f->cols * static_cast<std::int64_t>(dtype_size(f->dtype));
    cached += static_cast<double>(io::cached_bytes(f->path, f->data_offset, bytes));
    total += static_cast<double>(bytes);
  }
  const double room = static_cast<double>(io::available_memory());
  const double mine[2] = {total > 0 ? cached / total : 0,
                          room >= total + static_cast<double>(extra) ? 1.0 : 0.0};
  double least[2] = {0, 0};
  SHARDMM_MPI(MPI_Allreduce(mine, least, 2, MPI_DOUBLE, MPI_MIN, comm));
  return {least[0], least[1] == 1.0};
}

// plan_out_of_core, with whether the page cache keeps the operands between the stream's passes
// (plan::OocProblem::rereads_cached: what the disk serves).
OocPlan plan_stream(index_t m, index_t n, index_t k, Dtype dtype, int ranks, std::int64_t budget,
                    bool with_c0, bool c0_staging, bool force_out_of_core, bool out_fortran_order,
                    double cached, IoMethod io, const FileOrders& orders, bool rereads_cached) {
  OocPlan p;
  p.m = m, p.n = n, p.k = k, p.ranks = ranks, p.io = io;
  plan::OocProblem q = ooc_problem(m, n, k, dtype, ranks, with_c0, c0_staging,
                                   MachineProfile::from_environment(), io);
  q.d_is_c = out_fortran_order;
  q.cached = cached;
  q.rereads_cached = rereads_cached;
  q.orders = orders;
  PlanRequest r;
  r.memory_limit = budget;
  q.budget = memory_limit(r);
  p.budget = q.budget;
  p.min_budget = plan::ooc_min_budget(q);
  const bool empty = m == 0 || n == 0 || k == 0;
  if (!empty) p.in_core_bytes = plan::in_core_bytes(q, dtype);
  if (force_out_of_core && q.budget == 0)
    throw InvalidArgument("out-of-core: forcing the out-of-core path needs a memory limit");
  if (empty) {
    p.passes_a = p.passes_b = 1;
    p.bytes_written = m * n * q.elem / std::max(ranks, 1);
    return p;
  }
  const bool fits = !force_out_of_core && (q.budget == 0 || p.in_core_bytes <= q.budget);
  // In core, the product still streams (Auto): in at most what the in-core path would take.
  if (fits)
    q.budget = std::max(p.min_budget,
                        q.budget == 0 ? p.in_core_bytes : std::min(q.budget, p.in_core_bytes));
  OocPlan s = plan::ooc_schedule(q);
  s.cached = q.cached, s.io = io;
  s.budget = p.budget;
  s.in_core_bytes = p.in_core_bytes;
  s.out_of_core = !fits;
  return s;
}

}  // namespace

OocPlan plan_out_of_core(index_t m, index_t n, index_t k, Dtype dtype, int ranks,
                         std::int64_t budget, bool with_c0, bool c0_staging, bool force_out_of_core,
                         bool out_fortran_order, double cached, IoMethod io,
                         const FileOrders& orders) {
  return plan_stream(m, n, k, dtype, ranks, budget, with_c0, c0_staging, force_out_of_core,
                     out_fortran_order, cached, io, orders, false);
}

double predict_out_of_core_seconds(const OocPlan& plan, Dtype dtype,
                                   const MachineProfile& profile) {
  plan::OocProblem q =
      ooc_problem(plan.m, plan.n, plan.k, dtype, plan.ranks, false, false, profile, plan.io);
  q.cached = plan.cached;
  OocPlan s = plan;
  if (s.bm == 0) return 0;  // an empty product
  plan::ooc_predict(q, s);
  return s.predicted_seconds;
}

OocPlan plan_files(MPI_Comm comm, Op opA, const MatrixFile& A, Op opB, const MatrixFile& B,
                   const MatrixFile& c0, bool out_fortran_order, const Options& options,
                   bool force_out_of_core, IoMethod io) {
  OocPlan p;
  product_dims(opA, A, opB, B, p);
  const PageCacheView cache = page_cache_view(
      comm, {&A, &B, &c0}, p.m * p.n * static_cast<std::int64_t>(dtype_size(A.dtype)));
  // op(X)'s rows lie contiguous where X is in C order and not transposed, or the other way.
  const FileOrders orders{A.fortran_order == (opA != Op::N), B.fortran_order == (opB != Op::N),
                          !c0.fortran_order};
  return plan_stream(p.m, p.n, p.k, A.dtype, comm::comm_size(comm), options.memory_limit,
                     !c0.path.empty(), c0.fortran_order != out_fortran_order, force_out_of_core,
                     out_fortran_order, cache.cached, io, orders, cache.keeps);
}

FileGemmReport gemm_files(MPI_Comm comm, Op opA, const MatrixFile& A, Op opB, const MatrixFile& B,
                          std::complex<double> alpha, std::complex<double> beta,
                          const MatrixFile& c0, const MatrixFile& out, const Options& options,
                          const FileGemmSettings& settings) {
  ooc::Job job;
  job.t0 = std::chrono::steady_clock::now();
  job.comm = comm, job.opA = opA, job.opB = opB, job.alpha = alpha, job.beta = beta;
  job.options = options, job.settings = settings;
  job.with_c0 = beta != std::complex<double>(0, 0);
  if (job.with_c0 && c0.path.empty())
    throw InvalidArgument("gemm_files: beta != 0 needs C0's file");
  const comm::WaitScope waiting(options.wait);          // the in-core path's calls wait so too
  trace::Call call(comm, "gemm_files", options.trace);  // the in-core path's calls: its phases
  job.A = describe_file(A, comm);
  job.B = describe_file(B, comm);
  if (job.with_c0) job.C0 = describe_file(c0, comm);
  job.plan = plan_files(comm, opA, job.A, opB, job.B, job.C0, out.fortran_order, options,
                        settings.force_out_of_core, settings.io);
  if (job.with_c0 &&
      (job.C0.rows != job.plan.m || job.C0.cols != job.plan.n || job.C0.dtype != job.A.dtype))
    throw DimensionMismatch("C0 ('" + job.C0.path + "') is " + dims(job.C0.rows, job.C0.cols) +
                            " " + to_string(job.C0.dtype) + ", op(A) op(B) is " +
                            dims(job.plan.m, job.plan.n) + " " + to_string(job.A.dtype));
  job.out = out;
  job.out.dtype = job.A.dtype, job.out.rows = job.plan.m, job.out.cols = job.plan.n;
  comm::agreed(comm, "output", [&] {
    if (comm::comm_rank(comm) == 0) check_destination(job.out, {&job.A, &job.B, &job.C0});
  });
  FileGemmReport rep;
  rep.plan = job.plan;
  rep.open_seconds = since(job.t0);
  // Streamed unless the product is empty or, in core, the caller named an algorithm (that
  // algorithm then runs on the operands read whole into layouts).
  const bool stream =
      job.plan.bm > 0 && (job.plan.out_of_core || options.algorithm == Algorithm::Auto);
  run_typed(job, rep, stream);
  rep.seconds = since(job.t0);
  rep.io_wait_seconds = rep.read_wait_seconds + rep.write_wait_seconds;
  rep.other_seconds = std::max(0.0, rep.seconds - rep.open_seconds - rep.read_wait_seconds -
                                        rep.compute_seconds - rep.write_wait_seconds -
                                        rep.agree_seconds - rep.sync_seconds - rep.rename_seconds);
  rep.peak_rss = peak_rss();
  return rep;
}

}  // namespace shardmm
