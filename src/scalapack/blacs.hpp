// BLACS interop for the p?gemm drop-in: the few BLACS / PBLAS routines the shim calls (all
// exported by Debian's libscalapack-openmpi), a BLACS grid's own communicator as a Mesh, and
// PBLAS' error convention.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "shardmm/mesh.hpp"

extern "C" {
void Cblacs_gridinfo(int ctxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_get(int ctxt, int what, int* val);
MPI_Comm Cblacs2sys_handle(int handle);
void Cblacs_abort(int ctxt, int error_code);
// PBLAS' error handler, called with INFO < 0 by every PBLAS routine that finds an illegal
// argument: libscalapack's prints the position and ends the program with Cblacs_abort; a
// program may define its own (ScaLAPACK's testers do, to record INFO and return).
void PB_Cabort(int ictxt, char* rout, int info);
// PBLAS' warning: "PBLAS ERROR '<message>'" and the process's grid coordinates, on stderr.
void PB_Cwarn(int ictxt, int line, char* rout, char* form, ...);
}

namespace shardmm::scalapack {

/// This process's view of a BLACS grid (nprow == -1 when it is not part of the context).
struct Grid {
  int ctxt = -1;
  int nprow = -1, npcol = -1, myrow = -1, mycol = -1;
  [[nodiscard]] bool member() const { return nprow > 0 && myrow >= 0 && mycol >= 0; }
};

Grid grid_info(int ctxt);

/// The grid's processes as a 2D Mesh {p: nprow, q: npcol} built on the context's own
/// communicator (never MPI_COMM_WORLD), with the rank order that communicator has. Collective
/// over the grid the first time a grid is seen; cached on the BLACS communicator itself (an
/// MPI attribute), so the cache dies with the grid (Cblacs_gridexit).
Mesh grid_mesh(const Grid& grid);

/// PBLAS' report of an illegal argument: PB_Cwarn(ctxt, routine, detail) for each of
/// `details` (PBLAS' wording of what this process found wrong), then PB_Cabort(ctxt, routine,
/// -position), where position is the argument number, or argument*100 + entry for a
/// descriptor entry. Returns only when the program's PB_Cabort returns.
void report_illegal(const Grid& grid, const char* routine, int position,
                    const std::vector<std::string>& details = {});

/// An error that is not the caller's argument (MPI failure, out of memory): printed with the
/// routine name, then the BLACS abort every ScaLAPACK routine uses for fatal errors.
[[noreturn]] void fatal(const Grid& grid, const char* routine, const std::string& what);

}  // namespace shardmm::scalapack
