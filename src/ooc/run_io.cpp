// Runs in batches: each batch of at most kBatch runs is one io_submit of IOCB_CMD_PREAD or
// _PWRITE control blocks (one per run) and one io_getevents that collects them all; a run whose
// result is not its whole length (an error, a short transfer at the file's end) is done again
// with pread/pwrite, which retries or names the error. A batch the kernel refuses goes run by
// run, and so does every later one.
#include "ooc/run_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <mutex>

#include "core/fault.hpp"

#if defined(__linux__)
#include <linux/aio_abi.h>
#include <sys/syscall.h>
#endif
#if defined(__linux__) && defined(SYS_io_setup) && defined(SYS_io_submit) && \
    defined(SYS_io_getevents) && defined(SYS_io_destroy)
#define SHARDMM_HAVE_AIO 1
#endif

namespace shardmm::ooc {

bool batched_io_allowed() {
  try {
    fault::point("batched-io");
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

std::string pread_all(int fd, char* dst, std::int64_t len, std::int64_t off) {
  std::int64_t done = 0;
  while (done < len) {
    const ssize_t n = ::pread(fd, dst + done, static_cast<std::size_t>(len - done), off + done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::string("pread failed: ") + std::strerror(errno);
    if (n == 0)
      return "short read: the file ends at byte " + std::to_string(off + done) +
             ", the panel needs " + std::to_string(off + len) + " (the file was truncated?)";
    done += n;
  }
  return "";
}

std::string pwrite_all(int fd, const char* src, std::int64_t len, std::int64_t off) {
  std::int64_t done = 0;
  while (done < len) {
    const ssize_t w = ::pwrite(fd, src + done, static_cast<std::size_t>(len - done), off + done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return std::string("pwrite: ") + std::strerror(errno);
    if (w == 0) return "short write: the disk took 0 bytes";
    done += w;
  }
  return "";
}

namespace {

// Run i of r, between the file and its place in the packed buffer, with one call.
std::string one_run(int fd, bool write, const Runs& r, char* buf, index_t i) {
  char* p = buf + i * r.len;
  return write ? pwrite_all(fd, p, r.len, r.offset(i)) : pread_all(fd, p, r.len, r.offset(i));
}

}  // namespace

#ifdef SHARDMM_HAVE_AIO

namespace {

// AIO contexts outlive their RunIo: io_destroy waits for an RCU grace period (about 25 ms on
// the development VM, 0.2 s for a product's 8 contexts), so a RunIo takes a context from this
// process-wide pool and gives it back. The pool holds at most as many as were in use at once;
// the kernel frees them when the process ends.
std::mutex g_pool_mutex;
std::vector<aio_context_t> g_pool;

aio_context_t acquire_context() {
  {
    const std::scoped_lock lock(g_pool_mutex);
    if (!g_pool.empty()) {
      const aio_context_t ctx = g_pool.back();
      g_pool.pop_back();
      return ctx;
    }
  }
  aio_context_t ctx = 0;
  if (::syscall(SYS_io_setup, RunIo::kBatch, &ctx) != 0) return 0;  // no AIO, or aio-max-nr
  return ctx;
}

void release_context(aio_context_t ctx) {
  const std::scoped_lock lock(g_pool_mutex);
  g_pool.push_back(ctx);
}

}  // namespace

RunIo::RunIo(bool batched) {
  if (!batched) return;
  ctx_ = acquire_context();
  if (ctx_ != 0) cbs_.resize(sizeof(iocb) * kBatch);
}

RunIo::~RunIo() {
  if (ctx_ != 0) release_context(static_cast<aio_context_t>(ctx_));
}

// Runs [first, first + n) of r (n <= kBatch) in one submission; a refused submission turns
// batching off (the runs not taken go one by one).
std::string RunIo::batch(int fd, bool write, const Runs& r, char* buf, index_t first, int n) {
  auto* cbs = reinterpret_cast<iocb*>(cbs_.data());
  iocb* ptrs[kBatch] = {};
  for (int i = 0; i < n; ++i) {
    iocb& cb = cbs[i];
    std::memset(&cb, 0, sizeof cb);
    cb.aio_data = static_cast<std::uint64_t>(i);
    cb.aio_lio_opcode = write ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
    cb.aio_fildes = static_cast<std::uint32_t>(fd);
    cb.aio_buf = reinterpret_cast<std::uint64_t>(buf + (first + i) * r.len);
    cb.aio_nbytes = static_cast<std::uint64_t>(r.len);
    cb.aio_offset = r.offset(first + i);
    ptrs[i] = &cb;
  }
  int submitted = 0;
  while (submitted < n) {
    const long got = ::syscall(SYS_io_submit, static_cast<aio_context_t>(ctx_),
                               static_cast<long>(n - submitted), ptrs + submitted);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // refused: the rest go one by one
    submitted += static_cast<int>(got);
  }
  bool ok[kBatch] = {};
  io_event ev[kBatch] = {};
  for (int reaped = 0; reaped < submitted;) {
    const long got = ::syscall(SYS_io_getevents, static_cast<aio_context_t>(ctx_),
                               static_cast<long>(submitted - reaped),
                               static_cast<long>(submitted - reaped), ev, nullptr);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {  // events may be left in the context: not back to the pool
      const std::string e = std::string("io_getevents: ") + std::strerror(errno);
      (void)::syscall(SYS_io_destroy, static_cast<aio_context_t>(ctx_));
      ctx_ = 0;
      return e;
    }
    for (long e = 0; e < got; ++e) ok[ev[e].data] = ev[e].res == r.len;
    reaped += static_cast<int>(got);
  }
  if (submitted < n) {  // the kernel refused a batch: no more batches
    (void)::syscall(SYS_io_destroy, static_cast<aio_context_t>(ctx_));
    ctx_ = 0;
  }
  for (int i = 0; i < n; ++i) {  // short, failed or not submitted: once more, a call per run
    if (ok[i]) continue;
    std::string e = one_run(fd, write, r, buf, first + i);
    if (!e.empty()) return e;
  }
  return "";
}

#else  // no Linux AIO: a call per run

RunIo::RunIo(bool /*batched*/) {}
RunIo::~RunIo() = default;
std::string RunIo::batch(int, bool, const Runs&, char*, index_t, int) { return ""; }

#endif

std::string RunIo::move(int fd, bool write, const Runs& r, char* buf) {
  for (index_t i = 0; i < r.count;) {
    if (ctx_ != 0 && r.count - i > 1) {
      const int n = static_cast<int>(std::min<index_t>(kBatch, r.count - i));
      std::string e = batch(fd, write, r, buf, i, n);
      if (!e.empty()) return e;
      i += n;
      continue;
    }
    std::string e = one_run(fd, write, r, buf, i);
    if (!e.empty()) return e;
    ++i;
  }
  return "";
}

std::string RunIo::read(int fd, const Runs& r, char* buf) { return move(fd, false, r, buf); }

std::string RunIo::write(int fd, const Runs& r, const char* buf) {
  return move(fd, true, r, const_cast<char*>(buf));  // only read from when writing
}

}  // namespace shardmm::ooc
