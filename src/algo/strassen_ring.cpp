// Strassen's line form (Algorithm::Strassen when C's rows are not split: a 1 x P grid or a
// line). C[I,J_S], op(A)[I,K_S] (k split over the same axes S, any block-cyclic map) and
// op(B)[K,J_S] (k whole). What moves, on axis_comm(S): every rank isends its op(A) piece
// (m x k_r, as stored) to every other rank up front; at step s it computes with the piece of
// rank (me + s) mod P while the next one arrives (received one step ahead into two
// alternating buffers, Panel0/1). Each step is one local Winograd product
//   C (+)= alpha op(A)[:, K_r] op(B)[K_r, :]     (beta on the first step only)
// with op(B)'s rows K_r (rank r's k indices) packed into Panel2 when they are not one run.
// Words received per rank: m k (1 - 1/P). Memory: the buffers (one at P = 2), the packed
// op(B) rows and the recursion's scratch (Partial) for the largest piece: at 8192^3 on 2 ranks
// 0.76 x the local A + B + C, against about 1.7 x for gathering op(A) whole.
#include <algorithm>
#include <cstring>

#include "algo/strassen.hpp"
#include "algo/strassen_winograd.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "core/winograd.hpp"

namespace shardmm::algo {
namespace {

constexpr int kTag = 27;

// op(B)'s rows K (global k ranges; B's k is whole, so global = local) as an k_r x n matrix
// (op N) or n x k_r (op T / C), at `pack` when they are not one run, else a view into B.
template <class T>
std::pair<const T*, index_t> rows_of(Op opB, const DistMatrix<T>& B, index_t n,
                                     const std::vector<std::pair<index_t, index_t>>& K, index_t kr,
                                     T* pack) {
  const index_t ldb = B.ld();
  if (K.size() <= 1) {
    const index_t first = K.empty() ? 0 : K[0].first;
    return {opB == Op::N ? B.data() + first : B.data() + first * ldb, ldb};
  }
  if (opB == Op::N) {
    for (index_t j = 0; j < n; ++j) {
      index_t at = 0;
      for (const auto& [b, e] : K) {
        std::memcpy(pack + j * kr + at, B.data() + j * ldb + b, sizeof(T) * std::size_t(e - b));
        at += e - b;
      }
    }
    return {pack, std::max<index_t>(kr, 1)};
  }
  index_t at = 0;
  for (const auto& [b, e] : K)
    for (index_t c = b; c < e; ++c, ++at)
      std::memcpy(pack + at * n, B.data() + c * ldb, sizeof(T) * std::size_t(n));
  return {pack, std::max<index_t>(n, 1)};
}

}  // namespace

template <Scalar T>
void strassen_ring_run(const Operands<T>& x, const Options& o, Timers& t) {
  const Mesh& mesh = x.C.mesh();
  const Layout& CL = x.C.layout();
  const MPI_Comm comm = mesh.axis_comm(axis_names(mesh.shape(), CL.dim_axes(1)));
  const int P = CL.col_map().nprocs, me = CL.dim_coord(1, mesh.coords());
  const DimMap& kmap = x.A.layout().map(stored_dim(x.opA, 1));
  const index_t m = x.C.local_rows(), n = x.C.local_cols(), crossover = strassen_crossover(o);
  index_t kmax = 0;
  for (int r = 0; r < P; ++r) kmax = std::max(kmax, kmap.local_extent(r));
  auto ld_of = [&](index_t kr) { return std::max<index_t>(x.opA == Op::N ? m : kr, 1); };
  const int L = winograd::levels(m, n, kmax, crossover);
  const index_t k_me = kmap.local_extent(me);
  const bool own_packed = x.A.ld() != ld_of(k_me);  // a view with a wider ld: send a copy
  // Two ranks with equal pieces: one product over both (strassen_pair.cpp).
  const int pair =
      P == 2 ? winograd::pair_levels(m, n, k_me, kmap.local_extent(1 - me), crossover) : 0;
  T *buf[2] = {nullptr, nullptr}, *pack = nullptr, *work = nullptr, *own = nullptr;
  prologue(mesh.comm(), [&] {
    for (int b = 0; b < std::min(P - 1, 2); ++b)
      buf[b] = memory::get<T>(b ? memory::Slot::Panel1 : memory::Slot::Panel0, m * kmax);
    if (!pair) pack = memory::get<T>(memory::Slot::Panel2, kmax * n);
    work = memory::get<T>(memory::Slot::Partial, pair ? winograd::pair_scratch(m, n, k_me, pair)
                                                      : winograd::scratch(m, n, kmax, L));
    own = own_packed ? memory::get<T>(memory::Slot::Panel3, m * k_me) : nullptr;
  });
  const index_t rows_me = x.opA == Op::N ? m : k_me, cols_me = x.opA == Op::N ? k_me : m;
  if (own_packed)
    for (index_t j = 0; j < cols_me; ++j)
      std::memcpy(own + j * rows_me, x.A.data() + j * x.A.ld(), sizeof(T) * std::size_t(rows_me));
  const T* mine = own_packed ? own : x.A.data();
  comm::Requests sent, recv[2];
  for (int r = 0; r < P; ++r)
    if (r != me) comm::isend(mine, m * k_me, r, kTag, comm, sent);
  auto piece_of = [&](int s) { return (me + s) % P; };
  if (pair) {  // the other piece arrives during the first of the top level's products
    comm::irecv(buf[0], m * k_me, 1 - me, kTag, comm, recv[0]);
    const PairPieces<T> pieces{mine, buf[0], k_me, kmap.owned_ranges(me),
                               kmap.owned_ranges(1 - me)};
    strassen_pair(
        x, pieces, pair, work, [&] { recv[0].wait(); }, t);
  }
  for (int s = 0; s < P && !pair; ++s) {
    const int r = piece_of(s);
    if (s + 1 < P)  // the next piece arrives while this one is multiplied
      comm::irecv(buf[s % 2], m * kmap.local_extent(piece_of(s + 1)), piece_of(s + 1), kTag, comm,
                  recv[s % 2]);
    if (s > 0) t.timed(&Timers::comm, "wait", s, [&] { recv[(s - 1) % 2].wait(); });
    const index_t kr = kmap.local_extent(r);
    const T beta = s == 0 ? x.beta : T(1);
    t.timed(&Timers::gemm, "gemm", s, [&] {
      if (kr == 0) {
        if (s == 0) blas::scale(m, n, beta, x.C.data(), x.C.ld());
        return;
      }
      const T* a = s == 0 ? mine : buf[(s - 1) % 2];
      const auto [b, ldb] = rows_of(x.opB, x.B, n, kmap.owned_ranges(r), kr, pack);
      winograd_gemm(x.opA, x.opB, m, n, kr, x.alpha, a, ld_of(kr), b, ldb, beta, x.C.data(),
                    x.C.ld(), winograd::levels(m, n, kr, crossover), work);
    });
  }
  t.timed(&Timers::comm, "wait", P, [&] { sent.wait(); });
}

#define SHARDMM_INSTANTIATE(T) \
  template void strassen_ring_run<T>(const Operands<T>&, const Options&, Timers&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
