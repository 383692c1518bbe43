// Temporary distributed matrices whose tiles live in the workspace pool: a repeated gemm
// reuses the same pages instead of allocating (and first-touching, ~14 us per 4 KiB page on
// these VMs) a fresh copy of an operand on every call.
#pragma once

#include <algorithm>
#include <vector>

#include "memory/workspace.hpp"
#include "shardmm/dist_matrix.hpp"

namespace shardmm::matrix {

/// A view over workspace slot `slot` holding this rank's tile of `layout` (ld = local rows).
/// The contents are NOT initialised; valid until the slot's next memory::get. Rank-local: the
/// allocation may throw, so call it where failures are agreed.
template <Scalar T>
DistMatrix<T> pooled(const Mesh& mesh, const Layout& layout, memory::Slot slot) {
  const std::vector<int> none(static_cast<std::size_t>(layout.mesh().ndims()), 0);
  const auto& c = mesh.active() ? mesh.coords() : none;
  const index_t rows = mesh.active() ? layout.local_rows(c) : 0;
  const index_t cols = mesh.active() ? layout.local_cols(c) : 0;
  const index_t ld = std::max<index_t>(rows, 1);
  return DistMatrix<T>::view(mesh, layout, memory::get<T>(slot, ld * cols), ld);
}

}  // namespace shardmm::matrix
