// Cannon's algorithm on a square p x p mesh (axes X = rows, Y = columns).
//
// Layouts (block, uneven sizes allowed): op(A) = [I_X, K_Y], op(B) = [K_X, J_Y], C = [I_X, J_Y].
// Data flow on rank (i, j):
//   skew: A's tile goes to (i, j-i) along the row communicator (axis Y) and B's tile to
//         (i-j, j) along the column communicator (axis X); afterwards the rank holds the
//         k-block (i+j) mod p of both.
//   p steps: C_loc += alpha * A_cur * B_cur; meanwhile (MPI_Isend/Irecv, double-buffered) A_cur
//         moves one step left (to (i, j-1)) and B_cur one step up (to (i-1, j)).
// Words received per rank: skew (A tile if i != 0, B tile if j != 0) + (p-1) A tiles + (p-1)
// B tiles, each tile being the k-block it receives.
#include <algorithm>
#include <cmath>

#include "algo/algo.hpp"
#include "algo/pack.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "comm/mpi_check.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"

namespace shardmm::algo {

Setup cannon_setup(const Problem& p, const Options&) {
  if (p.mesh.ndims() != 2 || p.mesh.sizes[0] != p.mesh.sizes[1])
    throw NotSupported(
        "Cannon needs a square p x p mesh (2 axes of equal size), got " + p.mesh.to_string() +
        ": its shifts pair every row block of A with every "
        "column block of B only on a square grid; use SUMMA, which runs on any grid");
  const std::string X = p.mesh.names[0], Y = p.mesh.names[1];
  auto block = [](const std::string& label, const std::string& axis) {
    return DimSpec{label, DimSpec::Kind::Block, {axis}, 0, 0};
  };
  ShardingSpec a, b, c;
  a.dims = {block("I", X), block("K", Y)};
  b.dims = {block("K", X), block("J", Y)};
  c.dims = {block("I", X), block("J", Y)};
  Setup setup;
  setup.algorithm = Algorithm::Cannon;
  setup.A = stored_layout(p.opA, p.mesh, p.m, p.k, a);
  setup.B = stored_layout(p.opB, p.mesh, p.k, p.n, b);
  setup.C = Layout(p.mesh, p.m, p.n, c);
  const int q = p.mesh.sizes[0];
  setup.grid = std::to_string(q) + "x" + std::to_string(q);
  setup.detail = "skew, then " + std::to_string(q) + " GEMM steps with " + std::to_string(q - 1) +
                 " overlapped shifts";
  return setup;
}

namespace {

// A tile of op(X) in its stored orientation, packed (ld = stored rows).
struct Tile {
  index_t rows = 0, cols = 0;  // stored extents
  [[nodiscard]] index_t ld() const { return std::max<index_t>(rows, 1); }
  [[nodiscard]] index_t size() const { return rows * cols; }
};

// Stored extents of op(X)'s block (outer block `o`, k-block `kb`).
Tile tile_of(const DimMap& outer, const DimMap& kmap, int o, int kb, bool k_is_col) {
  const index_t a = outer.local_extent(o), b = kmap.local_extent(kb);
  return k_is_col ? Tile{a, b} : Tile{b, a};
}

// X's local tile, packed (ld = local rows).
template <Scalar T>
void pack(const DistMatrix<T>& X, T* out) {
  copy_block(X.data(), X.ld(), X.local_rows(), X.local_cols(), out, X.local_rows());
}

}  // namespace

template <Scalar T>
void cannon_run(const Operands<T>& x, const Setup&, const Options& o, Timers& t) {
  const Mesh& mesh = x.C.mesh();
  const int q = mesh.shape().sizes[0];
  const int i = mesh.coords()[0], j = mesh.coords()[1];
  const MPI_Comm row = mesh.axis_comm(mesh.shape().names[1]);  // rank = j
  const MPI_Comm col = mesh.axis_comm(mesh.shape().names[0]);  // rank = i
  const bool a_k_col = x.opA == Op::N, b_k_col = x.opB != Op::N;
  const DimMap& mA = x.C.layout().row_map();
  const DimMap& nB = x.C.layout().col_map();
  const DimMap& kA = x.A.layout().map(a_k_col ? 1 : 0);
  const DimMap& kB = x.B.layout().map(b_k_col ? 1 : 0);
  const index_t a_max = mA.local_extent(0) * std::max<index_t>(kA.local_extent(0), 1);
  const index_t b_max = nB.local_extent(0) * std::max<index_t>(kB.local_extent(0), 1);
  T* abuf[2] = {};
  T* bbuf[2] = {};
  prologue(mesh.comm(), [&] {
    abuf[0] = memory::get<T>(memory::Slot::Panel0, a_max),
    abuf[1] = memory::get<T>(memory::Slot::Panel1, a_max);
    bbuf[0] = memory::get<T>(memory::Slot::Panel2, b_max),
    bbuf[1] = memory::get<T>(memory::Slot::Panel3, b_max);
  });
  const int mod = q;
  auto wrap = [mod](int v) { return ((v % mod) + mod) % mod; };

  // Skew: my A tile (k-block j) goes to column j-i; I receive k-block (i+j) from column j+i.
  const int kb0 = wrap(i + j);
  Tile ta = tile_of(mA, kA, i, kb0, a_k_col), tb = tile_of(nB, kB, j, kb0, b_k_col);
  t.timed(&Timers::comm, "skew", -1, [&] {
    pack(x.A, abuf[1]);
    pack(x.B, bbuf[1]);
    comm::Requests r;
    if (i == 0) {  // row 0 already holds k-block j = i + j: no message to itself
      std::swap(abuf[0], abuf[1]);
    } else {
      comm::irecv(abuf[0], ta.size(), wrap(j + i), 0, row, r);
      comm::isend(abuf[1], x.A.local_rows() * x.A.local_cols(), wrap(j - i), 0, row, r);
    }
    if (j == 0) {  // column 0 already holds k-block i = i + j
      std::swap(bbuf[0], bbuf[1]);
    } else {
      comm::irecv(bbuf[0], tb.size(), wrap(i + j), 1, col, r);
      comm::isend(bbuf[1], x.B.local_rows() * x.B.local_cols(), wrap(i - j), 1, col, r);
    }
    r.wait();
  });

  blas::scale(x.C.local_rows(), x.C.local_cols(), x.beta, x.C.data(), x.C.ld());
  for (int s = 0; s < q; ++s) {
    const int cur = s % 2, nxt = 1 - cur;
    const int kb_next = wrap(i + j + s + 1);
    const Tile na = tile_of(mA, kA, i, kb_next, a_k_col), nb = tile_of(nB, kB, j, kb_next, b_k_col);
    comm::Requests r;
    if (s + 1 < q) {  // shift A left and B up while multiplying
      comm::irecv(abuf[nxt], na.size(), wrap(j + 1), 2, row, r);
      comm::isend(abuf[cur], ta.size(), wrap(j - 1), 2, row, r);
      comm::irecv(bbuf[nxt], nb.size(), wrap(i + 1), 3, col, r);
      comm::isend(bbuf[cur], tb.size(), wrap(i - 1), 3, col, r);
      if (!o.overlap) r.wait();
    }
    const index_t kk = a_k_col ? ta.cols : ta.rows;
    t.timed(&Timers::gemm, "gemm", s, [&] {
      const Polling polling(x.C.mesh(), o.overlap, {&r});  // the shifts move meanwhile
      blas::gemm(x.opA, x.opB, x.C.local_rows(), x.C.local_cols(), kk, x.alpha, abuf[cur], ta.ld(),
                 bbuf[cur], tb.ld(), T(1), x.C.data(), x.C.ld());
    });
    t.timed(&Timers::comm, "wait", s, [&] { r.wait(); });
    ta = na;
    tb = nb;
  }
}

SHARDMM_INSTANTIATE_RUN(cannon_run)

}  // namespace shardmm::algo
