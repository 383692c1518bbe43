// Helpers of the launcher's tests (test_multiply.cpp, test_multiply_checks.cpp,
// test_plan_bench.cpp, test_calibrate.cpp).
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "unit/cli_parse_util.hpp"

namespace shardmm::testing {

// f()'s exit code; an exception is a failure (and -1).
template <class F>
int returns(F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw " << e.what();
    return -1;
  }
}

// The launcher's command line `shardmm multiply --quiet ARGS` -> its MultiplyConfig; throws
// std::invalid_argument with the launcher's message when it does not parse to a command.
inline cli::MultiplyConfig parse_multiply(const std::vector<std::string>& args) {
  std::vector<std::string> line{"multiply", "--quiet"};
  line.insert(line.end(), args.begin(), args.end());
  const cli::Parsed parsed = cli::testing::parse_args(line);
  if (parsed.ending != cli::Ending::Run)
    throw std::invalid_argument("shardmm multiply does not parse: " + parsed.err + parsed.out);
  return parsed.commands.multiply;
}

}  // namespace shardmm::testing
