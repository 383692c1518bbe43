// The launcher's command line: subcommands bench, multiply, plan, calibrate. CLI11 stays
// inside cli.cpp; callers see the parsed configs and how parsing ended.
#pragma once

#include <string>

#include "bench.hpp"
#include "commands.hpp"
#include "multiply.hpp"

namespace shardmm::cli {

struct Commands {
  BenchConfig bench;
  PlanConfig plan;
  CalibrateConfig calibrate;
  MultiplyConfig multiply;
};

/// How parsing ended: a command to run, or an early end with text to print.
enum class Ending {
  Run,      ///< `command` names the subcommand to run
  Help,     ///< --help / -h: `out` holds the help text, exit code 0
  Version,  ///< --version: `out` holds "shardmm VERSION", exit code 0
  Error,    ///< usage error: `err` holds the message, exit code 2
};

/// The launcher's command line, parsed.
struct Parsed {
  Commands commands;
  std::string command;  ///< "bench", "plan", "calibrate" or "multiply" (Ending::Run)
  Ending ending = Ending::Run;
  int exit_code = 0;     ///< the launcher's exit code when ending != Run: 0, or 2 on error
  std::string out, err;  ///< what the launcher prints to stdout / stderr when ending != Run
};

/// Parses `shardmm ARGS` (argv[0] is the program). Throws only when the command line itself
/// cannot be built; bad input ends as Ending::Error.
Parsed parse(int argc, const char* const* argv);
/// Runs the parsed subcommand (ending == Run); returns the exit code.
int run(const Parsed& parsed);

}  // namespace shardmm::cli
