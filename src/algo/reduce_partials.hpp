// The reduction step of partial sums ({U_...} layouts) of 2.5D (the sharding rules fuse theirs:
// sharded_reduce.hpp).
#pragma once

#include <vector>

#include "shardmm/dist_matrix.hpp"

namespace shardmm::algo {

/// Product of the sizes of these mesh axes.
int group_size(const MeshShape& mesh, const std::vector<int>& axes);

/// C = P + beta * C where P may hold partial sums: ReduceScatter over P's unreduced axes when
/// C's sharding nests in P's plus those axes, else AllReduce (if C needs the sum) and
/// redistribute. Collective over C's mesh.
template <Scalar T>
void reduce_partials(DistMatrix<T>& P, T beta, DistMatrix<T>& C);

}  // namespace shardmm::algo
