// Steps of the sharding-rule matmul (sharded.cpp): all-gather of one dimension, the local
// multiply with k slicing, and the words of the final reduction (reduce_partials.hpp).
#pragma once

#include <vector>

#include "memory/workspace.hpp"
#include "shardmm/dist_matrix.hpp"

namespace shardmm::algo::sharded {

using Axes = std::vector<int>;

bool intersects(const Axes& a, const Axes& b);

/// X with dimension `dim` replicated: MPI_Allgatherv over axis_comm(that dimension's axes).
template <Scalar T>
DistMatrix<T> allgather_dim(const DistMatrix<T>& X, int dim, memory::Slot slot);

/// Words per rank of reducing C_part = [I, J]{U_K} into C (0 if C keeps it unreduced).
double reduce_words(const Layout& C, index_t m, index_t n, const Axes& I, const Axes& J,
                    const Axes& K);

/// Layout of the local products: [rows of op(A), cols of op(B)]{U_K}, K = the k sharding
/// (A's, or B's when only B is sharded on k).
template <Scalar T>
Layout product_layout(const DistMatrix<T>& A, Op opA, const DistMatrix<T>& B, Op opB,
                      const MeshShape& mesh);

/// C_loc = alpha * op(A_loc) * op(B_loc) + beta * C_loc, slicing the k-replicated operand to
/// the other's local k range.
template <Scalar T>
void local_multiply(Op opA, Op opB, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
                    DistMatrix<T>& C);

}  // namespace shardmm::algo::sharded
