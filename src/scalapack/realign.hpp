// Copies between a submatrix that does not start on a block boundary (its first block is
// partial, which a DimMap cannot describe) and a DistMatrix in sub_layout(): one exchange.
#pragma once

#include "scalapack/descriptor.hpp"
#include "shardmm/dist_matrix.hpp"

namespace shardmm::scalapack {

/// dst <- sub(X), where `data` is the caller's local array of X (leading dimension s.lld) and
/// dst has sub(X)'s shape on the grid mesh, with the same replicated dimensions. Collective.
template <Scalar T>
void copy_in(const SubMatrix& s, const T* data, DistMatrix<T>& dst);

/// sub(X) <- src: the inverse of copy_in. Writes no element of X outside sub(X). Collective.
template <Scalar T>
void copy_out(const DistMatrix<T>& src, const SubMatrix& s, T* data);

}  // namespace shardmm::scalapack
