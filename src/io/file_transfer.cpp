// Collective MPI-IO transfer of a tile's file runs: each piece of the tile (at most
// max_message_elems() elements) gets an hindexed file view of its runs and one
// MPI_File_read_at_all / MPI_File_write_at_all between the file and the packed tile buffer.
#include "io/file_transfer.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <exception>
#include <random>
#include <string>

#include "comm/collectives.hpp"
#include "comm/mpi_check.hpp"
#include "shardmm/error.hpp"
#include "trace/trace.hpp"

namespace shardmm::io {
namespace {

// Runs per piece are capped too, so the offset/length lists stay small even for cyclic tiles.
constexpr std::size_t kMaxRunsPerPiece = std::size_t{1} << 20;

// One collective piece: the file view covers exactly `n` elements (the runs), which move
// to/from `buf`. Ranks with nothing to move still take part with an empty view.
std::string transfer_piece(MPI_File fh, const std::vector<index_t>& offsets,
                           const std::vector<index_t>& lengths, char* buf, index_t n,
                           MPI_Datatype etype, std::size_t elem_size, std::int64_t data_offset,
                           Direction dir) {
  MPI_Datatype ftype = etype;
  if (n > 0) {
    std::vector<int> lens(lengths.size());
    std::vector<MPI_Aint> displs(offsets.size());
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      lens[r] = static_cast<int>(lengths[r]);  // <= max_message_elems() <= INT_MAX
      displs[r] = static_cast<MPI_Aint>(offsets[r] * static_cast<index_t>(elem_size));
    }
    SHARDMM_MPI(MPI_Type_create_hindexed(static_cast<int>(lens.size()), lens.data(), displs.data(),
                                         etype, &ftype));
    SHARDMM_MPI(MPI_Type_commit(&ftype));
  }
  std::string err = mpi_io_error(MPI_File_set_view(fh, static_cast<MPI_Offset>(data_offset), etype,
                                                   ftype, "native", MPI_INFO_NULL),
                                 "MPI_File_set_view");
  if (ftype != etype) SHARDMM_MPI(MPI_Type_free(&ftype));
  const int count = err.empty() ? static_cast<int>(n) : 0;  // still join the collective
  MPI_Status st;
  const int rc = dir == Direction::Read ? MPI_File_read_at_all(fh, 0, buf, count, etype, &st)
                                        : MPI_File_write_at_all(fh, 0, buf, count, etype, &st);
  if (!err.empty()) return err;
  err = mpi_io_error(rc, dir == Direction::Read ? "MPI_File_read_at_all" : "MPI_File_write_at_all");
  if (!err.empty()) return err;
  int done = 0;
  SHARDMM_MPI(MPI_Get_count(&st, etype, &done));
  if (done != count)
    return std::string(dir == Direction::Read ? "short read: " : "short write: ") +
           std::to_string(done) + " of " + std::to_string(count) + " elements";
  return "";
}

}  // namespace

RunCursor::RunCursor(std::vector<Range> major, std::vector<Range> minor, index_t minor_extent)
    : major_(std::move(major)), minor_(std::move(minor)), minor_extent_(minor_extent) {
  if (minor_.empty()) major_.clear();  // no elements at all
  if (!major_.empty()) {
    a_ = major_[0].first;
    b_ = minor_[0].first;
  }
}

RunCursor RunCursor::for_tile(const Layout& L, const std::vector<int>& coords, bool fortran_order) {
  auto rows = L.row_map().owned_ranges(L.dim_coord(0, coords));
  auto cols = L.col_map().owned_ranges(L.dim_coord(1, coords));
  if (fortran_order) return RunCursor(std::move(cols), std::move(rows), L.rows());
  return RunCursor(std::move(rows), std::move(cols), L.cols());
}

void RunCursor::advance() {
  if (++ni_ == minor_.size()) {
    ni_ = 0;
    if (++a_ == major_[mi_].second && ++mi_ < major_.size()) a_ = major_[mi_].first;
  }
  b_ = minor_[ni_].first;
}

