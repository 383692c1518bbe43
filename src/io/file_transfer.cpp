// MPI-IO transfer of a tile's file runs. Writes: each piece of the tile (at most
// max_message_elems() elements) gets an hindexed file view of its runs and one collective
// MPI_File_write_at_all from the packed tile buffer. Reads coalesce runs separated by small gaps (a
// block-cyclic tile's row pieces) into spans that are read whole into a sieve buffer and copied
// out: MPI-IO handles a view of a few large spans far faster than one of millions of 512-byte runs
// (docs/OUT_OF_CORE.md).
#include "io/file_transfer.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <exception>
#include <filesystem>
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
// Reads: a gap between runs is read along (and dropped) when it is at most this many bytes and
// at most kMaxGapRatio times the next run, so at most (1 + kMaxGapRatio) x the tile is read.
constexpr index_t kMaxGapBytes = index_t{64} << 10;
constexpr index_t kMaxGapRatio = 8;
// Reads: elements read per piece, gaps included (the sieve buffer's size).
constexpr index_t kSieveBytes = index_t{8} << 20;

// One collective write piece: the file view covers exactly `n` elements (the runs), written
// from `buf`. Ranks with nothing to write still take part with an empty view.
std::string write_piece(MPI_File fh, const std::vector<index_t>& offsets,
                        const std::vector<index_t>& lengths, const char* buf, index_t n,
                        MPI_Datatype etype, std::size_t elem_size, std::int64_t data_offset) {
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
  const int rc = MPI_File_write_at_all(fh, 0, buf, count, etype, &st);
  if (!err.empty()) return err;
  err = mpi_io_error(rc, "MPI_File_write_at_all");
  if (!err.empty()) return err;
  int done = 0;
  SHARDMM_MPI(MPI_Get_count(&st, etype, &done));
  if (done != count)
    return "short write: " + std::to_string(done) + " of " + std::to_string(count) + " elements";
  return "";
}

// A read piece: the tile's runs (into `packed` in order) and the spans of the file that cover
// them, each span one or more runs with the small gaps between them.
struct ReadPiece {
  std::vector<index_t> run_off, run_len, span_off, span_len;
  index_t useful = 0, spanned = 0;  // elements of the runs, elements of the spans

  void clear() {
    run_off.clear();
    run_len.clear();
    span_off.clear();
    span_len.clear();
    useful = spanned = 0;
  }
};

// Takes runs from `cursor` one at a time until `budget` elements are spanned (gaps included).
void next_read_piece(RunCursor& cursor, index_t budget, index_t elem_size, ReadPiece& p) {
  while (!cursor.done() && p.spanned < budget && p.run_len.size() < kMaxRunsPerPiece) {
    const std::size_t before = p.run_len.size();
    const index_t last_len = before == 0 ? 0 : p.run_len.back();
    // At most one new run; runs touching the last one extend it (and its span) first.
    const index_t got = cursor.next(budget - p.spanned, before + 1, p.run_off, p.run_len);
    if (got == 0) break;
    p.useful += got;
    const index_t grown = before == 0 ? 0 : p.run_len[before - 1] - last_len;
    if (grown > 0) p.span_len.back() += grown;
    p.spanned += grown;
    if (p.run_len.size() == before) continue;
    const index_t len = got - grown, off = p.run_off.back();
    const index_t gap = before == 0 ? 0 : off - (p.run_off[before - 1] + p.run_len[before - 1]);
    const bool merge = before > 0 && gap * elem_size <= kMaxGapBytes && gap <= kMaxGapRatio * len &&
                       p.spanned + gap + len <= budget;
    if (merge) {
      p.span_len.back() += gap + len;
      p.spanned += gap + len;
    } else {
      p.span_off.push_back(off);
      p.span_len.push_back(len);
      p.spanned += len;
    }
  }
}

// Copies the runs of `p` out of `sieve` (its spans back to back) into `out` (packed).
void scatter_runs(const ReadPiece& p, const char* sieve, char* out, index_t elem_size) {
  std::size_t s = 0;
  index_t sieve_pos = 0;  // element of `sieve` where span s starts
  for (std::size_t r = 0; r < p.run_off.size(); ++r) {
    while (p.run_off[r] >= p.span_off[s] + p.span_len[s]) sieve_pos += p.span_len[s++];
    const index_t from = sieve_pos + p.run_off[r] - p.span_off[s];
    const auto bytes = static_cast<std::size_t>(p.run_len[r] * elem_size);
    std::copy_n(sieve + from * elem_size, bytes, out);
    out += bytes;
  }
}

// Independent reads of `p`'s spans, back to back into `out`, through the contiguous view set
// by read_pieces (offsets in elements).
std::string read_spans(MPI_File fh, const ReadPiece& p, char* out, MPI_Datatype etype,
                       index_t elem_size) {
  for (std::size_t s = 0; s < p.span_off.size(); ++s) {
    const int count = static_cast<int>(p.span_len[s]);  // <= the budget, < 2 GiB
    MPI_Status st;
    std::string err = mpi_io_error(
        MPI_File_read_at(fh, static_cast<MPI_Offset>(p.span_off[s]), out, count, etype, &st),
        "MPI_File_read_at");
    if (!err.empty()) return err;
    int done = 0;
    SHARDMM_MPI(MPI_Get_count(&st, etype, &done));
    if (done != count)
      return "short read: " + std::to_string(done) + " of " + std::to_string(count) + " elements";
    out += p.span_len[s] * elem_size;
  }
  return "";
}

