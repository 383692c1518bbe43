// Strassen's grid form (Algorithm::Strassen when C's rows and columns are both split: a 2-D
// grid). C[I_R,J_S], op(A)[I_R,K_S] and op(B)[K_R,J_S] stay where they are (the caller's when
// their maps fit, else k block-split: strassen.cpp). k is cut into pieces by owner pairs:
// K(s, r) = the k indices whose op(A) columns rank s of the column axes S holds and whose
// op(B) rows rank r of the row axes R holds. What moves, piece by piece in the same order on
// every rank: rank s of each row of ranks packs op(A)[I_R, K(s,r)] and broadcasts it along S
// (axis_comm(S)), rank r of each column packs op(B)[K(s,r), J_S] and broadcasts it along R;
// every rank then multiplies the two into its C tile with one local Winograd recursion
// (beta on the first piece). Words received per rank: m_loc k (1 - 1/|S|) + k n_loc
// (1 - 1/|R|), what gathering both would move. Memory: one panel of each operand for the
// largest piece (Panel0, Panel1) and the recursion's scratch (Partial); neither operand is
// ever held whole along k.
#include <algorithm>
#include <map>

#include "algo/pack.hpp"
#include "algo/strassen.hpp"
#include "algo/strassen_winograd.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "core/winograd.hpp"

namespace shardmm::algo {
namespace {

void add_run(Ranges& runs, index_t b, index_t e) {
  if (!runs.empty() && runs.back().second == b) runs.back().second = e;
  else runs.emplace_back(b, e);
}

// X's local k ranges K packed into `to` (k_r x other with k along X's rows, other x k_r along
// its columns): pack.hpp's run packing; an empty tile may have no storage, so nothing is copied.
template <class T>
void pack_piece(bool k_on_rows, const T* X, index_t ldx, index_t other, const Ranges& K, T* to) {
  if (other == 0 || count(K) == 0) return;
  if (k_on_rows) pack_row_runs(X, ldx, K, other, to);
  else pack_col_runs(X, ldx, K, other, to);
}

}  // namespace

std::vector<Piece> pieces_of(const DimMap& ka, const DimMap& kb, index_t k) {
  std::map<std::pair<int, int>, Piece> by_owner;
  for (index_t g = 0; g < k;) {
    const index_t e = std::min({ka.block_end(g), kb.block_end(g), k});
    Piece& p = by_owner[{ka.owner(g), kb.owner(g)}];
    p.s = ka.owner(g), p.r = kb.owner(g), p.k += e - g;
    add_run(p.a_local, ka.to_local(g), ka.to_local(g) + (e - g));
    add_run(p.b_local, kb.to_local(g), kb.to_local(g) + (e - g));
    g = e;
  }
  std::vector<Piece> out;
  out.reserve(by_owner.size());
  for (auto& [owners, p] : by_owner) out.push_back(std::move(p));
  return out;
}

template <Scalar T>
void strassen_grid_run(const Operands<T>& x, const Options& o, Timers& t) {
  const Mesh& mesh = x.C.mesh();
  const Layout& CL = x.C.layout();
  const int ka_dim = stored_dim(x.opA, 1), kb_dim = stored_dim(x.opB, 0);
  const DimMap &ka = x.A.layout().map(ka_dim), &kb = x.B.layout().map(kb_dim);
  const index_t m = x.C.local_rows(), n = x.C.local_cols(), k = ka.extent;
  const std::vector<Piece> pieces = pieces_of(ka, kb, k);
  index_t kmax = 0;
  for (const Piece& p : pieces) kmax = std::max(kmax, p.k);
  const index_t crossover = strassen_crossover(o);
  const int L = winograd::levels(m, n, kmax, crossover);
  T *pa = nullptr, *pb = nullptr, *work = nullptr;
  prologue(mesh.comm(), [&] {
    pa = memory::get<T>(memory::Slot::Panel0, m * kmax);
    pb = memory::get<T>(memory::Slot::Panel1, kmax * n);
    work = memory::get<T>(memory::Slot::Partial, winograd::scratch(m, n, kmax, L));
  });
  const MPI_Comm along_s = mesh.axis_comm(axis_names(mesh.shape(), CL.dim_axes(1)));
  const MPI_Comm along_r = mesh.axis_comm(axis_names(mesh.shape(), CL.dim_axes(0)));
  const int my_s = x.A.layout().dim_coord(ka_dim, mesh.coords());
  const int my_r = x.B.layout().dim_coord(kb_dim, mesh.coords());
  const bool a_k_rows = x.opA != Op::N, b_k_rows = x.opB == Op::N;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    const auto step = static_cast<std::int64_t>(i);
    // The owners pack their part of the piece; both panels then travel at once.
    if (my_s == p.s) pack_piece(a_k_rows, x.A.data(), x.A.ld(), m, p.a_local, pa);
    if (my_r == p.r) pack_piece(b_k_rows, x.B.data(), x.B.ld(), n, p.b_local, pb);
    comm::Requests panels;
    comm::ibcast(pa, m * p.k, p.s, along_s, panels);
    comm::ibcast(pb, p.k * n, p.r, along_r, panels);
    t.timed(&Timers::comm, "wait", step, [&] { panels.wait(); });
    if (m == 0 || n == 0) continue;
    t.timed(&Timers::gemm, "gemm", step, [&] {
      winograd_gemm(x.opA, x.opB, m, n, p.k, x.alpha, pa, std::max<index_t>(a_k_rows ? p.k : m, 1),
                    pb, std::max<index_t>(b_k_rows ? p.k : n, 1), i == 0 ? x.beta : T(1),
                    x.C.data(), x.C.ld(), winograd::levels(m, n, p.k, crossover), work);
    });
  }
}

#define SHARDMM_INSTANTIATE(T) \
  template void strassen_grid_run<T>(const Operands<T>&, const Options&, Timers&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
