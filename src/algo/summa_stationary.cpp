// SUMMA, A- and B-stationary variants (Elemental's SUMMA_NNA / SUMMA_NNB), on the same p x q
// grid and layouts as the C-stationary SUMMA (summa.cpp).
//
// A-stationary (wins when n is small next to m and k):
//   1. B moves: one redistribution (alltoallv on the mesh) to [K over Q with A's k map, J
//      replicated], so rank (r, q) holds op(B)[k rows of its A tile, all n columns].
//   2. D = alpha * op(A_loc) * op(B_loc): an m_loc x n partial sum over the process row.
//   3. A reduce-scatter along the process row (axis_comm(Q); comm::reduce_scatter, a ring of
//      isend/irecv on workspace buffers): process column c receives the sum of the columns of
//      D it owns in C's column map; C_loc = that + beta * C_loc.
//   Words per rank: B's k_q x n slice (less what it held) + (q-1) x its C tile.
// B-stationary is the mirror image: A moves to [I replicated, K over R with B's k map], the
// m x n_loc partial is reduce-scattered along the process column onto C's row map.
// No overlap: the phases depend on each other.
#include <algorithm>
#include <optional>

#include "algo/algo.hpp"
#include "algo/pack.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "comm/wire.hpp"
#include "core/instantiate.hpp"
#include "matrix/pooled.hpp"
#include "memory/workspace.hpp"
#include "shardmm/redistribute.hpp"

namespace shardmm::algo {
namespace {

// The moving operand M redistributed so its k dim follows the stationary operand's k map,
// into workspace slot Aligned (allocated on every rank before anything moves).
template <Scalar T>
DistMatrix<T> align_k(const DistMatrix<T>& M, int km, const Layout& S, int ks) {
  ShardingSpec spec;
  spec.dims[km] = S.spec().dims[ks];
  spec.dims[km].label = "K";
  spec.dims[1 - km] = DimSpec{km == 0 ? "J" : "I", DimSpec::Kind::Replicated, {}, 0, 0};
  const Layout L(M.layout().mesh(), M.rows(), M.cols(), spec);
  std::optional<DistMatrix<T>> out;
  prologue(M.mesh().comm(),
           [&] { out.emplace(matrix::pooled<T>(M.mesh(), L, memory::Slot::Realigned)); });
  {
    const comm::OperandMoves operand;  // M is A or B: it may travel in a 16-bit wire format
    redistribute(M, *out);
  }
  return std::move(*out);
}

// Elements of D (rows x cols) each coordinate along `dim` of C's map owns.
std::vector<std::int64_t> owner_counts(index_t rows, index_t cols, const DimMap& map, int dim) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(map.nprocs));
  for (int c = 0; c < map.nprocs; ++c) counts[c] = map.local_extent(c) * (dim == 1 ? rows : cols);
  return counts;
}

// Packs D (rows x cols, ld = rows) by destination coordinate along `dim` of C's map into
// `out`: the pieces come out in destination order, each in C's local column-major order.
template <Scalar T>
void pack_by_owner(const T* D, index_t rows, index_t cols, const DimMap& map, int dim, T* out) {
  for (int c = 0; c < map.nprocs; ++c) {
    const Runs ranges = map.owned_ranges(c);
    out = dim == 1 ? pack_col_runs(D, rows, ranges, rows, out)
                   : pack_row_runs(D, rows, ranges, cols, out);
  }
}

}  // namespace

template <Scalar T>
void summa_stationary_run(const Operands<T>& x, const Setup& setup, Timers& t) {
  const bool a_stays = setup.stationary == Stationary::A;
  const Mesh& mesh = x.C.mesh();
  const DistMatrix<T>& S = a_stays ? x.A : x.B;
  const int ks = stored_dim(a_stays ? x.opA : x.opB, a_stays ? 1 : 0);
  const int km = stored_dim(a_stays ? x.opB : x.opA, a_stays ? 0 : 1);
  const DistMatrix<T> M = t.timed(&Timers::comm, "align", -1,
                                  [&] { return align_k(a_stays ? x.B : x.A, km, S.layout(), ks); });

  // D = alpha * op(A) * op(B) on the local pieces: m_loc x n (A stays) or m x n_loc (B stays).
  const DistMatrix<T>& A = a_stays ? x.A : M;
  const DistMatrix<T>& B = a_stays ? M : x.B;
  const index_t rows = a_stays ? x.C.local_rows() : x.C.rows();
  const index_t cols = a_stays ? x.C.cols() : x.C.local_cols();
  const index_t kl = a_stays ? (x.opA == Op::N ? A.local_cols() : A.local_rows())
                             : (x.opB == Op::N ? B.local_rows() : B.local_cols());
  const int dim = a_stays ? 1 : 0;  // the dimension D spans in full
  const std::vector<std::int64_t> counts = owner_counts(rows, cols, x.C.layout().map(dim), dim);
  T *D = nullptr, *send = nullptr, *mine = nullptr;  // partial sums, packed by owner, my block
  prologue(mesh.comm(), [&] {
    D = memory::get<T>(memory::Slot::Partial, rows * cols);
    send = memory::get<T>(memory::Slot::Pack, rows * cols);
    mine = memory::get<T>(memory::Slot::Unpack, x.C.local_rows() * x.C.local_cols());
    comm::reserve_reduce_scatter<T>(*std::max_element(counts.begin(), counts.end()));
  });
  t.timed(&Timers::gemm, "gemm", -1, [&] {
    blas::gemm(x.opA, x.opB, rows, cols, kl, x.alpha, A.data(), A.ld(), B.data(), B.ld(), T(0), D,
               std::max<index_t>(rows, 1));
  });

  // Reduce-scatter the partial sums onto C's map along the dimension D spans in full.
  t.timed(&Timers::comm, "reduce", -1, [&] {
    pack_by_owner(D, rows, cols, x.C.layout().map(dim), dim, send);
    const MPI_Comm comm = mesh.axis_comm(axis_names(mesh.shape(), x.C.layout().dim_axes(dim)));
    comm::reduce_scatter(send, mine, counts, comm);
  });
  t.timed(nullptr, "update", -1, [&] {  // in the trace only: no counter holds this interval
    blas::scale(x.C.local_rows(), x.C.local_cols(), x.beta, x.C.data(), x.C.ld());
    add_block(mine, x.C.local_rows(), x.C.local_rows(), x.C.local_cols(), x.C.data(), x.C.ld());
  });
}

#define SHARDMM_INSTANTIATE(T) \
  template void summa_stationary_run<T>(const Operands<T>&, const Setup&, Timers&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
