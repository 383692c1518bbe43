// SHARDMM_FAULT_INJECT syntax: phase@rank[:kind], comma-separated; malformed specs rejected.
#include <gtest/gtest.h>

#include "core/fault.hpp"
#include "shardmm/error.hpp"

using shardmm::fault::selects;

TEST(FaultSpec, SelectsPhaseAndRank) {
  std::string kind;
  EXPECT_TRUE(selects("plan@1", "plan", 1, kind));
  EXPECT_EQ(kind, "alloc");
  EXPECT_FALSE(selects("plan@1", "plan", 0, kind));
  EXPECT_FALSE(selects("plan@1", "multiply", 1, kind));
  EXPECT_TRUE(selects("read@*:io", "read", 7, kind));
  EXPECT_EQ(kind, "io");
  EXPECT_TRUE(selects("write@0:error,multiply@3", "multiply", 3, kind));
  EXPECT_EQ(kind, "alloc");
  EXPECT_FALSE(selects("", "plan", 0, kind));
  EXPECT_TRUE(selects("ooc-write@*:io", "ooc-write", 2, kind));  // a streamed product's writes
  EXPECT_TRUE(selects("direct-write@0", "direct-write", 0, kind));
  EXPECT_FALSE(selects("direct-write@0", "ooc-write", 0, kind));
}

TEST(FaultSpec, MalformedSpecsAreRejected) {
  std::string kind;
  for (const char* bad :
       {"plan", "plan@", "plan@x", "plan@-1", "bogus@0", "plan@0:oops", "plan@1,", "plan@1,read"})
    EXPECT_THROW(selects(bad, "plan", 0, kind), shardmm::InvalidArgument) << bad;
}
