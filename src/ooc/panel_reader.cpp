// The panel readers. MPI-IO: per slot a file handle whose view is the panel's subarray, read
// with MPI_File_iread_at_all (collective, non-blocking), so the read of panel s+1 runs while
// panel s multiplies. posix: a reader thread preads the panel's runs. mmap: a reader thread
// maps the panel's byte span of the file in windows of at most kWindow bytes
// (MADV_SEQUENTIAL | MADV_WILLNEED), copies the panel's runs out and unmaps each window, so mapped
// pages never hold more than a window per slot.
#include "ooc/panel_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <future>
#include <mutex>

#include "comm/mpi_check.hpp"
#include "io/file_transfer.hpp"
#include "ooc/run_io.hpp"
#include "shardmm/error.hpp"

namespace shardmm::ooc {
namespace {

constexpr std::int64_t kWindow = std::int64_t{4} << 20;  // bytes mapped at once per slot

// "" when the file still holds `s`: Open MPI's non-blocking read past the end of a file
// never completes, so a file cut short while streaming is caught here instead.
std::string check_size(const MatrixFile& f, const Sub& s) {
  struct stat st {};
  if (s.elems() == 0) return "";
  if (::stat(f.path.c_str(), &st) != 0) return std::string("stat failed: ") + std::strerror(errno);
  if (st.st_size >= runs_of(f, s).end()) return "";
  return "short read: the file has " + std::to_string(st.st_size) + " bytes, the panel needs " +
         std::to_string(runs_of(f, s).end()) + " (the file was truncated?)";
}

class MpiIoReader final : public PanelReader {
 public:
  MpiIoReader(const MatrixFile& f, MPI_Comm comm) : f_(f), etype_(mpi_element(f.dtype)) {
    fh_[0] = io::open_file(comm, f.path, MPI_MODE_RDONLY);
    fh_[1] = io::open_file(comm, f.path, MPI_MODE_RDONLY);
  }
  ~MpiIoReader() override {
    for (int s = 0; s < 2; ++s) {
      // clang-tidy's MPI checker models point-to-point and collective requests, not MPI-IO's.
      // NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker)
      if (req_[s] != MPI_REQUEST_NULL) MPI_Wait(&req_[s], MPI_STATUS_IGNORE);
      MPI_File_close(&fh_[s]);  // collective: every rank destroys its reader at the same step
    }
  }
  MpiIoReader(const MpiIoReader&) = delete;
  MpiIoReader& operator=(const MpiIoReader&) = delete;
  MpiIoReader(MpiIoReader&&) = delete;
  MpiIoReader& operator=(MpiIoReader&&) = delete;

  void start(int slot, const Sub& s, void* buf) override {
    err_[slot] = check_size(f_, s);
    MPI_Datatype ftype = sub_filetype(f_, err_[slot].empty() ? s : Sub{}, etype_);
    const std::string view = io::mpi_io_error(  // collective: every rank sets a view
        MPI_File_set_view(fh_[slot], f_.data_offset, etype_, ftype, "native", MPI_INFO_NULL),
        "MPI_File_set_view");
    if (err_[slot].empty()) err_[slot] = view;
    if (ftype != etype_) SHARDMM_MPI(MPI_Type_free(&ftype));
    want_[slot] = err_[slot].empty() ? static_cast<int>(s.elems()) : 0;  // still join
    const int rc = MPI_File_iread_at_all(fh_[slot], 0, buf, want_[slot], etype_, &req_[slot]);
    if (err_[slot].empty()) err_[slot] = io::mpi_io_error(rc, "MPI_File_iread_at_all");
  }

  std::string wait(int slot) override {
    MPI_Status st;
    // Waited on through a local copy: clang-tidy 14's MPI checker overflows its stack naming a
    // request indexed by a variable in a member array, and it does not model MPI-IO requests.
    MPI_Request req = req_[slot];
    SHARDMM_MPI(MPI_Wait(&req, &st));  // NOLINT(clang-analyzer-optin.mpi.MPI-Checker)
    req_[slot] = req;
    if (!err_[slot].empty()) return err_[slot];
    int got = 0;
    SHARDMM_MPI(MPI_Get_count(&st, etype_, &got));
    if (got != want_[slot])
      return "short read: " + std::to_string(got) + " of " + std::to_string(want_[slot]) +
             " elements (the file was truncated?)";
    bytes_ += static_cast<std::int64_t>(got) * static_cast<std::int64_t>(dtype_size(f_.dtype));
    return "";
  }

