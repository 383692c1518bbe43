// Helpers of the launcher's command-line tests (test_cli.cpp, test_cli_multiply.cpp): the
// launcher's parse() fed an argv vector, and the ways parsing may end.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli.hpp"

namespace shardmm::cli::testing {

using Args = std::vector<std::string>;

inline std::string joined(const Args& args) {
  std::string s;
  for (const auto& a : args) s += " " + a;
  return s;
}

// The launcher's parse() of `shardmm ARGS`.
inline Parsed parse_args(const Args& args) {
  std::vector<const char*> argv{"shardmm"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse(static_cast<int>(argv.size()), argv.data());
}

// A command line that must parse to a command to run; `c` is what it parsed.
class Cli {
 public:
  Cli& parse(const Args& args) {
    parsed = parse_args(args);
    EXPECT_EQ(parsed.ending, Ending::Run) << joined(args) << ":\n" << parsed.err << parsed.out;
    c = parsed.commands;
    return *this;
  }
  Parsed parsed;
  Commands c;
};

// `args` is rejected: a usage error with a message and a nonzero exit code.
inline void expect_rejected(const Args& args) {
  const Parsed p = parse_args(args);
  EXPECT_EQ(p.ending, Ending::Error) << "accepted:" << joined(args);
  EXPECT_NE(p.exit_code, 0) << joined(args);
  EXPECT_FALSE(p.err.empty()) << joined(args);
}

// `args` ends parsing early with `ending` (help or version) and exit code 0; returns what the
// launcher prints on stdout.
inline std::string expect_success_exit(Ending ending, const Args& args) {
  const Parsed p = parse_args(args);
  EXPECT_EQ(p.ending, ending) << joined(args) << ":\n" << p.err;
  EXPECT_EQ(p.exit_code, 0) << joined(args);
  EXPECT_EQ(p.err, "") << joined(args);
  return p.out;
}

}  // namespace shardmm::cli::testing
