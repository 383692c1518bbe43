// Helpers shared by the algorithms.
#include <mpi.h>

#include "algo/algo.hpp"

namespace shardmm::algo {

Layout stored_layout(Op op, const MeshShape& mesh, index_t rows, index_t cols,
                     const ShardingSpec& spec) {
  if (op == Op::N) return Layout(mesh, rows, cols, spec);
  ShardingSpec t = spec;
  std::swap(t.dims[0], t.dims[1]);
  return Layout(mesh, cols, rows, t);
}

double now() { return MPI_Wtime(); }

}  // namespace shardmm::algo
