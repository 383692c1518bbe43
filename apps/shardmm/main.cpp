// shardmm launcher: `mpirun -n P shardmm <command>`.
// Exit codes: 0 success; 1 error (bad input, I/O, MPI); 2 usage error; 3 a --check failed.
// Errors are agreed across ranks, so rank 0 prints the one message; SHARDMM_REPORT_ERRORS=all
// makes every rank print what it threw, tagged with its rank (for tests and debugging).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
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
    const char* report = std::getenv("SHARDMM_REPORT_ERRORS");
    if (report != nullptr && std::strcmp(report, "all") == 0) {
      int size = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      std::fprintf(stderr, "shardmm: error (rank %d of %d): %s\n", rank, size, e.what());
    } else if (rank == 0) {
      std::fprintf(stderr, "shardmm: error: %s\n", e.what());
    }
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
