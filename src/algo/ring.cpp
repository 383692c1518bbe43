// 1D ring ("collective matmul", Wang et al. ASPLOS'23) over one mesh axis X of size p: the
// dispatch (ring_run). Other mesh axes replicate: every slice along them runs the same ring.
// Everything moves on axis_comm(X) with MPI_Isend/Irecv, overlapped with the local GEMMs.
//
// AllGatherA    op(A) = [I_X, K], op(B) = [K, J_X] -> C = [I, J_X]
//   A's row blocks travel left around the ring; at step s rank r holds block (r+s) mod p and
//   computes C_loc[rows of that block, :] while the next block is in flight.
//   Words received per rank: all of A except its own block.
// AllGatherB    op(A) = [I_X, K], op(B) = [K, J_X] -> C = [I_X, J]
//   The same with B's column blocks; C_loc[:, cols of block (r+s) mod p].
// ReduceScatter op(A) = [I, K_X], op(B) = [K_X, J] -> C = [I_X, J] (or [I, J_X])
//   Partial sums travel: at step s rank r computes alpha * A[rows of block (r+1+s), k_r] *
//   B[k_r, :], adds the accumulator received from r+1 and passes it to r-1; after p steps
//   rank r holds block r complete. Words received per rank: (p-1) blocks of C rows. With C
//   split by columns the same runs on op(B)'s column blocks.
// Where each part is (ring.hpp): the layouts in ring_setup.cpp, the AllGather forms at p > 2
// in ring_allgather.cpp (circulate), at p = 2 in ring_swap.cpp (k-chunked swaps), the
// ReduceScatter form in ring_reduce_scatter.cpp.
#include "algo/ring.hpp"

#include "core/instantiate.hpp"

namespace shardmm::algo {

template <Scalar T>
void ring_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t) {
  using ring_detail::circulate, ring_detail::reduce_scatter_ring, ring_detail::swap_tiles;
  using ring_detail::Ring, ring_detail::TileGemm;
  const Mesh& mesh = x.C.mesh();
  const RingSetup& own = setup.as<RingSetup>();
  const Ring ring{mesh.axis_comm(own.axis), mesh.axis_size(own.axis), mesh.coord(own.axis)};
  const index_t k = x.opA == Op::N ? x.A.cols() : x.A.rows();
  if (own.form == RingForm::ReduceScatter) return reduce_scatter_ring(ring, x, o, t);
  // AG-A circulates op(A)'s row tiles, AG-B op(B)'s column tiles; p = 2 swaps them in
  // k-chunks (Options::ring_chunk wide, else ring_chunk_width from global extents).
  const bool ag_a = own.form == RingForm::AllGatherA;
  const DistMatrix<T>& X = ag_a ? x.A : x.B;
  const bool k_col = ag_a ? x.opA == Op::N : x.opB != Op::N;
  const DimMap& map = X.layout().map(k_col ? 0 : 1);  // op(X)'s split dimension
  const TileGemm<T> g{x, ag_a};
  // p = 2 puts beta into its first chunk's GEMMs (one pass over C fewer); at p > 2 each
  // stream adds its k-range's contribution, so C is scaled by beta once up front.
  if (ring.p == 2) return swap_tiles(ring, X, k_col, map, k, g, own.stream, o, t);
  blas::scale(x.C.local_rows(), x.C.local_cols(), x.beta, x.C.data(), x.C.ld());
  circulate(ring, X, k_col, map, k, g, o, t);
}

SHARDMM_INSTANTIATE_RUN(ring_run)

}  // namespace shardmm::algo
