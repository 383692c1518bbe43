// 2.5D GEMM on a pm x pn x pk grid (axes x, y, z) over the caller's ranks.
//
// k is cut into pk slices of s' = ceil(ceil(k/pk) / lcm(pm,pn)) * lcm(pm,pn) indices; slice z
// runs a pm x pn SUMMA (summa_setup / summa_run, C-stationary) on its part of k, on views of
// its tiles with the caller's timers, then the partial products are reduced along z
// (reduce_partials). Layouts on the 3D mesh:
//   op(A) [I_x, K_zy:bc(s'/pn)]   op(B) [K_zx:bc(s'/pm), J_y:bc(pk nb)]
//   C partial [I_x, J_y:bc(pk nb)]{U_z} -> C [I_x, J_yz:bc(nb)],  nb = ceil(n / (pn pk))
// so each slice's tiles are exactly the 2D SUMMA tiles of its k range (views, no copies) and
// the z reduction nests: one reduce-scatter on axis_comm(z) (comm::reduce_scatter, a ring of
// isend/irecv on pooled buffers).
// What moves: the inputs are redistributed (one alltoallv each) from the caller's layouts into
// these - the replication-free form of 2.5D's "replicate along the third axis"; inputs already
// in them (gemm25d_layouts, what preferred_layouts offers) are read in place - then per
// slice (m/pm) (k/pk) (1-1/pn) + (n/pn) (k/pk) (1-1/pm) words of SUMMA panels, then
// (m/pm) (n/pn) (1-1/pk) words of reduce-scatter, then C to the caller's layout (or, when C is
// in the last layout above, the reduce-scatter lands in it).
// The grid comes from the setup's options (the front end asks the planner when none is
// given); every rank of the 3D mesh agrees after the slices' SUMMAs, so a slice that failed
// makes every slice throw before the z reduction.
#include <numeric>
#include <optional>

#include "algo/algo.hpp"
#include "algo/reduce_partials.hpp"
#include "blas/blas.hpp"
#include "comm/traffic.hpp"
#include "comm/wire.hpp"
#include "matrix/pooled.hpp"
#include "shardmm/error.hpp"
#include "shardmm/redistribute.hpp"

