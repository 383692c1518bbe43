// BLAS thread control and the BLAS's name, for whichever BLAS the process runs: OpenBLAS,
// BLIS and MKL are recognised by their own entry points, declared weak here so that the
// library links against any BLAS; another BLAS gets no thread control (its count reads as 1,
// setting it does nothing) and is named "unknown BLAS". No cblas.h here: each vendor's header
// declares these differently, or not at all.
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

int num_threads() {
  if (openblas_get_num_threads != nullptr) return openblas_get_num_threads();
  if (bli_thread_get_num_threads != nullptr)  // -1: never set, BLIS then runs one thread
    return std::max(1, static_cast<int>(bli_thread_get_num_threads()));
  if (MKL_Get_Max_Threads != nullptr) return MKL_Get_Max_Threads();
  return 1;
}

void set_num_threads(int n) {
  if (openblas_set_num_threads != nullptr) openblas_set_num_threads(n);
  else if (bli_thread_set_num_threads != nullptr) bli_thread_set_num_threads(n);
  else if (MKL_Set_Num_Threads != nullptr) MKL_Set_Num_Threads(n);
}

std::string vendor() {
  if (openblas_get_config != nullptr) return openblas_get_config();
  if (bli_info_get_version_str != nullptr) return std::string("BLIS ") + bli_info_get_version_str();
  if (MKL_Get_Version_String != nullptr) {
    char buf[256] = {};
    MKL_Get_Version_String(buf, sizeof buf);
    return buf;
  }
  return "unknown BLAS (no thread control)";
}

}  // namespace shardmm::blas
