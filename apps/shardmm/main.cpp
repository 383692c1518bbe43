// shardmm launcher: `mpirun -n P shardmm <command>`.
// Exit codes: 0 success; 1 error (bad input, I/O, MPI); 2 usage error; 3 a --check failed.
#include <mpi.h>

#include <cstdio>
#include <sstream>

#include "cli.hpp"
#include "shardmm/shardmm.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CLI::App app{"shardmm: distributed dense matrix multiplication over MPI"};
  shardmm::cli::Commands commands;
  shardmm::cli::build_app(app, commands);
  int rc = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    rc = app.exit(e, out, err);
    if (rank == 0) {  // one message, from rank 0
      std::fputs(out.str().c_str(), stdout);
      std::fputs(err.str().c_str(), stderr);
    }
    MPI_Finalize();
    return rc == 0 ? 0 : 2;
  }
  try {
    rc = shardmm::cli::run(app, commands);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "shardmm: error: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
