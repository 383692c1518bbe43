#include "mpi/mpi_test_util.hpp"
