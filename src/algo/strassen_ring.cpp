// Strassen's line forms. AllGatherA (C's rows not split: a 1 x P grid or a line): C[I,J_S],
// op(A)[I,K_S] (k split over the same axes S, any block-cyclic map) and op(B)[K,J_S] (k whole);
// op(A)'s pieces travel. AllGatherB, the column form (C's columns not split: a P x 1 grid):
// C[I_R,J], op(A)[I_R,K] (k whole) and op(B)[K_R,J] (k split over C's row axes R); op(B)'s
// pieces travel. What moves, on the axes' communicator: every rank isends its piece (m x k_r
// of op(A) or k_r x n of op(B), as stored) to every other rank up front; at step s it computes
// with the piece of rank (me + s) mod P while the next one arrives (received one step ahead
// into two alternating buffers, Panel0/1, or one when two would take more than the local
// A + B + C: the next piece is then received after the current product). Each step is one
// local Winograd product
//   C (+)= alpha op(A)[:, K_r] op(B)[K_r, :]     (beta on the first step only)
// with the staying operand's k indices K_r (rank r's) packed into Panel2 when some rank's are
// not one run. Words received per rank: m k (1 - 1/P) (A moving) or k n (1 - 1/P) (B).
// Memory: the buffers, the packed k indices and the recursion's scratch (Partial) for the
// largest piece: at 8192^3 on 2 ranks 0.76 x the local A + B + C, against about 1.77 x for
// gathering the moving operand whole.
#include <algorithm>

#include "algo/pack.hpp"
#include "algo/strassen.hpp"
#include "algo/strassen_winograd.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "core/winograd.hpp"

namespace shardmm::algo {
namespace {

constexpr int kTag = 27;

// The staying operand X's k indices K (global k ranges; its k is whole, so global = local),
// X stored with k along its rows (a k_r x `other` result) or along its columns (other x k_r):
// packed at `pack` when they are not one run, else a view into X.
template <class T>
std::pair<const T*, index_t> k_of(bool k_on_rows, const T* X, index_t ldx, index_t other,
                                  const Ranges& K, index_t kr, T* pack) {
  if (K.size() <= 1) {
    const index_t first = K.empty() ? 0 : K[0].first;
    return {k_on_rows ? X + first : X + first * ldx, ldx};
  }
  if (other == 0) return {pack, 1};  // nothing to copy (an empty tile may have no storage)
  if (k_on_rows) {
    pack_row_runs(X, ldx, K, other, pack);
    return {pack, std::max<index_t>(kr, 1)};
  }
  pack_col_runs(X, ldx, K, other, pack);
  return {pack, std::max<index_t>(other, 1)};
}

// Which operand moves along which of C's dimensions, and the sizes that follow.
template <class T>
struct LineShape {
  bool b_moves;
  const DistMatrix<T>& moving;
  const DistMatrix<T>& staying;
  const DimMap& kmap;  // the moving operand's k
  index_t span;        // the moving piece's other side (m for op(A), n for op(B))
  index_t other;       // the staying operand's other side
  bool piece_k_rows;   // the moving piece, as stored, has k along its rows
  bool stay_k_rows;    // the staying operand, as stored, has k along its rows
  index_t kmax;        // the largest piece's k
  bool runs;           // some rank's k is more than one run (the staying side is packed)

