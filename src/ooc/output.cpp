// Out-of-core result file. Rank 0 names "<out>.tmp.<hex>" in out's directory, writes the
// .npy header at offset 0; every rank writes its C blocks through subarray views at the data
// offset (independent writes). publish(): sync, close, check the size on rank 0, rename; any rank's
// error removes the temporary file and leaves the destination as it was.
#include "ooc/output.hpp"

#include <filesystem>

#include "comm/collectives.hpp"
#include "comm/mpi_check.hpp"
#include "io/file_transfer.hpp"
#include "ooc/stream.hpp"
#include "shardmm/error.hpp"
#include "shardmm/io.hpp"
#include "trace/trace.hpp"

namespace shardmm::ooc {

namespace fs = std::filesystem;

OutputFile::OutputFile(MPI_Comm comm, const MatrixFile& out)
    : comm_(comm), out_(out), etype_(mpi_element(out.dtype)) {
  tmp_ = io::temp_name(comm, out.path);
  try {
    fh_ = io::open_file(comm, tmp_, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL);
  } catch (const IoError& e) {
    std::error_code ec;
    if (comm::comm_rank(comm) == 0) fs::remove(tmp_, ec);
    throw IoError("cannot write '" + out.path + "': " + e.what());
  }
  out_.data_offset = 0;
  if (!out.raw) {
    const std::string header = make_npy_header(out.dtype, out.rows, out.cols, out.fortran_order);
    out_.data_offset = static_cast<std::int64_t>(header.size());
    if (comm::comm_rank(comm) == 0) {
      MPI_Status st;
      err_ = io::mpi_io_error(
          MPI_File_write_at(fh_, 0, header.data(), static_cast<int>(header.size()), MPI_CHAR, &st),
          "writing the header");
    }
  }
}

OutputFile::~OutputFile() {
  if (published_) return;
  close();
  std::error_code ec;
  if (comm::comm_rank(comm_) == 0) fs::remove(tmp_, ec);
}

void OutputFile::close() {
  if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);  // collective, errors reported by publish
}

std::string OutputFile::write(const Sub& s, const void* buf) {
  MPI_Datatype ftype = sub_filetype(out_, s, etype_);
  std::string err = io::mpi_io_error(
      MPI_File_set_view(fh_, out_.data_offset, etype_, ftype, "native", MPI_INFO_NULL),
      "MPI_File_set_view");
  if (ftype != etype_) SHARDMM_MPI(MPI_Type_free(&ftype));
  const int count = err.empty() ? static_cast<int>(s.elems()) : 0;  // still join
  MPI_Status st;
  trace::Span span("MPI_File_write_at_all", trace::Cat::Io);
  span.arg("bytes",
           static_cast<std::int64_t>(count) * static_cast<std::int64_t>(dtype_size(out_.dtype)));
  // Independent, not _all: Open MPI's two-phase collective write returns early on the rank that
  // hits an error (EFBIG, ENOSPC), leaving the others in its exchange; errors are agreed later.
  const int rc = count > 0 ? MPI_File_write_at(fh_, 0, buf, count, etype_, &st) : MPI_SUCCESS;
  if (err.empty()) err = io::mpi_io_error(rc, "MPI_File_write_at");
  if (count == 0) return err;
  if (err.empty()) {
    int done = 0;
    SHARDMM_MPI(MPI_Get_count(&st, etype_, &done));
    if (done != count)
      err = "short write: " + std::to_string(done) + " of " + std::to_string(count) + " elements";
    bytes_ += static_cast<std::int64_t>(done) * static_cast<std::int64_t>(dtype_size(out_.dtype));
  }
  if (err_.empty()) err_ = err;
  return err;
}

void OutputFile::publish() {
  std::string err = err_;
  const std::string synced = io::mpi_io_error(MPI_File_sync(fh_), "MPI_File_sync");
  if (err.empty()) err = synced;
  const std::string closed = io::mpi_io_error(MPI_File_close(&fh_), "MPI_File_close");
  if (err.empty()) err = closed;
  err = io::first_error(comm_, err);
  if (err.empty() && comm::comm_rank(comm_) == 0) {
    const std::int64_t want =
        out_.data_offset +
        out_.rows * out_.cols * static_cast<std::int64_t>(dtype_size(out_.dtype));
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
}

}  // namespace shardmm::ooc