 private:
  MatrixFile f_;
  MPI_Datatype etype_;
  MPI_File fh_[2] = {MPI_FILE_NULL, MPI_FILE_NULL};
  MPI_Request req_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  std::string err_[2];
  int want_[2] = {0, 0};
};

// A file cut short while mapped faults (SIGBUS) on the pages past its end. A reader thread copying
// from a mapping arms t_fault; the handler jumps back there and the read fails with an error,
// as MPI-IO's does. Any other SIGBUS gets the default action.
// volatile: the stores arming and clearing it around a memcpy must not be merged or dropped
// (at -O3 the arming store was removed as dead, and a cut file crashed the job with SIGBUS).
thread_local sigjmp_buf* volatile t_fault = nullptr;

void on_sigbus(int sig, siginfo_t* /*info*/, void* /*ctx*/) {
  if (t_fault) siglongjmp(*t_fault, 1);  // NOLINT(cert-err52-cpp): no C++ frames to unwind
  (void)std::signal(sig, SIG_DFL);
  (void)std::raise(sig);
}

void install_sigbus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, nullptr);
  });
}

// Copies `count` runs of `run` bytes from the mapping, run i at src + i * stride, to dst one after
// another; false when the pages faulted (the file shrank under it). Armed once per window: the
// jump buffer saves the signal mask, a system call, which per run of a narrow panel cost more
// than the copy.
bool guarded_copy(char* dst, const char* src, std::int64_t stride, index_t count, std::size_t run) {
  sigjmp_buf jb;
  if (sigsetjmp(jb, 1) != 0) {  // NOLINT(cert-err52-cpp): see on_sigbus
    t_fault = nullptr;
    return false;
  }
  t_fault = &jb;
  std::atomic_signal_fence(std::memory_order_seq_cst);  // armed before the first load
  for (index_t i = 0; i < count; ++i) std::memcpy(dst + i * run, src + i * stride, run);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_fault = nullptr;
  return true;
}

// Copies the runs of `s` (file order) from the file into `out`, a window at a time.
std::string copy_mapped(int fd, const MatrixFile& f, const Sub& s, char* out) {
  const auto es = static_cast<std::int64_t>(dtype_size(f.dtype));
  // Runs: one per major index (a column for Fortran order, a row for C order).
  const index_t major0 = f.fortran_order ? s.c0 : s.r0, major1 = f.fortran_order ? s.c1 : s.r1;
  const index_t minor0 = f.fortran_order ? s.r0 : s.c0, minor1 = f.fortran_order ? s.r1 : s.c1;
  const index_t extent = f.fortran_order ? f.rows : f.cols;
  const std::int64_t run = (minor1 - minor0) * es;
  const std::int64_t page = ::sysconf(_SC_PAGESIZE);
  index_t a = major0;
  while (a < major1) {
    const std::int64_t first = f.data_offset + (a * extent + minor0) * es;
    index_t b = a + 1;  // runs [a, b) in this window
    while (b < major1 && f.data_offset + (b * extent + minor0) * es + run - first <= kWindow) ++b;
    const std::int64_t last = f.data_offset + ((b - 1) * extent + minor0) * es + run;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || st.st_size < last)  // a shrunk file would fault (SIGBUS)
      return "short read: the file has " + std::to_string(st.st_size) + " bytes, the panel needs " +
             std::to_string(last) + " (the file was truncated?)";
    const std::int64_t base = first / page * page;
    const auto len = static_cast<std::size_t>(last - base);
    // MAP_POPULATE: the window's pages are mapped in one call, not a fault per page (a fault
    // traps to the hypervisor on a virtual machine: copies from unpopulated windows ran at a
    // third of the speed).
    void* map =
        ::mmap(nullptr, len, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, static_cast<off_t>(base));
    if (map == MAP_FAILED) return std::string("mmap failed: ") + std::strerror(errno);
    ::madvise(map, len, MADV_SEQUENTIAL);
    ::madvise(map, len, MADV_WILLNEED);
    const char* m = static_cast<const char*>(map);
    const bool ok =
        guarded_copy(out, m + (first - base), extent * es, b - a, static_cast<std::size_t>(run));
    out += (b - a) * run;
    if (!ok) {
      ::munmap(map, len);
      return "short read: bus error on the mapping (the file was truncated?)";
    }
    ::munmap(map, len);  // the pages behind leave this rank's resident set
    a = b;
  }
  return "";
}

// Copies the runs of `s` (file order) from the file into `out`: in batches of reads (run_io.hpp).
std::string copy_pread(int fd, const MatrixFile& f, const Sub& s, char* out, RunIo& io) {
  return io.read(fd, runs_of(f, s), out);
}

// The mmap reader's copy, with the signature of copy_pread (it makes no read calls).
std::string copy_mapped_runs(int fd, const MatrixFile& f, const Sub& s, char* out, RunIo& /*io*/) {
  return copy_mapped(fd, f, s, out);
}

using CopyFn = std::string (*)(int, const MatrixFile&, const Sub&, char*, RunIo&);