  LineShape(const Operands<T>& x, RingForm form)
      : b_moves(form == RingForm::AllGatherB),
        moving(b_moves ? x.B : x.A),
        staying(b_moves ? x.A : x.B),
        kmap(b_moves ? x.B.layout().map(stored_dim(x.opB, 0))
                     : x.A.layout().map(stored_dim(x.opA, 1))),
        span(b_moves ? x.C.local_cols() : x.C.local_rows()),
        other(b_moves ? x.C.local_rows() : x.C.local_cols()),
        piece_k_rows(b_moves ? x.opB == Op::N : x.opA != Op::N),
        stay_k_rows(b_moves ? x.opA != Op::N : x.opB == Op::N),
        kmax(widest(kmap)),
        runs(kmap.nprocs > 1 && scattered(kmap)) {}
  // Leading dimension of a moving piece with kr of k, as sent.
  [[nodiscard]] index_t ld_of(index_t kr) const {
    return std::max<index_t>(piece_k_rows ? kr : span, 1);
  }
};

template <class T>
index_t local_size(const DistMatrix<T>& X) {
  return X.local_rows() * X.local_cols();
}

}  // namespace

template <Scalar T>
void strassen_ring_run(const Operands<T>& x, RingForm form, const Options& o, Timers& t) {
  const LineShape<T> ls(x, form);
  const Mesh& mesh = x.C.mesh();
  const Layout& CL = x.C.layout();
  const int d = ls.b_moves ? 0 : 1;  // C's dimension the line splits
  const MPI_Comm comm = mesh.axis_comm(axis_names(mesh.shape(), CL.dim_axes(d)));
  const int P = CL.map(d).nprocs, me = CL.dim_coord(d, mesh.coords());
  const index_t m = x.C.local_rows(), n = x.C.local_cols(), crossover = strassen_crossover(o);
  const index_t k_me = ls.kmap.local_extent(me), span = ls.span;
  const bool own_packed = ls.moving.ld() != ls.ld_of(k_me);  // a wider ld: send a copy
  // Two ranks with equal op(A) pieces: one product over both (strassen_pair.cpp).
  const int pair = !ls.b_moves && P == 2
                       ? winograd::pair_levels(m, n, k_me, ls.kmap.local_extent(1 - me), crossover)
                       : 0;
  const std::int64_t scratch =
      pair ? winograd::pair_scratch(m, n, k_me, pair)
           : winograd::scratch(m, n, ls.kmax, winograd::levels(m, n, ls.kmax, crossover));
  const bool packs = !pair && ls.runs;  // some piece's k is not one run
  const index_t pack_size = packs ? ls.kmax * ls.other : 0;
  const int nbuf = winograd::line_buffers(P, span * ls.kmax,
                                          pack_size + scratch + (own_packed ? span * k_me : 0),
                                          local_size(x.A) + local_size(x.B) + local_size(x.C));
  T *buf[2] = {nullptr, nullptr}, *pack = nullptr, *work = nullptr, *own = nullptr;
  prologue(mesh.comm(), [&] {
    for (int b = 0; b < nbuf; ++b)
      buf[b] = memory::get<T>(b ? memory::Slot::Panel1 : memory::Slot::Panel0, span * ls.kmax);
    if (packs) pack = memory::get<T>(memory::Slot::Panel2, pack_size);
    work = memory::get<T>(memory::Slot::Partial, scratch);
    own = own_packed ? memory::get<T>(memory::Slot::Panel3, span * k_me) : nullptr;
  });
  const index_t rows_me = ls.piece_k_rows ? k_me : span, cols_me = ls.piece_k_rows ? span : k_me;
  if (own_packed) copy_block(ls.moving.data(), ls.moving.ld(), rows_me, cols_me, own, rows_me);
  const T* mine = own_packed ? own : ls.moving.data();
  comm::Requests sent, recv[2];
  for (int r = 0; r < P; ++r)
    if (r != me) comm::isend(mine, span * k_me, r, kTag, comm, sent);
  if (pair) {  // the other piece arrives during the first of the top level's products
    comm::irecv(buf[0], m * k_me, 1 - me, kTag, comm, recv[0]);
    const PairPieces<T> pieces{mine, buf[0], k_me, ls.kmap.owned_ranges(me),
                               ls.kmap.owned_ranges(1 - me)};
    strassen_pair(
        x, pieces, pair, work, [&] { recv[0].wait(); }, t);
    t.timed(&Timers::comm, "wait", P, [&] { sent.wait(); });
    return;
  }
  auto piece_of = [&](int s) { return (me + s) % P; };
  auto post = [&](int s) {  // step s's piece into buffer (s - 1) mod nbuf
    comm::irecv(buf[(s - 1) % nbuf], span * ls.kmap.local_extent(piece_of(s)), piece_of(s), kTag,
                comm, recv[(s - 1) % nbuf]);
  };
  for (int s = 0; s < P; ++s) {
    const int r = piece_of(s);
    const bool ahead = s + 1 < P && (nbuf == 2 || s == 0);  // the next piece's buffer is free
    if (ahead) post(s + 1);  // it arrives while this one is multiplied
    if (s > 0) t.timed(&Timers::comm, "wait", s, [&] { recv[(s - 1) % nbuf].wait(); });
    const index_t kr = ls.kmap.local_extent(r);
    const T beta = s == 0 ? x.beta : T(1);
    t.timed(&Timers::gemm, "gemm", s, [&] {
      const Polling polling(x.C.mesh(), o.overlap, {&sent, &recv[0], &recv[1]});
      if (kr == 0) {
        if (s == 0) blas::scale(m, n, beta, x.C.data(), x.C.ld());
        return;
      }
      const T* piece = s == 0 ? mine : buf[(s - 1) % nbuf];
      const auto [y, ldy] = k_of(ls.stay_k_rows, ls.staying.data(), ls.staying.ld(), ls.other,
                                 ls.kmap.owned_ranges(r), kr, pack);
      const T* a = ls.b_moves ? y : piece;
      const T* b = ls.b_moves ? piece : y;
      winograd_gemm(x.opA, x.opB, m, n, kr, x.alpha, a, ls.b_moves ? ldy : ls.ld_of(kr), b,
                    ls.b_moves ? ls.ld_of(kr) : ldy, beta, x.C.data(), x.C.ld(),
                    winograd::levels(m, n, kr, crossover), work);
    });
    if (s + 1 < P && !ahead) post(s + 1);  // one buffer: after this product
  }
  t.timed(&Timers::comm, "wait", P, [&] { sent.wait(); });
}

#define SHARDMM_INSTANTIATE(T) \
  template void strassen_ring_run<T>(const Operands<T>&, RingForm, const Options&, Timers&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
