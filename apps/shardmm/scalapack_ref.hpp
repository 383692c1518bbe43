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

/// A ScaLAPACK descriptor of a local array in layout L (leading dimension ld) on BLACS context
/// ctxt: type 1, or type 2 when a first block has another size (d[0] says which). Throws
/// InvalidArgument for a layout ScaLAPACK cannot use (scalapack_compatible). Only in a build
/// with ScaLAPACK.
struct ScalapackDesc {
  int d[11];
};
ScalapackDesc scalapack_desc(const Layout& L, index_t ld, int ctxt);

/// C <- alpha op(A) op(B) + beta C with p?gemm_ on the operands' local arrays (in place).
template <Scalar T>
void scalapack_gemm(const BlacsGrid& grid, Op opA, Op opB, T alpha, const DistMatrix<T>& A,
                    const DistMatrix<T>& B, T beta, DistMatrix<T>& C);

struct Blas3Op;

/// out <- ScaLAPACK's p?<op>_ (blas3_op.hpp: out is C, or B for trmm / trsm) on the operands'
/// local arrays in place; B only for symm, hemm, syr2k and her2k (else null). herk's alpha and
/// her2k's and herk's beta are passed as their real parts.
template <Scalar T>
void scalapack_blas3(const BlacsGrid& grid, const Blas3Op& op, T alpha, const DistMatrix<T>& A,
                     const DistMatrix<T>* B, T beta, DistMatrix<T>& out);

}  // namespace shardmm::cli
