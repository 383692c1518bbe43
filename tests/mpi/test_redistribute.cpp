#include "mpi/mpi_test_util.hpp"
TEST(Placeholder, Empty) {}
