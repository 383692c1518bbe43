// Redistribution: any layout to any layout on the same communicator, one exchange round.
#pragma once

#include "shardmm/dist_matrix.hpp"

namespace shardmm {

/// What one redistribution moved on this rank (local copies are not counted as sent).
struct RedistStats {
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
  std::int64_t messages_sent = 0;  ///< peers this rank sent a non-empty piece to
  std::int64_t elements_copied_locally = 0;
};

/// dst <- alpha * src + beta * dst, where src and dst may have any layouts (and meshes of any
/// shape) over the same communicator. Unreduced source axes are summed; replicated
/// destinations receive a copy on every replica. beta == 0 never reads dst. Collective.
template <Scalar T>
RedistStats redistribute(const DistMatrix<T>& src, DistMatrix<T>& dst, T alpha = T(1),
                         T beta = T(0));

/// Convenience: a new owning matrix with `layout` on src's mesh.
template <Scalar T>
DistMatrix<T> redistribute(const DistMatrix<T>& src, const Layout& layout,
                           RedistStats* stats = nullptr);

}  // namespace shardmm
