// Failure injection for testing the error paths of a distributed run. A named point in each
// phase calls fault::point(phase); when SHARDMM_FAULT_INJECT selects that phase on this rank,
// it throws there, exactly as a real rank-local failure at that place would.
//
//   SHARDMM_FAULT_INJECT=<phase>@<rank>[:<kind>][,...]
//     phase: read | plan | redistribute | multiply | write
//     rank : rank in MPI_COMM_WORLD, or * for every rank
//     kind : alloc (std::bad_alloc, default) | io (IoError) | error (Error)
//            | stall (the rank stops there: it prints one line, then sleeps until the process
//              ends; for the watchdog, SHARDMM_WATCHDOG)
//
// Unset (the normal case), a point costs one getenv.
#pragma once

#include <string_view>

namespace shardmm::fault {

/// Throws the injected failure when SHARDMM_FAULT_INJECT selects `phase` on this rank.
void point(std::string_view phase);

/// True when `spec` selects `phase` on `world_rank`; sets `kind` to the failure's kind.
/// Throws InvalidArgument for a malformed spec (exposed for the unit test).
bool selects(std::string_view spec, std::string_view phase, int world_rank, std::string& kind);

}  // namespace shardmm::fault
