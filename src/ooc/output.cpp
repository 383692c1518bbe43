// Streamed result file. Rank 0 names "<out>.tmp.<hex>" in out's directory, writes the .npy
// header at offset 0 and reserves the file's size; every rank writes its C blocks from a
// writer thread (a pwrite per run of the block in the file) and starts the kernel's writeback
// of each. publish(): fsync, close, check the size on rank 0, rename; any rank's error removes
// the temporary file and leaves the destination as it was.
#include "ooc/output.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "comm/collectives.hpp"
#include "comm/mpi_check.hpp"
#include "core/fault.hpp"
#include "io/file_transfer.hpp"
#include "shardmm/error.hpp"
#include "shardmm/io.hpp"
#include "trace/trace.hpp"

namespace shardmm::ooc {

namespace fs = std::filesystem;

namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// SHARDMM_FAULT_INJECT's failure at `phase` on this rank, as an error text ("" when none).
std::string injected(std::string_view phase) {
  try {
    fault::point(phase);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

std::string first_of_errors(const std::string& a, const std::string& b) {
  return a.empty() ? b : a;
}

// Reserves the file's whole size (a full disk or a file size limit fails here, before any
// work); a file system without reservations gets the size alone.
std::string reserve(int fd, std::int64_t size) {
  if (size == 0) return "";
  if (fd < 0) return "cannot open the temporary file to reserve its size";
  const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (rc == EOPNOTSUPP || rc == EINVAL)
    return ::ftruncate(fd, static_cast<off_t>(size)) == 0 ? "" : errno_text("ftruncate");
  if (rc == 0) return "";
  return "reserving " + std::to_string(size) + " bytes: " + std::strerror(rc);
}

}  // namespace

OutputFile::OutputFile(MPI_Comm comm, const MatrixFile& out, bool direct) : comm_(comm), out_(out) {
  tmp_ = io::temp_name(comm, out.path);
  out_.data_offset = 0;
  if (!out.raw)
    out_.data_offset = static_cast<std::int64_t>(
        make_npy_header(out.dtype, out.rows, out.cols, out.fortran_order).size());
  try {
    open(direct);
  } catch (const IoError& e) {
    close();
    std::error_code ec;
    if (comm::comm_rank(comm) == 0) fs::remove(tmp_, ec);
    throw IoError("cannot write '" + out.path + "': " + e.what());
  }
}

std::int64_t OutputFile::data_bytes() const {
  return out_.rows * out_.cols * static_cast<std::int64_t>(dtype_size(out_.dtype));
}

// Rank 0 creates the file, writes the header and reserves the whole size; then every rank
// opens it (a second time with O_DIRECT when `direct`).
void OutputFile::open(bool direct) {
  const std::int64_t size = out_.data_offset + data_bytes();
  std::string local;
  if (comm::comm_rank(comm_) == 0) {
    fd_ = ::open(tmp_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0) local = errno_text("open");
    if (local.empty() && !out_.raw) {
      const std::string h = make_npy_header(out_.dtype, out_.rows, out_.cols, out_.fortran_order);
      if (::pwrite(fd_, h.data(), h.size(), 0) != static_cast<ssize_t>(h.size()))
        local = errno_text("writing the header");
    }
    if (local.empty()) local = reserve(fd_, size);
  }
  std::string err = io::first_error(comm_, local);
  if (err.empty() && comm::comm_rank(comm_) != 0) {
    fd_ = ::open(tmp_.c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) local = errno_text("open");
  }
  if (err.empty()) err = io::first_error(comm_, local);
  if (!err.empty()) throw IoError(err);
  writer_ = std::make_unique<RunWriter>(fd_, tmp_, direct);
}

OutputFile::~OutputFile() {
  for (auto& w : write_)
    if (w.valid()) w.wait();
  if (published_) return;
  close();
  std::error_code ec;
  if (comm::comm_rank(comm_) == 0) fs::remove(tmp_, ec);
}

void OutputFile::close() {
  if (writer_) (void)writer_->close();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void OutputFile::writeback(const Sub& s) {
  if (fd_ < 0 || s.elems() == 0) return;
  const Runs r = runs_of(out_, s);
#ifdef SYNC_FILE_RANGE_WRITE  // Linux: start writing these pages to the disk, do not wait
  (void)::sync_file_range(fd_, r.first, r.end() - r.first, SYNC_FILE_RANGE_WRITE);
#else
  (void)r;
#endif
}

void OutputFile::start_write(int slot, const Sub& s, const void* buf) {
  pending_[slot] = s;
  if (s.elems() == 0) return;
  // The writer thread also starts the block's writeback: submitting it may block on the
  // disk's queue, which must not stall the GEMM.
  std::string fail = injected("ooc-write");  // here: the writer thread makes no MPI call
  write_[slot] = std::async(std::launch::async, [this, slot, s, buf, fail] {
    std::string e = fail;
    if (e.empty()) e = writer_->write(slot, runs_of(out_, s), static_cast<const char*>(buf));
    if (e.empty()) writeback(s);
    return e;
  });
}

std::string OutputFile::wait_write(int slot) {
  if (!write_[slot].valid()) return err_;
  trace::Span span("write wait", trace::Cat::Io);
  const std::string e = write_[slot].get();
  if (e.empty()) {
    bytes_ += pending_[slot].elems() * static_cast<std::int64_t>(dtype_size(out_.dtype));
  } else if (err_.empty()) {
    err_ = e;
  }
  return err_;
}

double OutputFile::publish() {
  const auto t0 = std::chrono::steady_clock::now();
  for (int w = 0; w < 2; ++w) (void)wait_write(w);  // writes still in flight (none: stream.cpp)
  std::string err = first_of_errors(err_, writer_ ? writer_->close() : "");
  if (fd_ >= 0 && ::fsync(fd_) != 0 && err.empty()) err = errno_text("fsync");
  if (fd_ >= 0 && ::close(fd_) != 0 && err.empty()) err = errno_text("close");
  fd_ = -1;
  const double sync_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  err = io::first_error(comm_, err);
  if (err.empty() && comm::comm_rank(comm_) == 0) {
    const std::int64_t want = out_.data_offset + data_bytes();
    std::error_code ec;
    const auto size = static_cast<std::int64_t>(fs::file_size(tmp_, ec));
    if (ec) err = "cannot stat '" + tmp_ + "': " + ec.message();
    else if (size != want)
      err = "short write: '" + tmp_ + "' has " + std::to_string(size) + " bytes, expected " +
            std::to_string(want);
    else fs::rename(tmp_, out_.path, ec);
    if (err.empty() && ec) err = "renaming '" + tmp_ + "' failed: " + ec.message();
  }
  err = io::first_error(comm_, err);
  if (!err.empty()) throw IoError("cannot write '" + out_.path + "': " + err);  // ~ removes tmp
  published_ = true;
  return sync_s;
}

}  // namespace shardmm::ooc
