// Process-wide resources the library uses outside any one call: OpenBLAS's thread count and
// the memory its large buffers (matrix tiles, work buffers) come from.
#pragma once

#include <cstddef>

namespace shardmm {

/// Threads OpenBLAS runs this process's local GEMMs with (gemm sets it from
/// Options::blas_threads when that is positive and reports it in GemmReport::blas_threads).
[[nodiscard]] int blas_threads();

/// Sets OpenBLAS's thread count for this process, as Options::blas_threads does for one call
/// and the calls after it. Throws InvalidArgument when n < 1.
void set_blas_threads(int n);

/// At least `bytes` of uninitialised memory placed like DistMatrix's owned tiles: from 2 MiB
/// up 2 MiB-aligned and marked for transparent huge pages, below that 64-byte aligned. For an
/// application's own large operands of local BLAS calls, so they get the memory the library's
/// buffers get. Release with std::free. Throws OutOfMemory.
[[nodiscard]] void* allocate_buffer(std::size_t bytes);

}  // namespace shardmm
