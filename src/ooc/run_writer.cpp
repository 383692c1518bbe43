// The result's run writer: buffered pwrites, or each run's whole pages written with O_DIRECT
// from a page-aligned bounce buffer and its partial head and tail pages buffered
// (run_writer.hpp says why).
#include "ooc/run_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>

#include "core/fault.hpp"

namespace shardmm::ooc {
namespace {

// Whether SHARDMM_FAULT_INJECT's "direct-write" refuses this rank's direct writes (asked on
// the calling thread, which may make MPI calls; the writer threads make none).
bool direct_refused() {
  try {
    fault::point("direct-write");
  } catch (const std::exception&) {
    return true;
  }
  return false;
}

constexpr std::int64_t kBounceBytes = std::int64_t{1} << 20;  // bytes per direct write at most

std::int64_t page_up(std::int64_t x) {
  return (x + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
}
std::int64_t page_down(std::int64_t x) { return x / kDirectAlign * kDirectAlign; }

}  // namespace

RunWriter::RunWriter(int fd, const std::string& path, bool direct) : fd_(fd) {
  if (!direct || fd < 0) return;
  dfd_ = ::open(path.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);  // -1: buffered writes
  use_direct_ = dfd_ >= 0;
  refuse_ = direct_refused();
}

RunWriter::~RunWriter() { (void)close(); }

std::string RunWriter::close() {
  const int d = dfd_;
  dfd_ = -1, use_direct_ = false;
  if (d >= 0 && ::close(d) != 0) return std::string("close: ") + std::strerror(errno);
  return "";
}

std::string RunWriter::write(int slot, const Runs& r, const char* buf) {
  if (!use_direct_.load()) return io_[slot].write(fd_, r, buf);  // buffered: in batches
  for (index_t i = 0; i < r.count; ++i, buf += r.len) {
    std::string e = write_run(slot, r.offset(i), r.len, buf);
    if (!e.empty()) return e;
  }
  return "";
}

// One run at file offset `off`: [off, a) and [b, off + len) buffered, the whole pages [a, b)
// direct.
std::string RunWriter::write_run(int slot, std::int64_t off, std::int64_t len, const char* src) {
  const std::int64_t a = page_up(off), b = page_down(off + len);
  if (!use_direct_.load() || b <= a) return pwrite_all(fd_, src, len, off);
  std::string e = pwrite_all(fd_, src, a - off, off);
  if (e.empty()) e = write_direct(slot, a, b - a, src + (a - off));
  if (e.empty()) e = pwrite_all(fd_, src + (b - off), off + len - b, b);
  return e;
}

// [off, off + len), page-aligned, through the slot's bounce buffer in pieces of at most
// kBounceBytes bytes. EINVAL (the file system or device refuses this alignment): the rest goes
// buffered, and so does every later write.
std::string RunWriter::write_direct(int slot, std::int64_t off, std::int64_t len, const char* src) {
  Buffer<char>& bounce = bounce_[slot];
  if (bounce.size() == 0) bounce.resize(static_cast<std::size_t>(kBounceBytes));  // page-aligned
  for (std::int64_t done = 0; done < len;) {
    if (!use_direct_.load()) return pwrite_all(fd_, src + done, len - done, off + done);
    const std::int64_t n = std::min(kBounceBytes, len - done);
    std::memcpy(bounce.data(), src + done, static_cast<std::size_t>(n));
    ssize_t w = -1;
    if (refuse_) errno = EINVAL;  // injected: fails as a file system without O_DIRECT would
    else w = ::pwrite(dfd_, bounce.data(), static_cast<std::size_t>(n), off + done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EINVAL) {  // refused: buffered from now on (the other slot too)
      use_direct_ = false;
      return pwrite_all(fd_, src + done, len - done, off + done);
    }
    if (w < 0) return std::string("pwrite (O_DIRECT): ") + std::strerror(errno);
    if (w == 0) return "short write: the disk took 0 bytes";
    done += w, direct_bytes_ += w;
    if (w % kDirectAlign != 0)  // a short write off a page boundary: the rest buffered
      return pwrite_all(fd_, src + done, len - done, off + done);
  }
  return "";
}

}  // namespace shardmm::ooc
