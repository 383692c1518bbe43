/* CHECK(cond, ...) for the C API's tests: a false cond counts one failure in g_failures and
 * prints it (the rank g_rank, the condition, a printf message, shardmm_last_error()). The
 * including file defines `int g_failures, g_rank`. */
#ifndef SHARDMM_TESTS_C_CHECK_H
#define SHARDMM_TESTS_C_CHECK_H

#include <stdio.h>

#include "shardmm/c/shardmm.h"

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ++g_failures;                                                            \
      printf("[rank %d] FAIL %s:%d: %s: ", g_rank, __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                                     \
      printf(" (last error: '%s')\n", shardmm_last_error());                   \
    }                                                                          \
  } while (0)

#endif /* SHARDMM_TESTS_C_CHECK_H */
