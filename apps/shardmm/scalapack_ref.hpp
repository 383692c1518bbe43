// The reference we compare against: Debian's ScaLAPACK p?gemm on the same block-cyclic data.
#pragma once

#include <mpi.h>

#include "shardmm/shardmm.hpp"

namespace shardmm::cli {

/// A row-major BLACS grid over `comm` (p x q), released on destruction.
class BlacsGrid {
 public:
  BlacsGrid(MPI_Comm comm, int p, int q);
  ~BlacsGrid();
  BlacsGrid(const BlacsGrid&) = delete;
  BlacsGrid& operator=(const BlacsGrid&) = delete;
  BlacsGrid(BlacsGrid&&) = delete;
  BlacsGrid& operator=(BlacsGrid&&) = delete;
  [[nodiscard]] int context() const { return ctxt_; }

 private:
  int handle_ = -1, ctxt_ = -1;
};

/// True when ScaLAPACK can use X's local array as is: 2D block-cyclic over a row-major 2-axis
/// mesh (the BLACS grid's order).
bool scalapack_compatible(const Layout& L);

/// C <- alpha op(A) op(B) + beta C with p?gemm_ on the operands' local arrays (in place).
template <Scalar T>
void scalapack_gemm(const BlacsGrid& grid, Op opA, Op opB, T alpha, const DistMatrix<T>& A,
                    const DistMatrix<T>& B, T beta, DistMatrix<T>& C);

}  // namespace shardmm::cli
