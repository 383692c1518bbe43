// BLACS grid -> Mesh, and the ScaLAPACK error conventions.
//
// Communicator: Cblacs_get(ctxt, 10) names the system context the grid's point-to-point
// scope uses (BLACS' own duplicate of the grid communicator, covering exactly the grid's
// processes); Cblacs2sys_handle turns it into the MPI_Comm. The Mesh is built on it with the
// order its ranks have (BLACS numbers them row-major; a column-major numbering is detected
// too, anything else is renumbered with one MPI_Comm_split). The Mesh is cached as an
// attribute of that communicator: Cblacs_gridexit frees the communicator, whose delete
// callback hands the Mesh to a graveyard emptied at the next call (no MPI inside callbacks).
#include "scalapack/blacs.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "comm/mpi_check.hpp"
#include "trace/call.hpp"
#include "trace/trace.hpp"

namespace shardmm::scalapack {
namespace {

constexpr int kBlacsContextComm = 10;  // BLACS_GET WHAT: the context's system handle

std::mutex& graveyard_mutex() {
  static std::mutex m;
  return m;
}
std::vector<Mesh*>& graveyard() {
  static std::vector<Mesh*> g;
  return g;
}

int on_delete(MPI_Comm, int, void* value, void*) {
  const std::scoped_lock lock(graveyard_mutex());
  graveyard().push_back(static_cast<Mesh*>(value));
  return MPI_SUCCESS;
}

void bury_dead_meshes() {
  std::vector<Mesh*> dead;
  {
    const std::scoped_lock lock(graveyard_mutex());
    dead.swap(graveyard());
  }
  for (Mesh* m : dead) delete m;
}

int mesh_keyval() {
  static const int keyval = [] {
    int k = MPI_KEYVAL_INVALID;
    SHARDMM_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_delete, &k, nullptr));
    return k;
  }();
  return keyval;
}

MPI_Comm grid_comm(const Grid& g) {
  int handle = -1;
  Cblacs_get(g.ctxt, kBlacsContextComm, &handle);
  MPI_Comm comm = Cblacs2sys_handle(handle);
  if (comm == MPI_COMM_NULL || comm::comm_size(comm) != g.nprow * g.npcol)
    throw NotSupported("BLACS context " + std::to_string(g.ctxt) +
                       " has no communicator of the grid's size " + std::to_string(g.nprow) + "x" +
                       std::to_string(g.npcol));
  return comm;
}

// Mesh on `comm` whose cell (myrow, mycol) is this process.
// Watched (SHARDMM_WATCHDOG): a process that makes the first call on a grid alone is reported.
Mesh build_mesh(MPI_Comm comm, const Grid& g) {
  trace::Call setup(comm, "BLACS grid", {}, trace::Call::Kind::SetUp);
  const int rank = comm::comm_rank(comm);
  int fits[2] = {rank == g.myrow * g.npcol + g.mycol, rank == g.myrow + g.mycol * g.nprow};
  {
    trace::Span wait("agree", trace::Cat::Wait);
    if (wait.seen()) wait.blocked("MPI_Allreduce", "the grid's order, from every process", comm);
    SHARDMM_MPI(MPI_Allreduce(MPI_IN_PLACE, fits, 2, MPI_INT, MPI_LAND, comm));
  }
  const std::vector<std::string> names{"p", "q"};
  const std::vector<int> sizes{g.nprow, g.npcol};
  if (fits[0]) return Mesh(comm, MeshShape(names, sizes, MeshShape::Order::RowMajor));
  if (fits[1]) return Mesh(comm, MeshShape(names, sizes, MeshShape::Order::ColMajor));
  MPI_Comm ordered = MPI_COMM_NULL;
  SHARDMM_MPI(MPI_Comm_split(comm, 0, g.myrow * g.npcol + g.mycol, &ordered));
  Mesh mesh(ordered, MeshShape(names, sizes, MeshShape::Order::RowMajor));
  SHARDMM_MPI(MPI_Comm_free(&ordered));
  return mesh;
}

}  // namespace

Grid grid_info(int ctxt) {
  Grid g;
  g.ctxt = ctxt;
  Cblacs_gridinfo(ctxt, &g.nprow, &g.npcol, &g.myrow, &g.mycol);
  return g;
}

Mesh grid_mesh(const Grid& g) {
  bury_dead_meshes();
  const MPI_Comm comm = grid_comm(g);
  void* value = nullptr;
  int found = 0;
  SHARDMM_MPI(MPI_Comm_get_attr(comm, mesh_keyval(), static_cast<void*>(&value), &found));
  if (found) return *static_cast<Mesh*>(value);
  auto mesh = std::make_unique<Mesh>(build_mesh(comm, g));
  SHARDMM_MPI(MPI_Comm_set_attr(comm, mesh_keyval(), mesh.get()));
  Mesh* owned = mesh.release();  // now owned by the attribute
  return *owned;
}

void report_illegal(const Grid& grid, const char* routine, int position,
                    const std::vector<std::string>& details) {
  std::string name = routine, form = "%s";  // PB_Cwarn and PB_Cabort take a char*
  for (const std::string& detail : details)
    PB_Cwarn(grid.ctxt, -1, name.data(), form.data(), detail.c_str());
  PB_Cabort(grid.ctxt, name.data(), -position);
}

void fatal(const Grid& grid, const char* routine, const std::string& what) {
  // Best effort: the process aborts next whether or not the message reaches stderr.
  (void)std::fprintf(stderr, "{%d,%d}: %s (shardmm): %s\n", grid.myrow, grid.mycol, routine,
                     what.c_str());
  (void)std::fflush(stderr);
  Cblacs_abort(grid.ctxt, -1);
  MPI_Abort(MPI_COMM_WORLD, 1);  // not reached: Cblacs_abort ends the program
  std::abort();
}

}  // namespace shardmm::scalapack
