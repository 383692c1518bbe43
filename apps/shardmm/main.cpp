// shardmm launcher: `mpirun -n P shardmm <command>`.
// Exit codes: 0 success; 1 error (bad input, I/O, MPI); 2 usage error; 3 a --check failed.
// Errors are agreed across ranks, so rank 0 prints the one message; SHARDMM_REPORT_ERRORS=all
// makes every rank print what it threw, tagged with its rank (for tests and debugging).
// Outside mpirun, `plan`, help, the version and a usage error run without MPI: a singleton
// MPI_Init starts Open MPI's runtime daemon, half a second for a command that sends nothing.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli.hpp"
#include "shardmm/shardmm.hpp"

namespace {

// Prints to a stream; a launcher that cannot write its message has nothing better to do.
void say(std::FILE* to, const std::string& text) { (void)std::fputs(text.c_str(), to); }

// Parses and runs the command; returns the exit code. MPI is initialized.
int launch(int argc, char** argv, int rank) {
  const shardmm::cli::Parsed parsed = shardmm::cli::parse(argc, argv);
  if (parsed.ending != shardmm::cli::Ending::Run) {  // help, version or a usage error
    if (rank == 0) {                                 // one message, from rank 0
      say(stdout, parsed.out);
      say(stderr, parsed.err);
    }
    return parsed.exit_code;
  }
  try {
    return shardmm::cli::run(parsed);
  } catch (const std::exception& e) {
    if (shardmm::environment("SHARDMM_REPORT_ERRORS") == "all") {
      int size = 1, initialized = 0;
      MPI_Initialized(&initialized);                          // always succeeds
      if (initialized) MPI_Comm_size(MPI_COMM_WORLD, &size);  // on MPI_COMM_WORLD errors are fatal
      say(stderr, "shardmm: error (rank " + std::to_string(rank) + " of " + std::to_string(size) +
                      "): " + e.what() + "\n");
    } else if (rank == 0) {
      say(stderr, std::string("shardmm: error: ") + e.what() + "\n");
    }
    return 1;
  }
}

// Whether a launcher started this process (Open MPI, MPICH's and Intel MPI's Hydra, PMIx,
// MVAPICH set these in every rank's environment).
bool under_launcher() {
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_SIZE"})
    if (std::getenv(name) != nullptr) return true;
  return false;
}

// Whether the command line names a command that communicates (bench, calibrate, multiply):
// the first word that is not an option. `plan`, and a line with no command (help, version, a
// usage error), do not.
bool communicates(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    return std::strcmp(argv[i], "plan") != 0;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const bool mpi = under_launcher() || communicates(argc, argv);
  if (mpi && MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  int rank = 0;
  if (mpi) MPI_Comm_rank(MPI_COMM_WORLD, &rank);  // on MPI_COMM_WORLD errors are fatal
  int rc = 1;
  try {
    rc = launch(argc, argv, rank);
  } catch (const std::exception& e) {  // building the command line itself failed
    say(stderr, std::string("shardmm: error: ") + e.what() + "\n");
  } catch (...) {
    say(stderr, "shardmm: error: unknown exception\n");
  }
  if (mpi) MPI_Finalize();
  return rc;
}
