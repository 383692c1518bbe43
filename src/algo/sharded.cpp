// Sharding-rule matmul (the JAX guide's four cases) on named mesh axes, block shardings.
//
// op(A) = [I_a, K_a], op(B) = [K_b, J_b], C asked as [I_c, J_c]{U_c}. Collectives inserted:
//  1. K_a and K_b sharded over different axes: AllGather the smaller operand's k dimension.
//  2. I_a and J_b share a mesh axis (case 4): AllGather one operand's non-contracting dimension
//     (the one C does not want sharded that way; otherwise the smaller).
//  3. Only one operand sharded on k (case 2): either AllGather it, or slice the other operand
//     locally and reduce the output afterwards, whichever moves fewer words.
//  4. Local multiply (one BLAS call): C_part = [I_a, J_b]{U_K} where K is the k sharding left.
//  5. C_part to C: nothing when the layouts agree (C may stay unreduced, {U_X});
//     ReduceScatter over U_K when C shards a dimension as C_part does plus the U axes
//     (case 3); otherwise AllReduce over U_K (only if C needs the sum) and redistribute.
// AllGather: MPI_Allgatherv on axis_comm(dimension's axes). ReduceScatter: comm::reduce_scatter
// (a ring of isend/irecv on workspace buffers) on axis_comm(U_K). AllReduce: MPI_Allreduce on
// axis_comm(U_K). Both reductions: reduce_partials.cpp.
#include <algorithm>
#include <optional>

#include "algo/algo.hpp"
#include "algo/reduce_partials.hpp"
#include "algo/sharded_steps.hpp"
#include "blas/blas.hpp"
#include "matrix/pooled.hpp"
#include "memory/workspace.hpp"
#include "shardmm/error.hpp"
#include "shardmm/redistribute.hpp"

namespace shardmm::algo {
namespace {

// The same sharding with block-cyclic / cyclic dimensions turned into block ones.
Layout as_block(const Layout& L) {
  ShardingSpec s = L.spec();
  for (int d = 0; d < 2; ++d) {
    auto& dim = s.dims[d];
    if (dim.kind == DimSpec::Kind::Replicated) continue;
    dim.kind = DimSpec::Kind::Block;
    dim.nb = 0;
    dim.src = 0;
    dim.axes.clear();
    for (int a : L.dim_axes(d)) dim.axes.push_back(L.mesh().names[a]);
  }
  s.unreduced.clear();
  for (int a : L.unreduced_axes()) s.unreduced.push_back(L.mesh().names[a]);
  return Layout(L.mesh(), L.rows(), L.cols(), s);
}

}  // namespace

Setup sharded_setup(const Problem& p, const Options&) {
  Setup setup;
  setup.algorithm = Algorithm::Sharded;
  setup.A = as_block(p.A);
  setup.B = as_block(p.B);
  setup.C = as_block(p.C);
  setup.grid = p.mesh.to_string();
  setup.detail = "sharding rules: " + setup.A.spec().to_string() +
                 (p.opA == Op::N ? "" : "^" + to_string(p.opA)) + " . " +
                 setup.B.spec().to_string() + (p.opB == Op::N ? "" : "^" + to_string(p.opB)) +
                 " -> " + setup.C.spec().to_string();
  return setup;
}

template <Scalar T>
void sharded_run(const Operands<T>& x, const Setup&, const Options&, Timers& t) {
  using sharded::Axes;
  const int da = stored_dim(x.opA, 1), db = stored_dim(x.opB, 0);  // stored k dims
  const int ia = 1 - da, jb = 1 - db;
  std::optional<DistMatrix<T>> Ag, Bg;
  const DistMatrix<T>* A = &x.A;
  const DistMatrix<T>* B = &x.B;
  int gathers_a = 0, gathers_b = 0;  // a gathered operand's next gather uses its other slot
  auto gather = [&](bool of_a, int dim) {
    using memory::Slot;
    t.timed(&Timers::comm, "allgather", -1, [&] {
      if (of_a)
        A = &Ag.emplace(sharded::allgather_dim(
            *A, dim, gathers_a++ % 2 == 0 ? Slot::StagedA0 : Slot::StagedA1));
      else
        B = &Bg.emplace(sharded::allgather_dim(
            *B, dim, gathers_b++ % 2 == 0 ? Slot::StagedB0 : Slot::StagedB1));
    });
  };
  const double size_a = double(x.A.rows()) * double(x.A.cols());
  const double size_b = double(x.B.rows()) * double(x.B.cols());
  // 1. k sharded differently on both sides.
  {
    const Axes ka = A->layout().dim_axes(da), kb = B->layout().dim_axes(db);
    if (!ka.empty() && !kb.empty() && ka != kb)
      gather(size_a <= size_b, size_a <= size_b ? da : db);
  }
  // 2. case 4: a mesh axis shards both non-contracting dimensions.
  if (sharded::intersects(A->layout().dim_axes(ia), B->layout().dim_axes(jb))) {
    const Axes& c_rows = x.C.layout().dim_axes(0);
    const bool c_wants_rows = sharded::intersects(c_rows, A->layout().dim_axes(ia));
    const bool gather_b =
        c_wants_rows || (!sharded::intersects(x.C.layout().dim_axes(1), B->layout().dim_axes(jb)) &&
                         size_b <= size_a);
    gather(!gather_b, gather_b ? jb : ia);
  }
  // 3. only one side sharded on k: gather it, or slice the other side and reduce later.
  {
    const Axes ka = A->layout().dim_axes(da), kb = B->layout().dim_axes(db);
    if (ka.empty() != kb.empty()) {
      const bool a_side = !ka.empty();
      const DistMatrix<T>& X = a_side ? *A : *B;
      const int kd = a_side ? da : db;
      const double gather_words = double(X.layout().rows()) * double(X.layout().cols()) /
                                  double(X.layout().map(1 - kd).nprocs);
      const double reduce_words =
          sharded::reduce_words(x.C.layout(), x.C.rows(), x.C.cols(), A->layout().dim_axes(ia),
                                B->layout().dim_axes(jb), a_side ? ka : kb);
      // Slicing the other operand along k is impossible when its own sharding uses K's axes.
      const Axes& other = a_side ? B->layout().dim_axes(jb) : A->layout().dim_axes(ia);
      if (sharded::intersects(a_side ? ka : kb, other) || gather_words <= reduce_words)
        gather(a_side, kd);
    }
  }
  // 4. local multiply into C_part (straight into C when the layouts agree).
  const Layout part = sharded::product_layout(*A, x.opA, *B, x.opB, x.C.layout().mesh());
  const bool direct = part.same_distribution(x.C.layout());
  std::optional<DistMatrix<T>> P;
  prologue(x.C.mesh().comm(), [&] {
    if (!direct) P.emplace(matrix::pooled<T>(x.C.mesh(), part, memory::Slot::StagedC0));
  });
  t.timed(&Timers::gemm, [&] {
    if (direct) sharded::local_multiply(x.opA, x.opB, x.alpha, *A, *B, x.beta, x.C);
    else sharded::local_multiply(x.opA, x.opB, x.alpha, *A, *B, T(0), *P);
  });
  if (direct) return;
  // 5. reduce / place into C.
  t.timed(&Timers::comm, "reduce", -1, [&] { reduce_partials(*P, x.beta, x.C); });
}

SHARDMM_INSTANTIATE_RUN(sharded_run)

}  // namespace shardmm::algo
