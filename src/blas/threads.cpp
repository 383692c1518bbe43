// BLAS thread control and the BLAS's name, for the BLAS the library's GEMMs run on: the loader
// says which library holds cblas_dgemm (dladdr), and OpenBLAS, BLIS and MKL are driven through
// their own entry points, declared weak here so that the library links against any BLAS. A
// process can hold two BLASes (ScaLAPACK loads the system's libblas.so.3, OpenBLAS on Debian,
// beside BLIS): only the one named by cblas_dgemm's library is asked. Another BLAS gets no
// thread control (its count reads as 1, setting it does nothing). No cblas.h here: each
// vendor's header declares these differently, or not at all.
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "blas/blas.hpp"

extern "C" {
// OpenBLAS
__attribute__((weak)) void openblas_set_num_threads(int);
__attribute__((weak)) int openblas_get_num_threads();
__attribute__((weak)) char* openblas_get_config();
// BLIS (dim_t is a 64-bit integer in BLIS's default configuration, Debian's included)
__attribute__((weak)) void bli_thread_set_num_threads(std::int64_t);
__attribute__((weak)) std::int64_t bli_thread_get_num_threads();
__attribute__((weak)) const char* bli_info_get_version_str();
// Intel MKL
__attribute__((weak)) void MKL_Set_Num_Threads(int);
__attribute__((weak)) int MKL_Get_Max_Threads();
__attribute__((weak)) void MKL_Get_Version_String(char*, int);
}

namespace shardmm::blas {
namespace {

enum class Vendor { OpenBLAS, Blis, Mkl, Other };

// The file of the library holding cblas_dgemm, "" when the loader cannot say.
std::string kernel_library() {
  Dl_info info{};
  if (dladdr(kernel_address(), &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

Vendor vendor_of_kernel() {
  static const Vendor v = [] {
    const std::string lib = kernel_library();
    if (lib.find("openblas") != std::string::npos && openblas_get_num_threads != nullptr)
      return Vendor::OpenBLAS;
    if (lib.find("blis") != std::string::npos && bli_thread_get_num_threads != nullptr)
      return Vendor::Blis;
    if (lib.find("mkl") != std::string::npos && MKL_Get_Max_Threads != nullptr) return Vendor::Mkl;
    return Vendor::Other;
  }();
  return v;
}

}  // namespace

int num_threads() {
  switch (vendor_of_kernel()) {
    case Vendor::OpenBLAS: return openblas_get_num_threads();
    case Vendor::Blis:  // -1: never set, BLIS then runs one thread
      return std::max(1, static_cast<int>(bli_thread_get_num_threads()));
    case Vendor::Mkl: return MKL_Get_Max_Threads();
    case Vendor::Other: break;
  }
  return 1;
}

void set_num_threads(int n) {
  switch (vendor_of_kernel()) {
    case Vendor::OpenBLAS: openblas_set_num_threads(n); break;
    case Vendor::Blis: bli_thread_set_num_threads(n); break;
    case Vendor::Mkl: MKL_Set_Num_Threads(n); break;
    case Vendor::Other: break;
  }
}

std::string vendor() {
  switch (vendor_of_kernel()) {
    case Vendor::OpenBLAS: return openblas_get_config();
    case Vendor::Blis: return std::string("BLIS ") + bli_info_get_version_str();
    case Vendor::Mkl: {
      char buf[256] = {};
      MKL_Get_Version_String(buf, sizeof buf);
      return buf;
    }
    case Vendor::Other: break;
  }
  const std::string lib = kernel_library();
  return "unknown BLAS (" + (lib.empty() ? std::string("?") : lib) + "; no thread control)";
}

}  // namespace shardmm::blas