// Collective over comm until every rank's cursor is done or any rank failed: each round, every
// rank reads its piece's spans with independent contiguous reads (into `buf` directly when they
// hold no gap, else into a sieve buffer whose runs are copied out). Collective two-phase reads
// of a view with millions of short runs, or of views that partly overlap across ranks (sieved
// spans do), are slow or wrong in Open MPI's OMPIO. `buf` ends past the last element read.
std::string read_pieces(MPI_File fh, MPI_Comm comm, RunCursor& cursor, char*& buf, index_t limit,
                        MPI_Datatype etype, std::size_t elem_size, std::int64_t data_offset) {
  const auto es = static_cast<index_t>(elem_size);
  const index_t budget = std::min(limit, std::max<index_t>(1, kSieveBytes / es));
  std::string err = mpi_io_error(MPI_File_set_view(fh, static_cast<MPI_Offset>(data_offset), etype,
                                                   etype, "native", MPI_INFO_NULL),
                                 "MPI_File_set_view");
  ReadPiece p;
  std::vector<char> sieve;
  for (;;) {
    int flags[2] = {cursor.done() ? 0 : 1, err.empty() ? 0 : 1}, all[2] = {0, 0};
    SHARDMM_MPI(MPI_Allreduce(flags, all, 2, MPI_INT, MPI_MAX, comm));
    if (all[0] == 0 || all[1] != 0) break;
    p.clear();
    next_read_piece(cursor, budget, es, p);
    const bool gaps = p.spanned > p.useful;
    if (gaps) sieve.resize(static_cast<std::size_t>(p.spanned * es));
    err = read_spans(fh, p, gaps ? sieve.data() : buf, etype, es);
    if (gaps && err.empty()) scatter_runs(p, sieve.data(), buf, es);
    buf += p.useful * es;
  }
  return err;
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
    if (++a_ == major_[mi_].second) {  // this major run is done: on to the next, if any
      ++mi_;
      if (mi_ < major_.size()) a_ = major_[mi_].first;
    }
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
  if (dir == Direction::Read) {
    err = read_pieces(fh, comm, cursor, buf, limit, etype, elem_size, data_offset);
    span.arg("bytes", static_cast<std::int64_t>(buf - static_cast<char*>(packed)));
    return err;
  }
  for (;;) {
    // Every rank joins every piece until all are done or any failed.
    int flags[2] = {cursor.done() ? 0 : 1, err.empty() ? 0 : 1}, all[2] = {0, 0};
    SHARDMM_MPI(MPI_Allreduce(flags, all, 2, MPI_INT, MPI_MAX, comm));
    if (all[0] == 0 || all[1] != 0) break;
    offsets.clear();
    lengths.clear();
    const index_t n = cursor.next(limit, kMaxRunsPerPiece, offsets, lengths);
    err = write_piece(fh, offsets, lengths, buf, n, etype, elem_size, data_offset);
    if (n > 0) buf += n * static_cast<index_t>(elem_size);
  }
  span.arg("bytes", static_cast<std::int64_t>(buf - static_cast<char*>(packed)));
  return err;
}

std::string raw_size_error(MPI_Comm comm, const std::string& path, index_t rows, index_t cols,
                           Dtype dtype, std::int64_t data_offset, bool readable) {
  std::string err;
  if (comm::comm_rank(comm) == 0) {
    std::error_code ec;
    const auto size = static_cast<std::int64_t>(std::filesystem::file_size(path, ec));
    const std::int64_t need = data_offset + rows * cols * std::int64_t(dtype_size(dtype));
    if (ec) err = ec.message();
    else if (readable && ::access(path.c_str(), R_OK) != 0) err = "not readable";
    else if (size != need)
      err = "file size is " + std::to_string(size) + " bytes, a " + std::to_string(rows) + "x" +
            std::to_string(cols) + " " + to_string(dtype) + " matrix" +
            (data_offset > 0 ? " at offset " + std::to_string(data_offset) : "") +
            " needs exactly " + std::to_string(need);
  }
  return first_error(comm, err);
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
  // ROMIO (MPICH's MPI-IO) sieves independent strided writes under fcntl locks, and a rank
  // whose write fails (EFBIG, ENOSPC) returns holding its lock: the other ranks' writes then
  // wait for ever. Writes go unsieved (a write per contiguous piece); other MPI-IOs ignore it.
  MPI_Info info = MPI_INFO_NULL;
  if ((amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)) != 0) {
    SHARDMM_MPI(MPI_Info_create(&info));
    SHARDMM_MPI(MPI_Info_set(info, "romio_ds_write", "disable"));
  }
  MPI_File fh = MPI_FILE_NULL;
  const std::string local =
      mpi_io_error(MPI_File_open(comm, path.c_str(), amode, info, &fh), "MPI_File_open");
  if (info != MPI_INFO_NULL) SHARDMM_MPI(MPI_Info_free(&info));
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
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): on purpose
      // no entropy source: the clock alone
    }
    char hex[16];
    const auto res = std::to_chars(hex, hex + sizeof hex, v, 16);
    name = path + ".tmp." + std::string(hex, res.ptr);
  }
  comm::bcast_string(comm, name, 0);
  return name;
}

}  // namespace shardmm::io
