// Helpers of the launcher's command-line tests (test_cli.cpp, test_cli_multiply.cpp): a fresh
// CLI::App built by build_app, parsed from an argv vector, and the two ways parsing may end.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"

namespace shardmm::cli::testing {

using Args = std::vector<std::string>;

// A fresh launcher command line; parse() feeds it `args` after the program name.
class Cli {
 public:
  Cli() { build_app(app, c); }
  Cli& parse(const Args& args) {
    std::vector<const char*> argv{"shardmm"};
    for (const auto& a : args) argv.push_back(a.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
    return *this;
  }
  Commands c;
  CLI::App app{"shardmm"};
};

inline std::string joined(const Args& args) {
  std::string s;
  for (const auto& a : args) s += " " + a;
  return s;
}

// `args` is rejected with a CLI::ParseError that is not a success (exit code != 0).
inline void expect_rejected(const Args& args) {
  try {
    Cli().parse(args);
    ADD_FAILURE() << "accepted:" << joined(args);
  } catch (const CLI::ParseError& e) {
    EXPECT_NE(e.get_exit_code(), 0) << joined(args) << ": " << e.what();
  }
}

// `args` ends parsing with a CLI::Success of type E; returns what the launcher would print.
template <class E>
std::string expect_success_exit(const Args& args) {
  Cli cli;
  try {
    cli.parse(args);
  } catch (const E& e) {
    std::ostringstream out, err;
    EXPECT_EQ(cli.app.exit(e, out, err), 0) << joined(args);
    return out.str();
  } catch (const CLI::ParseError& e) {
    ADD_FAILURE() << joined(args) << ": wrong exception " << e.get_name() << ": " << e.what();
    return "";
  }
  ADD_FAILURE() << "no exception for" << joined(args);
  return "";
}

}  // namespace shardmm::cli::testing
