// The trace file: Chrome trace-event JSON ({"traceEvents": [...]}), one pid per rank (its world
// rank), spans as complete events ("X"), operations in flight as asynchronous pairs ("b"/"e"),
// counters ("C"). At the end of each traced call every rank's records (times on the clock of
// the communicator's rank 0) are gathered to rank 0 over the call's communicator; rank 0 adds
// them to the calls it already holds for that file and writes the whole file anew (after every
// call while it is below 1 MiB, then at most once a second and when the process ends): a
// temporary file next to it, renamed over it, so a reader never sees half a trace.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "comm/mpi_check.hpp"
#include "shardmm/error.hpp"
#include "shardmm/version.hpp"
#include "trace/events.hpp"

namespace shardmm::trace {
namespace {

namespace fs = std::filesystem;

// Microseconds with nanosecond digits, from integer nanoseconds (exact, so a child's end never
// passes its parent's in the printed numbers).
std::string micros(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::int64_t a = neg ? -ns : ns;
  char buf[40];
  (void)std::snprintf(buf, sizeof buf, "%s%lld.%03lld", neg ? "-" : "",
                      static_cast<long long>(a / 1000), static_cast<long long>(a % 1000));
  return buf;
}

std::int64_t nanos(double seconds) { return std::llround(seconds * 1e9); }

std::string number(const Arg& a) {
  if (a.integral) return std::to_string(std::llround(a.num));
  if (!std::isfinite(a.num)) return "null";
  char buf[40];
  (void)std::snprintf(buf, sizeof buf, "%.6g", a.num);
  return buf;
}

std::string args_of(const Event& e) {
  std::string s = "{";
  if (e.step >= 0) s += R"("step":)" + std::to_string(e.step);
  for (const Arg& a : e.args) {
    if (s.size() > 1) s += ",";
    s += quoted(a.key);
    s += ":";
    s += a.is_text ? quoted(a.text) : number(a);
  }
  return s + "}";
}

// The fields every event of a rank has: {"name":...,"ph":...,"ts":...,"pid":...,"tid":0
std::string head(const char* name, const char* ph, std::int64_t ts, int pid) {
  std::string s = R"({"name":)" + quoted(name);
  s += R"(,"ph":")";
  s += ph;
  s += R"(","ts":)" + micros(ts);
  s += R"(,"pid":)" + std::to_string(pid);
  return s + R"(,"tid":0)";
}

// The rank's track: named "rank N", sorted by N, its thread named "shardmm".
std::string metadata(int pid) {
  const std::string p = std::to_string(pid);
  std::string s = R"({"name":"process_name","ph":"M","pid":)" + p;
  s += R"(,"args":{"name":"rank )" + p + R"("}},)" + "\n";
  s += R"({"name":"process_sort_index","ph":"M","pid":)" + p;
  s += R"(,"args":{"sort_index":)" + p + "}},\n";
  s += R"({"name":"thread_name","ph":"M","pid":)" + p;
  return s + R"(,"tid":0,"args":{"name":"shardmm"}})";
}

std::string write_whole(const std::string& path, const std::string& body);

// What rank 0 holds per file: every call's events so far, joined by ",\n". A file is written
// after every call while it is small; from kSmall on at most once per kEvery seconds (writing
// it whole after each of many short calls would cost time quadratic in their number), and
// whatever is pending when the process ends.
constexpr std::size_t kSmall = std::size_t{1} << 20;
constexpr double kEvery = 1.0;
struct File {
  std::string body;
  double written = -1e300;  // when it was last written (steady clock)
  bool pending = false;
  std::set<int> named;  // ranks whose track names it holds
};
struct Files {
  std::map<std::string, File> files;
  Files() = default;
  Files(const Files&) = delete;
  Files& operator=(const Files&) = delete;
  Files(Files&&) = delete;
  Files& operator=(Files&&) = delete;
  ~Files() {
    for (auto& [path, f] : files) {
      if (!f.pending) continue;
      const std::string err = write_whole(path, f.body);
      if (!err.empty())
        (void)std::fprintf(stderr, "shardmm: cannot write the trace '%s': %s\n", path.c_str(),
                           err.c_str());
    }
  }
};
std::map<std::string, File>& written() {
  static Files files;
  return files.files;
}

// The file a writer other than world rank 0 uses: "t.json" -> "t.rank3.json" (calls on a
// communicator without world rank 0 run concurrently with others and would race for `path`).
std::string writer_path(const std::string& path) {
  int world = 0;
  SHARDMM_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &world));
  if (world == 0) return path;
  const fs::path p(path);
  return (p.parent_path() /
          (p.stem().string() + ".rank" + std::to_string(world) + p.extension().string()))
      .string();
}

std::string write_whole(const std::string& path, const std::string& body) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return "cannot create '" + tmp + "'";
  std::string top = R"({"displayTimeUnit":"ms","otherData":{"producer":"shardmm )";
  top += version_string;
  top += R"(","clock":"steady, aligned to rank 0 of each call's communicator"},)";
  top += "\"traceEvents\":[\n";
  const std::string end = "\n]}\n";
  bool ok = std::fwrite(top.data(), 1, top.size(), f) == top.size();
  ok = ok && std::fwrite(body.data(), 1, body.size(), f) == body.size();
  ok = ok && std::fwrite(end.data(), 1, end.size(), f) == end.size();
  ok = std::fclose(f) == 0 && ok;
  std::error_code ec;
  // Removed first: ext4 flushes a file renamed over another to disk (milliseconds, or tens of
  // them on a busy machine, while every rank waits); a reader may find no file for that instant.
  if (ok) fs::remove(path, ec);
  if (ok) fs::rename(tmp, path, ec);
  if (ok && !ec) return "";
  fs::remove(tmp, ec);
  return ok ? "cannot rename '" + tmp + "' to '" + path + "'" : "writing '" + tmp + "' failed";
}

