// include/shardmm/runtime.hpp: the public face of the BLAS thread control (src/blas/) and the
// workspace's allocator (src/memory/).
#include "shardmm/runtime.hpp"

#include <string>

#include "blas/blas.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"

namespace shardmm {

int blas_threads() { return blas::num_threads(); }

void set_blas_threads(int n) {
  if (n < 1) throw InvalidArgument("BLAS thread count must be at least 1, not " + std::to_string(n));
  blas::set_num_threads(n);
}

void* allocate_buffer(std::size_t bytes) { return memory::allocate(bytes).ptr; }

}  // namespace shardmm
