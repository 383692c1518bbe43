// shardmm::environment: the one reader of shardmm's variables (include/shardmm/config.hpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "shardmm/config.hpp"
#include "shardmm/error.hpp"

namespace {

TEST(Environment, ListsEachVariableOnceWithItsUnsetMeaning) {
  std::set<std::string_view> seen;
  for (const auto& v : shardmm::environment_variables()) {
    EXPECT_EQ(v.name.substr(0, 8), "SHARDMM_") << v.name;
    EXPECT_FALSE(v.fallback.empty()) << v.name;
    EXPECT_TRUE(seen.insert(v.name).second) << v.name << " listed twice";
  }
  EXPECT_TRUE(seen.count("SHARDMM_TRACE"));
  EXPECT_TRUE(seen.count("SHARDMM_MEMORY_LIMIT"));
}

TEST(Environment, ReadsSetValuesAndTreatsEmptyAsUnset) {
  ASSERT_EQ(setenv("SHARDMM_VERBOSE", "1", 1), 0);
  EXPECT_EQ(shardmm::environment("SHARDMM_VERBOSE"), "1");
  ASSERT_EQ(setenv("SHARDMM_VERBOSE", "", 1), 0);
  EXPECT_FALSE(shardmm::environment("SHARDMM_VERBOSE").has_value());
  ASSERT_EQ(unsetenv("SHARDMM_VERBOSE"), 0);
  EXPECT_FALSE(shardmm::environment("SHARDMM_VERBOSE").has_value());
}

TEST(Environment, RejectsAnUnlistedName) {
  ASSERT_EQ(setenv("SHARDMM_NOT_A_KNOB", "1", 1), 0);  // set, yet not shardmm's
  EXPECT_THROW((void)shardmm::environment("SHARDMM_NOT_A_KNOB"), shardmm::InvalidArgument);
  EXPECT_THROW((void)shardmm::environment("HOME"), shardmm::InvalidArgument);
  ASSERT_EQ(unsetenv("SHARDMM_NOT_A_KNOB"), 0);
}

}  // namespace