// A reader thread per started slot that copies the panel with `copy` (mmap or pread).
class ThreadReader final : public PanelReader {
 public:
  ThreadReader(const MatrixFile& f, MPI_Comm comm, CopyFn copy)
      : f_(f), copy_(copy), io_{RunIo(batches(copy)), RunIo(batches(copy))} {
    if (copy == copy_mapped_runs) install_sigbus_handler();
    fd_ = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
    std::string err = fd_ < 0 ? std::string("open failed: ") + std::strerror(errno) : "";
    err = io::first_error(comm, err);
    if (!err.empty()) {
      if (fd_ >= 0) ::close(fd_);
      throw IoError("cannot read '" + f.path + "': " + err);
    }
  }
  ~ThreadReader() override {
    for (auto& job : job_)
      if (job.valid()) job.wait();
    ::close(fd_);
  }
  ThreadReader(const ThreadReader&) = delete;
  ThreadReader& operator=(const ThreadReader&) = delete;
  ThreadReader(ThreadReader&&) = delete;
  ThreadReader& operator=(ThreadReader&&) = delete;

  void start(int slot, const Sub& s, void* buf) override {
    if (s.elems() == 0) {
      job_[slot] = std::async(std::launch::deferred, [] { return std::string(); });
      return;
    }
    bytes_ += s.elems() * static_cast<std::int64_t>(dtype_size(f_.dtype));
    job_[slot] = std::async(std::launch::async, [this, slot, s, buf] {
      try {
        return copy_(fd_, f_, s, static_cast<char*>(buf), io_[slot]);
      } catch (const std::exception& e) {
        return std::string(e.what());
      }
    });
  }

  std::string wait(int slot) override { return job_[slot].get(); }

 private:
  static bool batches(CopyFn copy) { return copy == copy_pread && batched_io_allowed(); }

  MatrixFile f_;
  CopyFn copy_;
  // Each slot's reads (one thread at a time per slot); batched or not depends on the
  // constructor's `copy`, so not a default member initializer.
  RunIo io_[2];  // NOLINT(modernize-use-default-member-init)
  int fd_ = -1;
  std::future<std::string> job_[2];
};

}  // namespace

Runs runs_of(const MatrixFile& f, const Sub& s) {
  const auto es = static_cast<std::int64_t>(dtype_size(f.dtype));
  const index_t major0 = f.fortran_order ? s.c0 : s.r0, major1 = f.fortran_order ? s.c1 : s.r1;
  const index_t minor0 = f.fortran_order ? s.r0 : s.c0, minor1 = f.fortran_order ? s.r1 : s.c1;
  const index_t extent = f.fortran_order ? f.rows : f.cols;
  const bool whole = minor0 == 0 && minor1 == extent;  // contiguous in the file
  Runs r;
  r.count = whole ? 1 : major1 - major0;
  r.len = (minor1 - minor0) * es * (whole ? major1 - major0 : 1);
  r.first = f.data_offset + (major0 * extent + minor0) * es;
  r.stride = extent * es;
  return r;
}

MPI_Datatype mpi_element(Dtype d) {
  switch (d) {
    case Dtype::F32: return MPI_FLOAT;
    case Dtype::F64: return MPI_DOUBLE;
    case Dtype::C64: return MPI_C_FLOAT_COMPLEX;
    case Dtype::C128: return MPI_C_DOUBLE_COMPLEX;
    case Dtype::F16:
    case Dtype::BF16: return MPI_UINT16_T;
  }
  return MPI_BYTE;
}

MPI_Datatype sub_filetype(const MatrixFile& f, const Sub& s, MPI_Datatype etype) {
  if (s.elems() == 0) return etype;
  const int sizes[2] = {static_cast<int>(f.rows), static_cast<int>(f.cols)};
  const int subs[2] = {static_cast<int>(s.r1 - s.r0), static_cast<int>(s.c1 - s.c0)};
  const int starts[2] = {static_cast<int>(s.r0), static_cast<int>(s.c0)};
  MPI_Datatype t = MPI_DATATYPE_NULL;
  SHARDMM_MPI(MPI_Type_create_subarray(
      2, sizes, subs, starts, f.fortran_order ? MPI_ORDER_FORTRAN : MPI_ORDER_C, etype, &t));
  SHARDMM_MPI(MPI_Type_commit(&t));
  return t;
}

std::unique_ptr<PanelReader> make_reader(IoMethod io, const MatrixFile& f, MPI_Comm comm) {
  if (io == IoMethod::Mmap) return std::make_unique<ThreadReader>(f, comm, copy_mapped_runs);
  if (io == IoMethod::Posix) return std::make_unique<ThreadReader>(f, comm, copy_pread);
  return std::make_unique<MpiIoReader>(f, comm);
}

}  // namespace shardmm::ooc
