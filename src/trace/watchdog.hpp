// The hang reporter (SHARDMM_WATCHDOG=SECONDS[:abort]). A helper thread per rank watches the
// rank's progress (spans opening and closing) while it is inside a library call. When nothing
// moved for SECONDS, every rank prints one tagged line to stderr: its phase, step, span stack
// and the MPI operation it waits in (communicator, peers, bytes). Each writes the same facts to
// a status file in a directory its communicator's rank 0 chose (SHARDMM_WATCHDOG_DIR, else
// TMPDIR, else /tmp); rank 0's helper reads them and prints who waits for whom, naming the
// ranks that did not arrive. With :abort the ranks then end their processes (exit status 124,
// rank 0 once it has reported, the others once rank 0 has read their files), so the launcher
// (mpirun) ends the job.
//
// The helper thread makes no MPI call: the library cannot assume MPI_THREAD_MULTIPLE (the
// launcher, the examples and ScaLAPACK codes call MPI_Init), and a stalled rank must still be
// able to report. The files are the only channel, so the report works on one host (or a
// shared directory); a rank whose file rank 0 cannot see is named as "no report".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace shardmm::trace::watchdog {

struct Settings {
  double seconds = 0;  // 0: off
  bool abort = false;
};
/// SHARDMM_WATCHDOG parsed; throws InvalidArgument for a malformed value.
Settings settings();
/// Parses a SHARDMM_WATCHDOG value (exposed for the unit test).
Settings parse(const std::string& text);

/// Where this rank's call runs: the status directory, its rank there and the members' world
/// ranks (rank 0 reports who waits for whom).
struct Scope {
  std::string dir;
  int world_rank = 0, rank = 0;
  std::vector<int> members;
};

/// Rank 0 made `dir`: it goes when the process ends (or the watchdog ends the job).
void own(const std::string& dir);

/// The outermost call begins (starts the helper thread the first time) / ends.
void begin_call(const Settings& s, Scope scope);
void end_call() noexcept;

/// The main thread's span stack, mirrored for the helper thread.
void push(const char* name, Cat cat, std::int64_t step) noexcept;
void pop() noexcept;
/// The innermost span blocks in MPI operation `op` on `what`; `members`: world ranks that must
/// all arrive (a collective), `peers`: world ranks it needs messages from.
void blocked(const char* op, const std::string& what, const std::vector<int>& members,
             const std::vector<int>& peers) noexcept;

/// Status of one rank as its file holds it, and rank 0's verdict over all of them (exposed
/// for the unit test of the analysis).
struct Report {
  int rank = -1;  // world rank
  double time = 0;
  std::string phase, stack, op, what;
  std::int64_t step = -1;
  std::vector<int> members, peers;
};
std::string format_line(const Report& r, double idle_seconds);
std::string serialize(const Report& r);
bool deserialize(const std::string& text, Report& r);
/// Lines saying who waits for whom among `members` (world ranks) given their reports.
std::vector<std::string> who_waits(const std::vector<int>& members,
                                   const std::vector<Report>& reports);

}  // namespace shardmm::trace::watchdog
