// trace::Call: one collective library call (gemm, a redistribution, a file read or write, a
// p?gemm) as the trace and the watchdog see it. The outermost Call over a communicator turns
// recording on when the call is traced (Options::trace, else SHARDMM_TRACE) and watching on
// when SHARDMM_WATCHDOG is set, opens the call's span, and at done() gathers every rank's
// records into the trace file. Calls made inside a call (gemm's redistributions) are phases
// of it. Collective the first time a communicator is traced (clock alignment, the file's
// directory checked) or watched (the status directory chosen).
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

#include "trace/trace.hpp"

namespace shardmm::trace {

class Call {
 public:
  /// A library call (recorded when traced), or a step of set-up such as making a mesh: only
  /// watched, so that a rank that takes it alone is reported. A Call traces and watches only:
  /// the call's settings (comm::WaitScope, comm::WireScope) are its entry's to open.
  enum class Kind { LibraryCall, SetUp };
  /// Every rank of `comm` (MPI_COMM_NULL: an idle rank, nothing recorded) makes this call.
  /// Throws, the same on every rank, for a malformed SHARDMM_WATCHDOG or a trace file whose
  /// directory rank 0 cannot write.
  Call(MPI_Comm comm, const char* name, const std::string& trace_file = {},
       Kind kind = Kind::LibraryCall);
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  Call(Call&&) = delete;
  Call& operator=(Call&&) = delete;

  /// The call's span, for arguments (shapes, algorithm, ...).
  Span& span() { return *span_; }
  /// Collective, after the call's work succeeded: closes its span; the outermost traced call
  /// writes the trace file (IoError on every rank when that fails). The destructor does it
  /// when done() was not called and no exception is leaving the call (a failure to write is
  /// then printed, not thrown); leaving by an exception drops the call's records.
  void done();

 private:
  int exceptions_ = 0;  // std::uncaught_exceptions() when the call began
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool outer_ = false;  // this call turned recording or watching on
  std::string file_;    // the trace file; empty when not recording
  std::optional<Span> span_;
};

/// The trace file a call with `option` (Options::trace) writes: it, else SHARDMM_TRACE.
std::string trace_file(const std::string& option);

/// Collective over `comm` (a new mesh's communicator, as every rank makes it): when
/// SHARDMM_WATCHDOG is set, rank 0 chooses the status directory of the calls on `comm` now, so
/// that a call some ranks never make (an SPMD mistake) is reported in full, rank 0 naming the
/// ranks that did not arrive (chosen by the call, a rank waiting there for a missing rank 0
/// can report only itself). A malformed
/// SHARDMM_WATCHDOG is left for the first call to report. Nothing inside a call.
void prepare_watch(MPI_Comm comm);

}  // namespace shardmm::trace
