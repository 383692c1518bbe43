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
#include "io/file_transfer.hpp"
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
  p.m = opA == Op::N ? A.rows : A.cols;
  p.k = opA == Op::N ? A.cols : A.rows;
  const index_t kb = opB == Op::N ? B.rows : B.cols;
  p.n = opB == Op::N ? B.cols : B.rows;
  if (p.k != kb)
    throw DimensionMismatch("inner dimensions differ: op(A) is " + dims(p.m, p.k) + " ('" + A.path +
                            "') but op(B) is " + dims(kb, p.n) + " ('" + B.path + "')");
}

}  // namespace

std::string to_string(IoMethod io) { return io == IoMethod::Mmap ? "mmap" : "mpiio"; }

IoMethod parse_io_method(std::string_view text) {
  if (text == "mpiio") return IoMethod::MpiIo;
  if (text == "mmap") return IoMethod::Mmap;
  throw InvalidArgument("unknown I/O method '" + std::string(text) + "': expected mpiio or mmap");
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
  char buf[384];
  if (!out_of_core) {
    (void)std::snprintf(
        buf, sizeof buf, "in-core (%lld x %lld x %lld needs %lld of %lld bytes/rank)",
        static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
        static_cast<long long>(in_core_bytes), static_cast<long long>(budget));
    return buf;
  }
  (void)std::snprintf(buf, sizeof buf,
                      "out-of-core: %lld blocks of %lldx%lld, k-panels %lld, passes A %d B %d, "
                      "read %lld B, written %lld B per rank (budget %lld, minimum %lld; "
                      "in core needs %lld)",
                      static_cast<long long>(blocks), static_cast<long long>(bm),
                      static_cast<long long>(bn), static_cast<long long>(kb), passes_a, passes_b,
                      static_cast<long long>(bytes_read), static_cast<long long>(bytes_written),
                      static_cast<long long>(budget), static_cast<long long>(min_budget),
                      static_cast<long long>(in_core_bytes));
  return buf;
}

OocPlan plan_out_of_core(index_t m, index_t n, index_t k, Dtype dtype, int ranks,
                         std::int64_t budget, bool with_c0, bool c0_staging,
                         bool force_out_of_core) {
  OocPlan p;
  p.m = m, p.n = n, p.k = k, p.ranks = ranks;
  plan::OocProblem q{m,     n, k,       static_cast<std::int64_t>(dtype_size(dtype)),
                     ranks, 0, with_c0, with_c0 && c0_staging};
  PlanRequest r;
  r.memory_limit = budget;
  q.budget = memory_limit(r);
  p.budget = q.budget;
  p.min_budget = plan::ooc_min_budget(q);
  const bool empty = m == 0 || n == 0 || k == 0;
  if (!empty) p.in_core_bytes = plan::in_core_bytes(q, dtype);
  if (force_out_of_core && q.budget == 0)
    throw InvalidArgument("out-of-core: forcing the out-of-core path needs a memory limit");
  if (empty || (!force_out_of_core && (q.budget == 0 || p.in_core_bytes <= q.budget))) {
    p.passes_a = p.passes_b = 1;
    p.bytes_read = (m * k + k * n + (with_c0 ? m * n : 0)) * q.elem / q.ranks;
    p.bytes_written = m * n * q.elem / q.ranks;
    return p;
  }
  OocPlan s = plan::ooc_schedule(q);
  s.in_core_bytes = p.in_core_bytes;
  return s;
}

double predict_out_of_core_seconds(const OocPlan& plan, Dtype dtype,
                                   const MachineProfile& profile) {
  return plan::ooc_seconds(plan, static_cast<std::int64_t>(dtype_size(dtype)),
                           profile.flops_per_s(dtype), profile.disk_bytes_per_s);
}

OocPlan plan_files(MPI_Comm comm, Op opA, const MatrixFile& A, Op opB, const MatrixFile& B,
                   const MatrixFile& c0, bool out_fortran_order, const Options& options,
                   bool force_out_of_core) {
  OocPlan p;
  product_dims(opA, A, opB, B, p);
  return plan_out_of_core(p.m, p.n, p.k, A.dtype, comm::comm_size(comm), options.memory_limit,
                          !c0.path.empty(), c0.fortran_order != out_fortran_order,
                          force_out_of_core);
}

FileGemmReport gemm_files(MPI_Comm comm, Op opA, const MatrixFile& A, Op opB, const MatrixFile& B,
                          std::complex<double> alpha, std::complex<double> beta,
                          const MatrixFile& c0, const MatrixFile& out, const Options& options,
                          const FileGemmSettings& settings) {
  const auto t0 = std::chrono::steady_clock::now();
  ooc::Job job;
  job.comm = comm, job.opA = opA, job.opB = opB, job.alpha = alpha, job.beta = beta;
  job.options = options, job.settings = settings;
  job.with_c0 = beta != std::complex<double>(0, 0);
  if (job.with_c0 && c0.path.empty())
    throw InvalidArgument("gemm_files: beta != 0 needs C0's file");
  trace::Call call(comm, "gemm_files", options.trace);  // the in-core path's calls: its phases
  job.A = describe_file(A, comm);
  job.B = describe_file(B, comm);
  if (job.with_c0) job.C0 = describe_file(c0, comm);
  job.plan = plan_files(comm, opA, job.A, opB, job.B, job.C0, out.fortran_order, options,
                        settings.force_out_of_core);
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
  const bool ooc = job.plan.out_of_core;
  switch (job.A.dtype) {
    case Dtype::F32:
      ooc ? ooc::stream_gemm<float>(job, rep) : ooc::in_core_gemm<float>(job, rep);
      break;
    case Dtype::F64:
      ooc ? ooc::stream_gemm<double>(job, rep) : ooc::in_core_gemm<double>(job, rep);
      break;
    case Dtype::C64:
      ooc ? ooc::stream_gemm<std::complex<float>>(job, rep)
          : ooc::in_core_gemm<std::complex<float>>(job, rep);
      break;
    case Dtype::C128:
      ooc ? ooc::stream_gemm<std::complex<double>>(job, rep)
          : ooc::in_core_gemm<std::complex<double>>(job, rep);
      break;
  }
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rep.peak_rss = peak_rss();
  return rep;
}

}  // namespace shardmm
