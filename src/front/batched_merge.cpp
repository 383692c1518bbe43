// The merged form of a batched product with one shared operand: the batch folded into one
// larger product on the slice mesh.
//   shared B: C[b] = op(A[b]) op(B) for every local b is [C[0]; C[1]; ...] = [op(A[0]); ...]
//             op(B): op(A)'s rows and C's rows stacked, one (b_loc m) x n x k product;
//   shared A: [C[0], C[1], ...] = op(A) [op(B[0]), op(B[1]), ...]: columns stacked, one
//             m x (b_loc n) x k product.
// The stacked dimension is not cut on the slice mesh (merge_obstacle), so every rank of a
// slice mesh stacks its own tiles (copies in the workspace, no communication) and the one
// gemm moves the shared operand (if at all) once instead of once per batch element.
#include <algorithm>
#include <sstream>

#include "core/instantiate.hpp"
#include "front/batched.hpp"
#include "front/resolve.hpp"
#include "matrix/pooled.hpp"
#include "plan/request.hpp"
#include "shardmm/error.hpp"

namespace shardmm::front {
namespace {

/// The stored dimension of X that op(X)'s rows (want_rows) or columns run along.
int stored_dim(Op op, bool want_rows) { return (op == Op::N) == want_rows ? 0 : 1; }

bool cut_on_slice(const Layout& L, int dim) { return !L.mesh().long_axes(L.dim_axes(dim)).empty(); }

/// The slice layout with stored dimension `dim` stacked `count` times (replicated).
Layout stacked_layout(const Layout& slice, int dim, index_t count) {
  ShardingSpec s = slice.spec();
  const std::string label = s.dims[dim].label;
  s.dims[dim] = DimSpec();
  s.dims[dim].label = label;
  const index_t rows = dim == 0 ? slice.rows() * count : slice.rows();
  const index_t cols = dim == 1 ? slice.cols() * count : slice.cols();
  return Layout(slice.mesh(), rows, cols, s);
}

/// Copies the local tiles of X into (to_merged) or out of the stacked matrix M: tile b's
/// element (i, j) is M's (b r + i, j) when dim == 0, (i, b c + j) when dim == 1.
template <class T>
void stack_tiles(const BatchedMatrix<T>& X, DistMatrix<T>& M, int dim, bool to_merged) {
  const index_t r = X.local_rows(), c = X.local_cols();
  for (index_t b = 0; b < X.local_batch(); ++b) {
    const T* tile = X.data() + b * X.stride();
    for (index_t j = 0; j < c; ++j) {
      T* col = &M.local(dim == 0 ? b * r : 0, dim == 1 ? b * c + j : j);
      if (to_merged) std::copy_n(tile + j * X.ld(), r, col);
      else std::copy_n(col, r, const_cast<T*>(tile) + j * X.ld());  // NOLINT: C's own tiles
    }
  }
}

}  // namespace

template <Scalar T>
std::string merge_obstacle(const BatchCall<T>& call) {
  if ((call.A == nullptr) == (call.B == nullptr))
    return "both A and B are batched (a merged product needs one operand shared by the batch)";
  const bool shared_b = call.B == nullptr;
  const BatchedMatrix<T>& X = shared_b ? *call.A : *call.B;
  const Op op = shared_b ? call.opA : call.opB;
  const int dim = stored_dim(op, shared_b);
  const char* what = shared_b ? "rows of op(A)" : "columns of op(B)";
  if (cut_on_slice(X.layout().slice(), dim))
    return std::string("the ") + what + " are cut on the slice mesh (" + X.layout().to_string() +
           ")";
  if (cut_on_slice(call.C->layout().slice(), shared_b ? 0 : 1))
    return std::string("the ") + (shared_b ? "rows" : "columns") +
           " of C are cut on the slice mesh (" + call.C->layout().to_string() + ")";
  return {};
}

template <Scalar T>
algo::Problem merged_problem(const BatchCall<T>& call, index_t count) {
  const bool shared_b = call.B == nullptr;
  const BatchedMatrix<T>& X = shared_b ? *call.A : *call.B;
  const int x_dim = stored_dim(shared_b ? call.opA : call.opB, shared_b);
  const Layout stacked_x = stacked_layout(X.layout().slice(), x_dim, count);
  const Layout stacked_c = stacked_layout(call.C->layout().slice(), shared_b ? 0 : 1, count);
  algo::Problem p;
  p.opA = call.opA;
  p.opB = call.opB;
  p.m = stacked_c.rows();
  p.n = stacked_c.cols();
  p.A = shared_b ? stacked_x : call.A_view->layout().regularized();
  p.B = shared_b ? call.B_view->layout().regularized() : stacked_x;
  p.k = call.opA == Op::N ? p.A.cols() : p.A.rows();
  p.C = stacked_c;
  p.mesh = stacked_c.mesh();
  return p;
}

template <Scalar T, class S>
GemmReport run_merged(BatchCall<T>& call, S alpha, S beta, const Options& options) {
  BatchedMatrix<T>& C = *call.C;
  const index_t lb = C.local_batch();
  if (lb == 0) return {};
  const bool shared_b = call.B == nullptr;
  const BatchedMatrix<T>& X = shared_b ? *call.A : *call.B;
  const int x_dim = stored_dim(shared_b ? call.opA : call.opB, shared_b);
  const int c_dim = shared_b ? 0 : 1;
  const Mesh mesh = C.slice_mesh();
  DistMatrix<T> Xm =
      matrix::pooled<T>(mesh, stacked_layout(X.layout().slice(), x_dim, lb), memory::Slot::MergedX);
  DistMatrix<T> Cm =
      matrix::pooled<T>(mesh, stacked_layout(C.layout().slice(), c_dim, lb), memory::Slot::MergedC);
  stack_tiles(X, Xm, x_dim, true);
  if (beta != S(0)) stack_tiles(C, Cm, c_dim, true);  // beta == 0 never reads C
  GemmReport rep = shared_b ? gemm(call.opA, call.opB, alpha, Xm, *call.B_view, beta, Cm, options)
                            : gemm(call.opA, call.opB, alpha, *call.A_view, Xm, beta, Cm, options);
  stack_tiles(C, Cm, c_dim, false);
  return rep;
}

#define SHARDMM_INSTANTIATE_MERGE(T)                                   \
  template std::string merge_obstacle(const BatchCall<T>&);            \
  template algo::Problem merged_problem(const BatchCall<T>&, index_t); \
  template GemmReport run_merged(BatchCall<T>&, T, T, const Options&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE_MERGE)
#undef SHARDMM_INSTANTIATE_MERGE

// BatchMerge::Auto's price (merge_pays) of the two ways to run a batch with a shared operand,
// on the slice mesh of the busiest rank (the most batch elements, b):
//   elements: b x (the planner's predicted seconds for one element's product + c0);
//   merged:   the planner's predicted seconds for the (b m) x n x k (or m x (b n) x k)
//             product + c0 + the copies: the batched operand's and C's local tiles stacked into
//             the workspace and C's copied back (C's twice when beta != 0), at the profile's
//             bytes_per_s;
// c0, a product's fixed cost (the call's set-up, a BLAS call on a small shape), is taken as
// one message latency (MachineProfile::latency_s). Merging wins where the shared operand
// would move once per element, or where the products are small; the copies make it lose on
// large products that move nothing. Global metadata only: every rank decides alike.
namespace {

/// Seconds the planner predicts for its choice for problem p on `mesh`.
template <Scalar T>
double predicted_seconds(const algo::Problem& p, const Mesh& mesh, const Options& options) {
  const plan::Request q = request_for(p, mesh, dtype_of<T>(), options);
  return plan::plan_gemm(q).chosen.seconds;
}

/// The most batch elements a rank holds (over every process along the batch's axes).
index_t busiest_batch(const BatchedLayout& L) {
  const DimMap& map = L.batch_map();
  index_t most = 0;
  for (int p = 0; p < map.nprocs; ++p) most = std::max(most, map.local_extent(p));
  return most;
}

}  // namespace

template <Scalar T>
bool merge_pays(const BatchCall<T>& call, const algo::Problem& element, bool reads_c,
                const Options& options, std::string& why) {
  const BatchedMatrix<T>& C = *call.C;
  const index_t b = busiest_batch(C.layout());
  if (b <= 1) {
    why = "merge: at most one batch element per rank, nothing to merge";
    return false;
  }
  const Mesh slice = C.slice_mesh();
  const MachineProfile profile = MachineProfile::from_environment();
  const double c0 = profile.latency_s;
  const double one = predicted_seconds<T>(element, slice, options);
  const double merged = predicted_seconds<T>(merged_problem(call, b), slice, options);
  const BatchedMatrix<T>& X = call.A ? *call.A : *call.B;
  const double per_rank = double(std::max(1, slice.size()));  // balanced tiles
  const double elements = double(b) *
                          (double(X.rows()) * double(X.cols()) +
                           double(C.rows()) * double(C.cols()) * (reads_c ? 2.0 : 1.0)) /
                          per_rank;
  const double copies = elements * double(sizeof(T)) / profile.bytes_per_s;
  const double each = double(b) * (one + c0), together = merged + c0 + copies;
  std::ostringstream s;
  s << "merge: " << b << " elements " << each << " s one by one, " << together
    << " s merged (copies " << copies << " s)";
  why = s.str();
  return together < each;
}

#define SHARDMM_INSTANTIATE_PRICE(T)                                                        \
  template bool merge_pays(const BatchCall<T>&, const algo::Problem&, bool, const Options&, \
                           std::string&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE_PRICE)
#undef SHARDMM_INSTANTIATE_PRICE

}  // namespace shardmm::front
