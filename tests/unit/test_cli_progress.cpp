// The launcher's progress output (apps/shardmm/progress.hpp): redrawn in place on a terminal,
// one line per update anywhere else (a batch log), thinned to a line per tenth of the work.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "progress.hpp"

namespace shardmm::cli {
namespace {

// What `write` printed through a ProgressLine on a temporary file.
template <class F>
std::string printed(bool terminal, F&& write) {
  std::FILE* f = std::tmpfile();
  if (f == nullptr) {
    ADD_FAILURE() << "tmpfile failed";
    return {};
  }
  {
    ProgressLine line(f, terminal);
    write(line);
  }
  std::string out(static_cast<std::size_t>(std::ftell(f)), '\0');
  EXPECT_EQ(std::fseek(f, 0, SEEK_SET), 0);
  out.resize(std::fread(out.data(), 1, out.size(), f));
  (void)std::fclose(f);
  return out;
}

TEST(ProgressLine, OneLinePerUpdateOffATerminal) {
  const std::string out = printed(false, [](ProgressLine& l) {
    l.update("call 1/3");
    l.update("call 2/3");
    l.update("call 3/3");
    l.finish();
  });
  EXPECT_EQ(out, "call 1/3\ncall 2/3\ncall 3/3\n");
  EXPECT_EQ(out.find('\r'), std::string::npos);
}

TEST(ProgressLine, RedrawnOnATerminal) {
  const std::string out = printed(true, [](ProgressLine& l) {
    l.update("blocks 10/100");
    l.update("blocks 9");  // shorter: blanks cover the rest of the longer text
    l.finish();
  });
  EXPECT_EQ(out, "\rblocks 10/100\rblocks 9     \n");
}

TEST(ProgressLine, TerminalAskedOfTheStream) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(ProgressLine(f).terminal());  // a file is no terminal
  (void)std::fclose(f);
}

TEST(ProgressLine, ThinnedToTenthsOffATerminal) {
  ProgressLine log(stderr, false), tty(stderr, true);
  int lines = 0, redraws = 0;
  for (long long done = 1; done <= 1000; ++done) {
    lines += log.due(done, 1000) ? 1 : 0;
    redraws += tty.due(done, 1000) ? 1 : 0;
  }
  EXPECT_EQ(lines, 11);  // the first block, each further tenth, the last
  EXPECT_EQ(redraws, 1000);
  ProgressLine few(stderr, false);
  for (long long done = 1; done <= 3; ++done) EXPECT_TRUE(few.due(done, 3)) << done;
}

}  // namespace
}  // namespace shardmm::cli
