// The launcher's command line: subcommands bench, multiply, plan, calibrate.
#pragma once

#include <CLI/CLI.hpp>

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

/// Declares every subcommand and option of `shardmm` on `app`, bound to `c`.
void build_app(CLI::App& app, Commands& c);
/// Runs the parsed subcommand; returns the exit code.
int run(const CLI::App& app, const Commands& c);

}  // namespace shardmm::cli
