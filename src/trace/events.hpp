// The trace's in-memory records and per-communicator facts, shared by the recorder
// (recorder.cpp), the writer (writer.cpp), the clock alignment (clock.cpp) and trace::Call.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace shardmm::trace {

struct Arg {
  const char* key = nullptr;
  double num = 0;
  std::string text;
  bool integral = false, is_text = false;
};

/// One record of this rank: a span ('X', t0..t1), a counter sample ('C', at t0) or a
/// non-blocking operation in flight ('b', posted t0, completion observed t1).
struct Event {
  const char* name = nullptr;
  Cat cat = Cat::Call;
  char ph = 'X';
  std::int64_t step = -1;
  double t0 = 0, t1 = -1, flops = 0;
  std::vector<Arg> args;
};

/// This process's records of the current outermost call.
struct Recorder {
  std::vector<Event> events;
  std::size_t limit = std::size_t{1} << 20;  // events per rank and call; the rest are dropped
  std::int64_t dropped = 0;
  void clear() {
    events.clear();
    dropped = 0;
  }
};
Recorder& recorder();

/// Facts about a communicator, cached on it (an MPI attribute freed with it).
struct CommFacts {
  std::vector<int> world;            // world rank of each member
  std::string label;                 // "ranks 0-3"
  bool synced = false;               // clock offset to the communicator's rank 0 measured
  double offset = 0;                 // this rank's clock minus rank 0's, seconds
  double error = 0;                  // half the fastest round trip: the offset's accuracy, seconds
  std::vector<std::string> checked;  // trace files whose directory rank 0 found writable
  std::string watch_dir;             // the watchdog's status files for this communicator
};
CommFacts& facts(MPI_Comm comm);

/// Collective over `comm`, once per communicator: estimates this rank's clock offset to rank
/// 0 by ping-pong (the round trip with the smallest time of several wins).
void sync_clock(MPI_Comm comm, CommFacts& f);
/// Collective over `comm`, once per communicator: the offset this rank measured before to the
/// communicator's rank 0 (the same process), else sync_clock's.
void align_clock(MPI_Comm comm, CommFacts& f);

/// This rank's records as trace-event JSON objects separated by ",\n", times on the clock of
/// rank 0 (`offset` subtracted), in microseconds; `pid` is the world rank.
std::string serialize(const std::vector<Event>& events, int pid, double offset);

/// Collective over `comm`: gathers every rank's `mine` to rank 0, which adds them (and the
/// names of tracks new to the file) to what it holds for `path` and writes the whole file anew
/// (temporary file, then rename; see writer.cpp for when). Every rank throws the same IoError
/// when that fails.
void gather_and_write(MPI_Comm comm, const std::string& path, const std::string& mine);

/// Collective: IoError on every rank unless rank 0 can create files in `path`'s directory.
void check_target(MPI_Comm comm, const std::string& path);

/// "a,b" with JSON's escapes: the text as a JSON string literal.
std::string quoted(const std::string& text);

}  // namespace shardmm::trace
