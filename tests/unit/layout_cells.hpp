// Every coordinate tuple of a mesh, for the Layout unit tests (test_layout*.cpp).
#pragma once

#include <vector>

#include "shardmm/layout.hpp"

namespace shardmm::testing {

// Every coordinate tuple of a mesh (odometer, independent of MeshShape::coords_of).
inline std::vector<std::vector<int>> all_cells(const MeshShape& mesh) {
  std::vector<std::vector<int>> out;
  std::vector<int> c(mesh.sizes.size(), 0);
  for (;;) {
    out.push_back(c);
    std::size_t a = 0;
    while (a < c.size() && ++c[a] == mesh.sizes[a]) c[a++] = 0;
    if (a == c.size()) return out;
  }
}

}  // namespace shardmm::testing