// Rank 0's error text (empty: none) on every rank of `comm`.
std::string bcast_error(MPI_Comm comm, std::string err) {
  int len = static_cast<int>(err.size());
  SHARDMM_MPI(MPI_Bcast(&len, 1, MPI_INT, 0, comm));
  err.resize(static_cast<std::size_t>(len));
  SHARDMM_MPI(MPI_Bcast(err.data(), len, MPI_CHAR, 0, comm));
  return err;
}

}  // namespace

std::string quoted(const std::string& text) {
  std::string s = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      s += '\\';
      s += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      (void)std::snprintf(buf, sizeof buf, R"(\u%04x)", static_cast<unsigned>(c));
      s += buf;
    } else {
      s += c;
    }
  }
  return s + "\"";
}

std::string serialize(const std::vector<Event>& events, int pid, double offset) {
  static std::int64_t next_id = 0;  // asynchronous pairs' ids, unique per rank
  std::string out;
  const double closed = now();
  for (const Event& e : events) {
    if (!out.empty()) out += ",\n";
    const std::int64_t t0 = nanos(e.t0 - offset);
    const std::int64_t t1 = nanos((e.t1 < 0 ? closed : e.t1) - offset);
    if (e.ph == 'C') {  // a counter: its track is named after it, its value the argument
      out += head(e.name, "C", t0, pid);
      out += R"(,"args":{)" + quoted(e.name) + ":";
      out += (e.args.empty() ? "0" : number(e.args[0])) + "}}";
    } else if (e.ph == 'b') {  // in flight: a begin and an end with one id
      const std::string id = R"(,"cat":"flight","id":")" + std::to_string(pid) + "." +
                             std::to_string(next_id++) + R"(")";
      out += head(e.name, "b", t0, pid) + id;
      out += R"(,"args":)" + args_of(e) + "},\n";
      out += head(e.name, "e", t1, pid) + id + "}";
    } else {
      out += head(e.name, "X", t0, pid);
      out += R"(,"dur":)" + micros(t1 - t0);
      out += R"(,"cat":)" + quoted(category_name(e.cat));
      out += R"(,"args":)" + args_of(e) + "}";
    }
  }
  return out;
}

void check_target(MPI_Comm comm, const std::string& path) {
  std::string err;
  if (comm::comm_rank(comm) == 0) {
    const fs::path dir =
        fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
    std::error_code ec;
    if (path.empty() || fs::is_directory(path, ec)) err = "it is a directory";
    else if (!fs::is_directory(dir, ec)) err = "no directory '" + dir.string() + "'";
    else if (::access(dir.c_str(), W_OK | X_OK) != 0)
      err = "'" + dir.string() + "' is not writable";
  }
  err = bcast_error(comm, err);
  if (!err.empty()) throw IoError("cannot write the trace '" + path + "': " + err);
}

void gather_and_write(MPI_Comm comm, const std::string& path, const std::string& mine) {
  const int me = comm::comm_rank(comm), P = comm::comm_size(comm);
  const int len = mine.size() < 0x7fffffffU ? static_cast<int>(mine.size()) : -1;
  std::vector<int> lens(static_cast<std::size_t>(P)), displs(static_cast<std::size_t>(P));
  SHARDMM_MPI(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm));
  std::int64_t total = 0;
  bool fits = true;
  for (int r = 0; r < P; ++r) {
    fits = fits && lens[r] >= 0 && total + lens[r] < 0x7fffffff;
    displs[r] = static_cast<int>(fits ? total : 0);
    total += fits ? lens[r] : 0;
  }
  if (!fits)
    throw IoError("cannot write the trace '" + path + "': this call's records exceed 2 GiB");
  std::string all(me == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  SHARDMM_MPI(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(),
                          MPI_CHAR, 0, comm));
  std::string err;
  const std::string target = me == 0 ? writer_path(path) : path;
  if (me == 0) {
    File& file = written()[target];
    std::string& body = file.body;
    std::string joined;  // the ranks' parts, none empty, joined by ",\n"
    const std::vector<int>& world = facts(comm).world;
    for (int r = 0; r < P; ++r) {
      if (lens[r] == 0) continue;
      if (!joined.empty()) joined += ",\n";
      if (file.named.insert(world[r]).second) joined += metadata(world[r]) + ",\n";
      joined.append(all, static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(lens[r]));
    }
    if (!joined.empty()) body += (body.empty() ? "" : ",\n") + joined;
    const double t = now();
    file.pending = true;
    if (body.size() <= kSmall || t - file.written >= kEvery) {
      err = write_whole(target, body);
      file.written = t;
      file.pending = !err.empty();
    }
  }
  err = bcast_error(comm, err);
  if (!err.empty()) throw IoError("cannot write the trace '" + path + "': " + err);
}

}  // namespace shardmm::trace