namespace shardmm::algo {
namespace {

struct Grid25D {
  int pm, pn, pk;
  index_t slice, nb_a, nb_b, nb_c;  // k per slice, A's / B's k blocks, C's final column block
};

Grid25D make_grid(int pm, int pn, int pk, index_t n, index_t k) {
  Grid25D g{pm, pn, pk, 0, 0, 0, 0};
  if (g.pm < 1 || g.pn < 1 || g.pk < 1)
    throw InvalidArgument("2.5D grid " + std::to_string(pm) + "x" + std::to_string(pn) + "x" +
                          std::to_string(pk) + " has an empty dimension");
  const index_t L = std::lcm<index_t>(g.pm, g.pn);
  const index_t per = (k + g.pk - 1) / g.pk;
  g.slice = std::max<index_t>(L, (per + L - 1) / L * L);
  g.nb_a = g.slice / g.pn;
  g.nb_b = g.slice / g.pm;
  const index_t cols = index_t{g.pn} * g.pk;  // C's column blocks: y x z
  g.nb_c = std::max<index_t>(1, (n + cols - 1) / cols);
  return g;
}

DimSpec bc(const char* label, std::vector<std::string> axes, index_t nb) {
  return DimSpec{label, DimSpec::Kind::BlockCyclic, std::move(axes), nb, 0};
}

ShardingSpec spec_of(DimSpec rows, DimSpec cols, std::vector<std::string> unreduced = {}) {
  ShardingSpec s;
  s.dims = {std::move(rows), std::move(cols)};
  s.unreduced = std::move(unreduced);
  return s;
}

// The layouts on the 3D mesh: op(A) and op(B) as stored, the slices' partial products, C's.
struct Tiles3D {
  Layout a, b, partial, c;
};

Tiles3D layouts_3d(Op opA, Op opB, index_t m, index_t n, index_t k, const MeshShape& sh,
                   const Grid25D& g) {
  return {stored_layout(opA, sh, m, k, spec_of(block_dim("I", {"x"}), bc("K", {"z", "y"}, g.nb_a))),
          stored_layout(opB, sh, k, n,
                        spec_of(bc("K", {"z", "x"}, g.nb_b), bc("J", {"y"}, g.pk * g.nb_c))),
          Layout(sh, m, n, spec_of(block_dim("I", {"x"}), bc("J", {"y"}, g.pk * g.nb_c), {"z"})),
          Layout(sh, m, n, spec_of(block_dim("I", {"x"}), bc("J", {"y", "z"}, g.nb_c)))};
}

MeshShape mesh_3d(int pm, int pn, int pk) { return MeshShape({"x", "y", "z"}, {pm, pn, pk}); }

}  // namespace

Layouts25D gemm25d_layouts(Op opA, Op opB, index_t m, index_t n, index_t k, int pm, int pn,
                           int pk) {
  const Tiles3D l = layouts_3d(opA, opB, m, n, k, mesh_3d(pm, pn, pk), make_grid(pm, pn, pk, n, k));
  return {l.a, l.b, l.c};
}

Setup gemm25d_setup(const Problem& p, const Options& o) {
  Setup setup;
  setup.algorithm = Algorithm::Gemm25D;
  const int P = p.mesh.size();
  if (o.grid_m * o.grid_n * o.grid_k != P)
    throw NotSupported("2.5D grid " + std::to_string(o.grid_m) + "x" + std::to_string(o.grid_n) +
                       "x" + std::to_string(o.grid_k) + " does not use exactly the " +
                       std::to_string(P) + " ranks of mesh " + p.mesh.to_string());
  setup.own = Gemm25DSetup{o.grid_m, o.grid_n, o.grid_k};
  setup.A = p.A;  // moved onto the 3D mesh inside the run
  setup.B = p.B;
  setup.C = p.C;
  setup.grid =
      std::to_string(o.grid_m) + "x" + std::to_string(o.grid_n) + "x" + std::to_string(o.grid_k);
  setup.detail =
      "k split in " + std::to_string(o.grid_k) + " slices, SUMMA per slice, reduce-scatter along z";
  return setup;
}

namespace {

// Slice z's SUMMA on views of its tiles (A3, B3, Cp on the 3D mesh; S the slice's x-y mesh):
// exactly SUMMA's own layouts for that k range, so nothing moves before its panels.
template <Scalar T>
void slice_summa(const Operands<T>& x, const Mesh& S, const Grid25D& g, index_t m, index_t n,
                 index_t kz, DistMatrix<T>& A3, DistMatrix<T>& B3, DistMatrix<T>& Cp,
                 const Options& o, Timers& t) {
  const auto Az =
      DistMatrix<T>::view(S,
                          stored_layout(x.opA, S.shape(), m, kz,
                                        spec_of(block_dim("I", {"x"}), bc("K", {"y"}, g.nb_a))),
                          A3.data(), A3.ld());
  const auto Bz = DistMatrix<T>::view(
      S,
      stored_layout(x.opB, S.shape(), kz, n,
                    spec_of(bc("K", {"x"}, g.nb_b), bc("J", {"y"}, g.pk * g.nb_c))),
      B3.data(), B3.ld());
  auto Cz = DistMatrix<T>::view(
      S, Layout(S.shape(), m, n, spec_of(block_dim("I", {"x"}), bc("J", {"y"}, g.pk * g.nb_c))),
      Cp.data(), Cp.ld());
  Options inner = o;
  inner.algorithm = Algorithm::Summa;
  inner.stationary = Stationary::C;
  const Problem slice{x.opA, x.opB, m, n, kz, Az.layout(), Bz.layout(), Cz.layout(), S.shape()};
  const Setup setup = summa_setup(slice, inner);
  if (!setup.A.same_distribution(Az.layout()) || !setup.B.same_distribution(Bz.layout()) ||
      !setup.C.same_distribution(Cz.layout()))
    throw NotSupported(
        "2.5D: SUMMA does not run on the slice's tiles as they are (internal error)");
  if (kz == 0)
    return blas::scale(Cz.local_rows(), Cz.local_cols(), T(0), Cz.data(),
                       Cz.ld());  // an empty slice

  summa_run(Operands<T>{x.opA, x.opB, x.alpha, Az, Bz, T(0), Cz}, setup, inner, t);
}

}  // namespace

namespace {

// Operand X's tile on the 3D mesh: X itself when it is already in layout L (a native caller's
// input, read in place), else a pool slot it is redistributed into.
template <Scalar T>
DistMatrix<T> tile_3d(const Mesh& M3, const DistMatrix<T>& X, const Layout& L, bool in_place,
                      memory::Slot slot) {
  if (!in_place) return matrix::pooled<T>(M3, L, slot);
  return DistMatrix<T>::view(M3, L, const_cast<T*>(X.data()), X.ld());  // NOLINT: read only
}

}  // namespace

template <Scalar T>
void gemm25d_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t) {
  const index_t m = x.C.rows(), n = x.C.cols();
  const index_t k = x.opA == Op::N ? x.A.cols() : x.A.rows();
  const Gemm25DSetup& own = setup.as<Gemm25DSetup>();
  const Grid25D g = make_grid(own.pm, own.pn, own.pk, n, k);
  const Mesh M3 = x.C.mesh().reshaped(mesh_3d(g.pm, g.pn, g.pk));
  const Mesh S = M3.slice({"x", "y"});
  const Tiles3D l = layouts_3d(x.opA, x.opB, m, n, k, M3.shape(), g);
  const int z = M3.coord("z");
  const index_t kz = std::clamp<index_t>(k - z * g.slice, 0, g.slice);  // this slice's k

  // Inputs onto the 3D mesh (one alltoallv each, counted as layout changes) unless they are
  // there already.
  std::optional<DistMatrix<T>> A3, B3, Cp, Cf;
  const bool a_in_place = x.A.layout().same_distribution(l.a),
             b_in_place = x.B.layout().same_distribution(l.b),
             c_in_place = x.C.layout().same_distribution(l.c);
  t.timed(&Timers::redist, "to 3D", -1, [&] {
    const comm::RedistributionRole moving_in(true);
    prologue(M3.comm(), [&] {  // the 3D tiles (workspace), taken before anything moves
      A3.emplace(tile_3d(M3, x.A, l.a, a_in_place, memory::Slot::StagedA0));
      B3.emplace(tile_3d(M3, x.B, l.b, b_in_place, memory::Slot::StagedB0));
      Cp.emplace(matrix::pooled<T>(M3, l.partial, memory::Slot::StagedC0));
    });
    const comm::OperandMoves operands;  // A and B may travel in a 16-bit wire format
    if (!a_in_place) redistribute(x.A, *A3);
    if (!b_in_place) redistribute(x.B, *B3);
  });

  // Per slice: SUMMA on views of this slice's tiles; then every slice agrees.
  t.timed(nullptr, "slices", -1, [&] {
    comm::agreed(M3.comm(), "multiply",
                 [&] { slice_summa(x, S, g, m, n, kz, *A3, *B3, *Cp, o, t); });
  });

  // Partial sums reduce-scattered along z (straight into C with beta when C is in that
  // layout), then C into the caller's layout with beta folded in.
  t.timed(&Timers::comm, "reduce", -1, [&] {
    prologue(M3.comm(), [&] {
      if (c_in_place) Cf.emplace(DistMatrix<T>::view(M3, l.c, x.C.data(), x.C.ld()));
      else Cf.emplace(matrix::pooled<T>(M3, l.c, memory::Slot::StagedC1));
    });
    reduce_partials(*Cp, c_in_place ? x.beta : T(0), *Cf);
  });
  if (c_in_place) return;
  t.timed(&Timers::redist, "to C", -1, [&] {
    const comm::RedistributionRole moving_out(true);
    redistribute(*Cf, x.C, T(1), x.beta);
  });
}

SHARDMM_INSTANTIATE_RUN(gemm25d_run)

}  // namespace shardmm::algo
