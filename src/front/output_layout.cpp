// gemm_output_layout: the layout of a C the caller has not made yet, chosen by the planner.
// Start from the sharding rule's layout (op(A)'s rows, op(B)'s columns: where the product
// lands when nothing moves), plan gemm for a C there, and take the layout the chosen
// algorithm works C in; when that differs, plan again for a C there. Global metadata only:
// no communication, the same on every rank.
#include <algorithm>

#include "core/instantiate.hpp"
#include "front/resolve.hpp"
#include "shardmm/gemm.hpp"

namespace shardmm {
namespace {

// Dimension `dim` of L's spec with its mesh axes named (bc(mb,nb) leaves them implicit).
DimSpec named_dim(const Layout& L, int dim) {
  DimSpec d = L.spec().dims[dim];
  d.axes.clear();
  for (int axis : L.dim_axes(dim)) d.axes.push_back(L.mesh().names[axis]);
  return d;
}

bool share_an_axis(const DimSpec& a, const DimSpec& b) {
  return std::any_of(a.axes.begin(), a.axes.end(), [&](const std::string& x) {
    return std::find(b.axes.begin(), b.axes.end(), x) != b.axes.end();
  });
}

// JAX's sharding rule for a product: C's rows split as op(A)'s rows, its columns as op(B)'s
// columns (replicated where that would use a mesh axis twice).
Layout sharding_rule_layout(Op opA, Op opB, const Layout& A, const Layout& B) {
  ShardingSpec c;
  c.name = "C";
  c.dims[0] = named_dim(A, opA == Op::N ? 0 : 1);
  c.dims[1] = named_dim(B, opB == Op::N ? 1 : 0);
  if (share_an_axis(c.dims[0], c.dims[1])) c.dims[1] = DimSpec{};
  c.dims[0].label = "I";
  c.dims[1].label = "J";
  const index_t m = opA == Op::N ? A.rows() : A.cols(), n = opB == Op::N ? B.cols() : B.rows();
  return Layout(A.mesh(), m, n, c);
}

}  // namespace

template <Scalar T>
Layout gemm_output_layout(Op opA, Op opB, const DistMatrix<T>& A, const DistMatrix<T>& B,
                          const Options& options) {
  const index_t m = opA == Op::N ? A.rows() : A.cols(), n = opB == Op::N ? B.cols() : B.rows();
  Layout c =
      A.mesh().same_as(B.mesh())  // else validate says so
          ? sharding_rule_layout(opA, opB, A.layout().regularized(), B.layout().regularized())
          : Layout::replicated(A.mesh().shape(), m, n);
  constexpr int kPlannings = 3;  // a choice that moves C again after this keeps the last layout
  for (int round = 0; round < kPlannings; ++round) {
    const algo::Problem p = front::validate(opA, opB, A, B, c);
    if (p.m == 0 || p.n == 0 || p.k == 0) return c;  // gemm plans nothing
    const front::Resolved how =
        front::resolve(p, front::request_for(p, A.mesh(), dtype_of<T>(), options), options);
    if (how.remesh) return c;  // runs on another arrangement of the ranks: C moves anyway
    const Layout worked = front::make_setup(p, how.options).C;
    if (worked.same_distribution(c)) return c;
    c = Layout(worked.mesh(), worked.rows(), worked.cols(), [&] {
      ShardingSpec s = worked.spec();
      s.name = "C";
      return s;
    }());
  }
  return c;
}

#define SHARDMM_INSTANTIATE(T)                                                              \
  template Layout gemm_output_layout<T>(Op, Op, const DistMatrix<T>&, const DistMatrix<T>&, \
                                        const Options&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm
