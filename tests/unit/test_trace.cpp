// The watchdog's pure parts: SHARDMM_WATCHDOG's syntax, the status file round trip, and rank
// 0's verdict of who waits for whom; and the trace writer's JSON strings.
#include <gtest/gtest.h>

#include <algorithm>

#include "shardmm/error.hpp"
#include "trace/events.hpp"
#include "trace/watchdog.hpp"

namespace {

using namespace shardmm;
using namespace shardmm::trace::watchdog;

TEST(Watchdog, Settings) {
  EXPECT_EQ(parse("").seconds, 0);
  EXPECT_EQ(parse("60").seconds, 60);
  EXPECT_FALSE(parse("60").abort);
  EXPECT_EQ(parse("0.5:abort").seconds, 0.5);
  EXPECT_TRUE(parse("0.5:abort").abort);
  for (const char* bad : {"x", "0", "-3", "5:stop", "5:", "5s", ":abort", "1e9"})
    EXPECT_THROW((void)parse(bad), InvalidArgument) << bad;
}

Report waiting(int rank, const std::string& op, std::vector<int> members, std::vector<int> peers) {
  Report r;
  r.rank = rank;
  r.time = 1000;
  r.phase = "multiply";
  r.stack = "gemm > multiply > agree";
  r.op = op;
  r.what = "agree 'multiply'";
  r.members = std::move(members);
  r.peers = std::move(peers);
  return r;
}

Report computing(int rank) {
  Report r;
  r.rank = rank;
  r.time = 1000;
  r.phase = "multiply";
  r.step = 3;
  r.stack = "gemm > multiply > prepare";
  return r;
}

bool has(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

TEST(Watchdog, StatusFileRoundTrip) {
  const Report r = waiting(3, "MPI_Allreduce", {0, 1, 2, 3}, {2});
  Report back;
  ASSERT_TRUE(deserialize(serialize(r), back));
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.op, r.op);
  EXPECT_EQ(back.what, r.what);
  EXPECT_EQ(back.members, r.members);
  EXPECT_EQ(back.peers, r.peers);
  EXPECT_EQ(back.stack, r.stack);
  EXPECT_FALSE(deserialize("rank=1\n", back));  // a file caught half-written
}

// Three ranks wait in the same collective; the fourth computes: it did not arrive.
TEST(Watchdog, NamesTheRankThatDidNotArrive) {
  const std::vector<int> all{0, 1, 2, 3};
  const auto lines =
      who_waits(all, {waiting(0, "MPI_Allreduce", all, {}), waiting(1, "MPI_Allreduce", all, {}),
                      computing(2), waiting(3, "MPI_Allreduce", all, {})});
  EXPECT_TRUE(has(lines, "ranks 0,1,3 wait in MPI_Allreduce (agree 'multiply') for rank 2"));
  EXPECT_TRUE(has(lines, "rank 2 did not arrive: it is in phase 'multiply', step 3"));
  EXPECT_FALSE(has(lines, "rank 0 did not arrive"));
}

// A receive waits for its peer; a rank that sent no report is named as such.
TEST(Watchdog, PeersAndMissingReports) {
  const auto lines = who_waits({0, 1, 2}, {waiting(0, "MPI_Waitall", {}, {1}), computing(1)});
  EXPECT_TRUE(has(lines, "rank 0 waits in MPI_Waitall (agree 'multiply') for rank 1"));
  EXPECT_TRUE(has(lines, "rank 1 did not arrive"));
  EXPECT_TRUE(has(lines, "rank 2: no report"));
}

// Ranks in different collectives on the same ranks wait for each other: both are named.
TEST(Watchdog, MismatchedCollectives) {
  const std::vector<int> pair{0, 1};
  Report a = waiting(0, "MPI_Allreduce", pair, {});
  Report b = waiting(1, "MPI_Alltoallv", pair, {});
  const auto lines = who_waits(pair, {a, b});
  EXPECT_TRUE(has(lines, "rank 0 waits in MPI_Allreduce (agree 'multiply') for rank 1"));
  EXPECT_TRUE(has(lines, "rank 1 is elsewhere: phase 'multiply', waiting in MPI_Alltoallv"));
}

TEST(Watchdog, LineSaysPhaseStackAndOperation) {
  const std::string line = format_line(waiting(1, "MPI_Allreduce", {0, 1}, {}), 2.04);
  EXPECT_EQ(line, "no progress for 2.0 s in phase 'multiply' (gemm > multiply > agree): waiting in "
                  "MPI_Allreduce (agree 'multiply') over ranks 0,1");
  EXPECT_NE(format_line(waiting(1, "MPI_Allreduce", {0, 1, 2, 3}, {}), 1).find("over ranks 0-3"),
            std::string::npos);
  EXPECT_NE(format_line(computing(2), 1).find("not in an MPI call"), std::string::npos);
}

TEST(TraceWriter, QuotesJsonStrings) {
  EXPECT_EQ(trace::quoted("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
}

}  // namespace
