// include/shardmm/runtime.hpp: the public face of the local kernel and BLAS thread control
// (src/blas/) and of the workspace's allocator (src/memory/).
#include "shardmm/runtime.hpp"

#include <string>

#include "blas/blas.hpp"
#include "comm/traffic.hpp"
#include "core/instantiate.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"

namespace shardmm {

int blas_threads() { return blas::num_threads(); }

std::string blas_vendor() { return blas::vendor(); }

void set_blas_threads(int n) {
  if (n < 1)
    throw InvalidArgument("BLAS thread count must be at least 1, not " + std::to_string(n));
  blas::set_num_threads(n);
}

void* allocate_buffer(std::size_t bytes) { return memory::allocate(bytes).ptr; }

std::int64_t bytes_received_total() { return comm::traffic().bytes_received; }

template <Scalar T>
void local_gemm(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, const T* A, index_t lda,
                const T* B, index_t ldb, T beta, T* C, index_t ldc) {
  blas::gemm(opA, opB, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

#define SHARDMM_INSTANTIATE(T)                                                                   \
  template void local_gemm<T>(Op, Op, index_t, index_t, index_t, T, const T*, index_t, const T*, \
                              index_t, T, T*, index_t);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm
