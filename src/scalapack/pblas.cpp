// PBLAS' argument checks agreed over the grid (pblas.hpp).
#include "scalapack/pblas.hpp"

#include "comm/mpi_check.hpp"
#include "trace/trace.hpp"

namespace shardmm::scalapack {

void check_matrices(const Grid& g, const std::vector<const MatrixArg*>& args, Finding& f) {
  for (const MatrixArg* arg : args)
    for (const int c : illegal_codes(g, *arg)) f.add(c, describe_illegal(g, *arg, c));
}

bool report_if_illegal(const Grid& g, const Mesh& mesh, const char* routine, Finding f) {
  // LLD is checked against each process's own local rows: the codes may differ by process.
  trace::Span wait("agree", trace::Cat::Wait);  // where a process that never calls leaves us
  if (wait.seen())
    wait.blocked("MPI_Allreduce", "the argument check of every process", mesh.comm());
  SHARDMM_MPI(MPI_Allreduce(MPI_IN_PLACE, &f.code, 1, MPI_INT, MPI_MIN, mesh.comm()));
  if (f.code == INT_MAX) return false;
  report_illegal(g, routine, f.code % 100 == 0 ? f.code / 100 : f.code, f.details);
  return true;
}

}  // namespace shardmm::scalapack
