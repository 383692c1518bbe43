// What multiply tells while it runs and after: progress on stderr and every rank's peak
// resident memory.
//
// Progress is redrawn in place ('\r') when stderr is a terminal; anywhere else (a batch log, a
// pipe, a file) each update is a line of its own, so a log reads as one line per update
// instead of one line glued from every redraw. Frequent updates (a block at a time) are
// thinned to one line per tenth of the work there (due()).
#pragma once

#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "mpi_util.hpp"

namespace shardmm::cli {

class ProgressLine {
 public:
  /// Writes to `out`; `terminal`: redraw in place (the default asks isatty on `out`).
  explicit ProgressLine(std::FILE* out = stderr) : ProgressLine(out, isatty(fileno(out)) == 1) {}
  ProgressLine(std::FILE* out, bool terminal) : out_(out), terminal_(terminal) {}

  [[nodiscard]] bool terminal() const { return terminal_; }

  /// One update: on a terminal it replaces the text drawn before; elsewhere a line of its own.
  void update(const std::string& text) {
    // Best effort: progress that cannot be written does not stop the run.
    if (terminal_) {
      const int pad = drawn_ > text.size() ? static_cast<int>(drawn_ - text.size()) : 0;
      (void)std::fprintf(out_, "\r%s%*s", text.c_str(), pad, "");
      drawn_ = text.size();
    } else {
      (void)std::fprintf(out_, "%s\n", text.c_str());
    }
    (void)std::fflush(out_);
  }

  /// Whether `done` of `total` deserves an update: always on a terminal; elsewhere the first,
  /// the last and the first of each further tenth of the work.
  bool due(long long done, long long total) {
    if (terminal_ || done >= total) return true;
    const long long tenth = total > 0 ? done * 10 / total : 0;
    if (done > 1 && tenth == last_tenth_) return false;
    last_tenth_ = tenth;
    return true;
  }

  /// Ends the redrawn line (a newline on a terminal when something was drawn).
  void finish() {
    if (terminal_ && drawn_ > 0) (void)std::fputc('\n', out_);
    drawn_ = 0;
  }

 private:
  std::FILE* out_;
  bool terminal_;
  std::size_t drawn_ = 0;
  long long last_tenth_ = -1;
};

/// Collective over MPI_COMM_WORLD: every rank's peak resident memory so far (getrusage's
/// ru_maxrss, the kernel's VmHWM) in bytes, on rank 0 (empty elsewhere).
/// Bytes in MiB, for the reports.
inline double mib(double bytes) { return bytes / 1048576.0; }

/// Every rank's `mine`, gathered on rank 0 of MPI_COMM_WORLD (empty elsewhere).
inline std::vector<long long> gather_on_root(long long mine) {
  int rank = 0, ranks = 1;
  SHARDMM_CLI_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  SHARDMM_CLI_MPI(MPI_Comm_size(MPI_COMM_WORLD, &ranks));
  std::vector<long long> all(rank == 0 ? static_cast<std::size_t>(ranks) : 0);
  SHARDMM_CLI_MPI(
      MPI_Gather(&mine, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
  return all;
}

/// Every rank's peak resident memory in bytes (getrusage), on rank 0.
inline std::vector<long long> peak_rss_per_rank() {
  rusage ru{};
  return gather_on_root(getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss * 1024LL : 0);
}

inline std::string peak_rss_line(const std::vector<long long>& bytes) {
  std::string s = "peak RSS per rank (MiB):";
  char buf[32];
  for (const long long b : bytes) {
    (void)std::snprintf(buf, sizeof buf, " %.1f", mib(static_cast<double>(b)));
    s += buf;
  }
  return s;
}

}  // namespace shardmm::cli
