// Process-wide resources the library uses outside any one call: the BLAS's thread count, the
// memory its large buffers (matrix tiles, work buffers) come from, and its local kernel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "shardmm/types.hpp"

namespace shardmm {

/// Threads the BLAS runs this process's local GEMMs with (gemm sets it from
/// Options::blas_threads when that is positive and reports it in GemmReport::blas_threads).
/// OpenBLAS, BLIS and MKL are known; another BLAS reads as 1.
[[nodiscard]] int blas_threads();

/// Sets the BLAS's thread count for this process (OpenBLAS, BLIS, MKL; another BLAS keeps its
/// own), as Options::blas_threads does for one call and the calls after it. Throws
/// InvalidArgument when n < 1.
void set_blas_threads(int n);

/// The BLAS the library runs on, by its own account: OpenBLAS's configuration string (e.g.
/// "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64"), "BLIS 0.9.0", MKL's
/// version string, or "unknown BLAS (no thread control)".
[[nodiscard]] std::string blas_vendor();

/// At least `bytes` of uninitialised memory placed like DistMatrix's owned tiles: from 2 MiB
/// up 2 MiB-aligned and marked for transparent huge pages, below that 64-byte aligned. For an
/// application's own large operands of local BLAS calls, so they get the memory the library's
/// buffers get. Release with std::free. Throws OutOfMemory.
[[nodiscard]] void* allocate_buffer(std::size_t bytes);

/// Bytes this process has received from other ranks through the library's communication since
/// it started: every call (gemm, the PBLAS level-3 family, redistributions), counted as the
/// logical data flow of each transfer (docs/ALGORITHMS.md). Never reset: take differences
/// around a call to see what it moved here (GemmReport has gemm's own).
[[nodiscard]] std::int64_t bytes_received_total();

/// The local kernel every algorithm's inner step calls, on one rank's column-major buffers:
/// C <- alpha * op(A) * op(B) + beta * C through OpenBLAS, A stored m x k (op N) or k x m.
/// Zero m or n: nothing; zero k or alpha: C <- beta * C (beta == 0 never reads C). For an
/// application's own local products (the launcher times one core with it).
template <Scalar T>
void local_gemm(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, const T* A, index_t lda,
                const T* B, index_t ldb, T beta, T* C, index_t ldc);

}  // namespace shardmm
