// Layout helpers the algorithms share: the stored layout of op(X), axis names, the clock.
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

std::vector<std::string> axis_names(const MeshShape& mesh, const std::vector<int>& axes) {
  std::vector<std::string> out;
  out.reserve(axes.size());
  for (int a : axes) out.push_back(mesh.names[a]);
  return out;
}

}  // namespace shardmm::algo
