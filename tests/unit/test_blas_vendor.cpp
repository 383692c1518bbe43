// The BLAS the library runs on is the one the build configured (SHARDMM_TEST_BLAS_VENDOR:
// BLA_VENDOR, e.g. OpenBLAS or FLAME = BLIS), it names itself, and its thread count is under
// shardmm's control (OpenBLAS, BLIS and MKL; threads.cpp).
#include <gtest/gtest.h>

#include <string>

#include "shardmm/error.hpp"
#include "shardmm/runtime.hpp"

#if SHARDMM_TEST_WITH_SCALAPACK
extern "C" int numroc_(const int* n, const int* nb, const int* iproc, const int* isrcproc,
                       const int* nprocs);
#endif

namespace {

// What blas_vendor() starts with for the BLAS the build was configured with.
std::string expected_name() {
  const std::string v = SHARDMM_TEST_BLAS_VENDOR;
  if (v == "OpenBLAS") return "OpenBLAS";
  if (v == "FLAME") return "BLIS";
  if (v.rfind("Intel", 0) == 0) return "Intel";
  return "";  // another vendor: no claim
}

TEST(BlasVendor, IsTheConfiguredOne) {
  const std::string name = shardmm::blas_vendor();
  EXPECT_FALSE(name.empty());
  const std::string want = expected_name();
  if (!want.empty()) {
    EXPECT_NE(name.find(want), std::string::npos) << name << " for " << SHARDMM_TEST_BLAS_VENDOR;
  }
}

#if SHARDMM_TEST_WITH_SCALAPACK
// ScaLAPACK is loaded (a call keeps it among the program's libraries), and with it the
// system's BLAS: the vendor named is still the configured one (the previous test).
TEST(BlasVendor, ScalapackIsLoadedBeside) {
  const int n = 10, nb = 3, me = 0, src = 0, procs = 2;
  EXPECT_EQ(numroc_(&n, &nb, &me, &src, &procs), 6);  // blocks 0 and 2, and the last row
}
#endif

TEST(BlasVendor, ThreadCountIsControlled) {
  if (expected_name().empty()) {
    GTEST_SKIP() << "no thread control claimed for " << SHARDMM_TEST_BLAS_VENDOR;
  }
  const int before = shardmm::blas_threads();
  shardmm::set_blas_threads(2);
  EXPECT_EQ(shardmm::blas_threads(), 2);
  shardmm::set_blas_threads(1);
  EXPECT_EQ(shardmm::blas_threads(), 1);
  shardmm::set_blas_threads(before);
  EXPECT_THROW(shardmm::set_blas_threads(0), shardmm::InvalidArgument);
}

}  // namespace