index_t RunCursor::next(index_t max_elems, std::size_t max_runs, std::vector<index_t>& offsets,
                        std::vector<index_t>& lengths) {
  index_t total = 0;
  while (!done() && total < max_elems) {
    const index_t end = minor_[ni_].second;
    const index_t len = std::min(end - b_, max_elems - total);
    const index_t off = a_ * minor_extent_ + b_;
    if (!lengths.empty() && offsets.back() + lengths.back() == off) {
      lengths.back() += len;  // touches the previous run (stays <= max_elems)
    } else {
      if (lengths.size() == max_runs) break;
      offsets.push_back(off);
      lengths.push_back(len);
    }
    total += len;
    b_ += len;
    if (b_ == end) advance();
  }
  return total;
}

std::string transfer(MPI_File fh, MPI_Comm comm, RunCursor cursor, void* packed, MPI_Datatype etype,
                     std::size_t elem_size, std::int64_t data_offset, Direction dir) {
  std::string err;
  std::vector<index_t> offsets, lengths;
  char* buf = static_cast<char*>(packed);
  trace::Span span(dir == Direction::Read ? "MPI_File_read_at_all" : "MPI_File_write_at_all",
                   trace::Cat::Io);
  if (span.seen())
    span.blocked(dir == Direction::Read ? "MPI_File_read_at_all" : "MPI_File_write_at_all",
                 "this rank's tile", comm);
  // Pieces also stay below 2 GiB: many MPI-IO implementations count bytes in an int inside.
  const index_t limit =
      std::min<index_t>(comm::max_message_elems(), INT_MAX / static_cast<index_t>(elem_size));
  for (;;) {
    // Every rank joins every piece until all are done or any failed.
    int flags[2] = {cursor.done() ? 0 : 1, err.empty() ? 0 : 1}, all[2] = {0, 0};
    SHARDMM_MPI(MPI_Allreduce(flags, all, 2, MPI_INT, MPI_MAX, comm));
    if (all[0] == 0 || all[1] != 0) break;
    offsets.clear();
    lengths.clear();
    const index_t n = cursor.next(limit, kMaxRunsPerPiece, offsets, lengths);
    err = transfer_piece(fh, offsets, lengths, buf, n, etype, elem_size, data_offset, dir);
    if (n > 0) buf += n * static_cast<index_t>(elem_size);
  }
  span.arg("bytes", static_cast<std::int64_t>(buf - static_cast<char*>(packed)));
  return err;
}

std::string mpi_io_error(int code, const std::string& what) {
  if (code == MPI_SUCCESS) return "";
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, msg, &len) != MPI_SUCCESS) len = 0;
  return what + " failed: " + std::string(msg, static_cast<std::size_t>(len));
}

std::string first_error(MPI_Comm comm, const std::string& local) {
  const int me = comm::comm_rank(comm), P = comm::comm_size(comm);
  const int mine = local.empty() ? P : me;
  int root = P;
  SHARDMM_MPI(MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, comm));
  if (root == P) return "";
  std::string msg = local;
  comm::bcast_string(comm, msg, root);
  return msg;
}

MPI_File open_file(MPI_Comm comm, const std::string& path, int amode) {
  trace::Span span("MPI_File_open", trace::Cat::Io);
  if (span.seen()) span.blocked("MPI_File_open", path, comm);
  MPI_File fh = MPI_FILE_NULL;
  const std::string local =
      mpi_io_error(MPI_File_open(comm, path.c_str(), amode, MPI_INFO_NULL, &fh), "MPI_File_open");
  const std::string err = first_error(comm, local);
  if (!err.empty()) throw IoError("cannot open '" + path + "': " + err);
  return fh;
}

std::string temp_name(MPI_Comm comm, const std::string& path) {
  std::string name;
  if (comm::comm_rank(comm) == 0) {
    auto v =
        static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    try {
      std::random_device rd;
      v ^= (std::uint64_t{rd()} << 32) ^ rd();
    } catch (const std::exception&) {  // no entropy source: the clock alone
    }
    char hex[16];
    const auto res = std::to_chars(hex, hex + sizeof hex, v, 16);
    name = path + ".tmp." + std::string(hex, res.ptr);
  }
  comm::bcast_string(comm, name, 0);
  return name;
}

}  // namespace shardmm::io
