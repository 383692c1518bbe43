// The local kernel: typed wrappers over the BLAS the build found (OpenBLAS by default). blas.cpp
// is the only place that includes cblas.h; threads.cpp the only one that knows BLAS vendors.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "shardmm/types.hpp"

namespace shardmm::blas {

/// C <- alpha * op(A) * op(B) + beta * C, column-major. A is stored m x k (op N) or k x m.
/// beta == 0 never reads C (BLAS semantics). Zero sizes are handled (no call).
template <Scalar T>
void gemm(Op opA, Op opB, index_t m, index_t n, index_t k, T alpha, const T* A, index_t lda,
          const T* B, index_t ldb, T beta, T* C, index_t ldc);

/// B (m x n) <- op(A)^-1 B (left) or B op(A)^-1 (right), A triangular (lower or upper; `unit`:
/// its diagonal is taken as ones and not read), column-major; one BLAS ?trsm. Zero sizes: no
/// call.
template <Scalar T>
void trsm(bool left, bool lower, Op opA, bool unit, index_t m, index_t n, const T* A, index_t lda,
          T* B, index_t ldb);

/// B (m x n) <- op(A) B (left) or B op(A) (right), A triangular as for trsm; one BLAS ?trmm.
template <Scalar T>
void trmm(bool left, bool lower, Op opA, bool unit, index_t m, index_t n, const T* A, index_t lda,
          T* B, index_t ldb);

/// C <- beta * C on an m x n column-major block (beta == 0 writes zeros without reading).
template <Scalar T>
void scale(index_t m, index_t n, T beta, T* C, index_t ldc);

/// Messages in flight while this thread multiplies. Open MPI moves a large message (TCP, and
/// shared memory's rendezvous) only inside MPI calls, a few fragments per call, so one GEMM of
/// seconds with no MPI call in it holds the very transfers it was meant to hide. While a
/// Progress is open, gemm() runs in blocks of C's columns (or rows, when C is taller than wide)
/// of about blocking().flops each and calls `poll` between blocks until it returns true (all
/// arrived); the rest then goes in one call. Scopes nest (the innermost polls); the blocks
/// change no element's arithmetic (each is the same dot products over the same k). A scope
/// made with on = false (nothing overlaps, or nothing crosses a network: algo::polls) does
/// nothing.
class Progress {
 public:
  explicit Progress(std::function<bool()> poll, bool on = true);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  Progress(Progress&&) = delete;
  Progress& operator=(Progress&&) = delete;
  /// Polls once (unless everything has arrived or the scope is off); true when everything has
  /// arrived.
  bool poll();
  /// The open scope of this thread, or nullptr.
  static Progress* current();

 private:
  std::function<bool()> poll_;
  Progress* outer_;
  bool on_, done_ = false;
};

/// Flops (real multiply-adds x 2) of one block of a GEMM run under a Progress, and the
/// narrowest block (columns or rows) it is cut into: by default 2^26 (about 7 ms of one core)
/// and 128 (narrower blocks would slow OpenBLAS). `on_node`: the algorithms poll on one node
/// too (algo::polls; by default only where messages cross a network). set_blocking changes
/// them (tests: small products in blocks, on one machine).
struct Blocking {
  std::int64_t flops = std::int64_t{1} << 26;
  index_t min_width = 128;
  bool on_node = false;
};
Blocking blocking();
void set_blocking(Blocking b);

/// Polls made by Progress scopes on this thread so far (tests check that a run polled).
std::int64_t progress_polls();

/// Threads the BLAS runs a local GEMM with (OpenBLAS, BLIS and MKL; 1 for a BLAS without
/// thread control); set explicitly by the library and reported (threads.cpp).
int num_threads();
/// Sets them (OpenBLAS, BLIS, MKL; nothing for another BLAS).
void set_num_threads(int n);
/// Where the library's cblas_dgemm is (threads.cpp asks the loader which library that is: the
/// BLAS the GEMMs run on, whatever other BLAS a dependency such as ScaLAPACK loads beside it).
const void* kernel_address();

/// The BLAS's own name and version (OpenBLAS's configuration string, "BLIS 0.9.0", MKL's
/// version string), or "unknown BLAS (no thread control)".
std::string vendor();

}  // namespace shardmm::blas
