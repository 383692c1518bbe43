// Helpers of the launcher's tests (test_multiply.cpp, test_plan_bench_calibrate.cpp).
#pragma once

#include <gtest/gtest.h>

#include <exception>

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

}  // namespace shardmm::testing
