// gemm_batched: validate (global metadata: meshes, batch sizes, shapes; every rank alike) ->
// a batched operand that cuts the batch unlike C is moved into C's cut (batched_regroup.cpp)
// -> a shared operand that is cut over the batch's axes is gathered over them
// (redistribute, on the whole mesh) and viewed on the slice mesh -> either one gemm per local
// batch element on the slice mesh (the sub-communicator of the axes the batch is not cut
// over: nothing moves along the batch's axes) or, with one operand shared, one merged gemm
// (batched_merge.cpp) -> one agreement over the whole mesh, so a failure in any slice
// mesh's product throws on every rank.
#include <mpi.h>

#include <algorithm>
#include <sstream>

#include "comm/agree.hpp"
#include "comm/wait.hpp"
#include "comm/wire.hpp"
#include "core/instantiate.hpp"
#include "front/batched.hpp"
#include "front/planned.hpp"
#include "shardmm/error.hpp"
#include "shardmm/redistribute.hpp"
#include "trace/call.hpp"

namespace shardmm {
namespace {

DimSpec replicated_dim(const std::string& label) {
  DimSpec d;
  d.label = label;
  return d;
}

struct BatchedOpShape {
  index_t rows = 0, cols = 0;  // of op(X)
  std::string text;            // the operand's layout, for messages
};

template <Scalar T>
BatchedOpShape batched_op_shape(Op op, const BatchedMatrix<T>* X, const DistMatrix<T>* shared) {
  const index_t r = X ? X->rows() : shared->rows(), c = X ? X->cols() : shared->cols();
  const std::string text = X ? X->layout().to_string() : shared->layout().to_string() + " (shared)";
  return op == Op::N ? BatchedOpShape{r, c, text} : BatchedOpShape{c, r, text};
}

template <Scalar T>
void check_batch(const char* name, const BatchedMatrix<T>& X, const BatchedMatrix<T>& C) {
  if (!X.mesh().same_as(C.mesh()))
    throw InvalidArgument(std::string("gemm_batched: ") + name + " and C are not on one mesh");
  if (X.batch() != C.batch())
    throw DimensionMismatch("gemm_batched: batch sizes differ: " + std::string(name) + " " +
                            X.layout().to_string() + ", C " + C.layout().to_string());
}

template <Scalar T>
void validate_batched(Op opA, const BatchedMatrix<T>* A, const DistMatrix<T>* A_shared, Op opB,
                      const BatchedMatrix<T>* B, const DistMatrix<T>* B_shared,
                      const BatchedMatrix<T>& C) {
  if (A) check_batch("A", *A, C);
  if (B) check_batch("B", *B, C);
  for (const DistMatrix<T>* S : {A_shared, B_shared})
    if (S && !S->mesh().same_as(C.mesh()))
      throw InvalidArgument("gemm_batched: the shared operand " + S->layout().to_string() +
                            " is not on C's mesh");
  const BatchedOpShape a = batched_op_shape(opA, A, A_shared),
                       b = batched_op_shape(opB, B, B_shared);
  if (a.cols != b.rows || a.rows != C.rows() || b.cols != C.cols())
    throw DimensionMismatch("gemm_batched: op(A) is " + std::to_string(a.rows) + "x" +
                            std::to_string(a.cols) + ", op(B) " + std::to_string(b.rows) + "x" +
                            std::to_string(b.cols) + ", C " + std::to_string(C.rows()) + "x" +
                            std::to_string(C.cols()) + " per batch element (opA " + to_string(opA) +
                            ", opB " + to_string(opB) + "; A " + a.text + ", B " + b.text + ", C " +
                            C.layout().to_string() + ")");
}

bool on_batch_axis(const std::string& axis, const BatchedLayout& cut) {
  for (const auto& a : cut.batch_axes())
    if (cut.mesh().axis_index(a) == cut.mesh().axis_index(axis)) return true;
  return false;
}

/// X's sharding with axis names resolved (bc(..) names its axes by position) and the batch's
/// axes dropped: a dimension left with no axis is replicated, one left with some is blocked.
ShardingSpec without_batch_axes(const Layout& X, const BatchedLayout& cut) {
  ShardingSpec s = X.spec();
  const MeshShape& mesh = X.mesh();
  // the caller's spelling of an axis, or the mesh's name where bc(..) numbered it
  const auto name = [&](int d, std::size_t i) {
    const std::string& a = X.spec().dims[d].axes[i];
    return a.empty() || a[0] == '#' ? mesh.names[X.dim_axes(d)[i]] : a;
  };
  for (int d = 0; d < 2; ++d) {
    std::vector<std::string> keep;
    for (std::size_t i = 0; i < X.dim_axes(d).size(); ++i)
      if (!on_batch_axis(name(d, i), cut)) keep.push_back(name(d, i));
    if (keep.size() != X.dim_axes(d).size()) s.dims[d] = replicated_dim(s.dims[d].label);
    if (!keep.empty() && keep.size() != X.dim_axes(d).size()) {
      s.dims[d].kind = DimSpec::Kind::Block;
      s.dims[d].axes = keep;
    } else if (!keep.empty()) {
      s.dims[d].axes = keep;
    }
  }
  std::vector<std::string> unreduced;
  for (const auto& a : X.spec().unreduced)
    if (!on_batch_axis(a, cut)) unreduced.push_back(a);
  s.unreduced = unreduced;
  return s;
}

/// The shared operand as a view on C's slice mesh (gathered over the batch's axes first when
/// it is cut over them: a collective over the whole mesh).
template <Scalar T>
void view_shared(const DistMatrix<T>& S, const BatchedMatrix<T>& C,
                 std::optional<DistMatrix<T>>& view, std::optional<DistMatrix<T>>& held) {
  const ShardingSpec spec = without_batch_axes(S.layout(), C.layout());
  const Layout full(S.layout().mesh(), S.rows(), S.cols(), spec);
  const DistMatrix<T>* src = &S;
  if (!full.same_distribution(S.layout()) || S.layout().is_unreduced() != full.is_unreduced()) {
    const comm::OperandMoves operand;  // may travel in a 16-bit wire format
    held.emplace(redistribute(S, full));
    src = &*held;
  }
  const Layout on_slice(C.layout().slice().mesh(), S.rows(), S.cols(), spec);
  view.emplace(DistMatrix<T>::view(C.slice_mesh(), on_slice, const_cast<T*>(src->data()),  // NOLINT
                                   src->ld()));
}

void add_report(GemmReport& sum, const GemmReport& r, bool first) {
  if (first) {
    sum.algorithm = r.algorithm;
    sum.grid = r.grid;
    sum.detail = r.detail;
    sum.blas_threads = r.blas_threads;
  }
  sum.bytes_sent += r.bytes_sent;
  sum.bytes_received += r.bytes_received;
  sum.messages += r.messages;
  sum.redist_bytes_sent += r.redist_bytes_sent;
  sum.redist_bytes_received += r.redist_bytes_received;
  sum.seconds_gemm += r.seconds_gemm;
  sum.seconds_comm += r.seconds_comm;
  sum.seconds_redist += r.seconds_redist;
}

std::string batch_text(const BatchedLayout& L, index_t local) {
  std::ostringstream s;
  s << L.batch();
  if (L.batch_axes().empty()) s << " on every slice";
  else {
    s << " over";
    for (const auto& a : L.batch_axes()) s << " " << a;
    s << " (" << L.batch_map().nprocs << ")";
  }
  s << ", " << local << " here";
  return s.str();
}

/// The problem every batch element poses on the slice mesh: op(A[b]) op(B[b]) in the slices'
/// layouts (a shared operand's view on the slice mesh).
template <Scalar T>
algo::Problem element_problem(const front::BatchCall<T>& call) {
  const BatchedMatrix<T>& C = *call.C;
  algo::Problem p;
  p.opA = call.opA;
  p.opB = call.opB;
  const Layout& a = call.A ? call.A->layout().slice() : call.A_view->layout();
  const Layout& b = call.B ? call.B->layout().slice() : call.B_view->layout();
  p.m = C.rows();
  p.n = C.cols();
  p.k = call.opA == Op::N ? a.cols() : a.rows();
  p.A = a.regularized();
  p.B = b.regularized();
  p.C = C.layout().slice().regularized();
  p.mesh = C.layout().slice().mesh();
  return p;
}

/// The local batch elements, one product each with the call's one plan (no planning and no
/// agreement per element; each is collective over the slice mesh).
template <Scalar T>
void run_elements(front::BatchCall<T>& call, const front::Planned& plan, const algo::Problem& p,
                  T alpha, T beta, BatchedReport& report) {
  BatchedMatrix<T>& C = *call.C;
  if (p.m == 0 || p.n == 0) return;
  for (index_t b = 0; b < C.local_batch(); ++b) {
    const trace::Span span("batch element", trace::Cat::Phase);
    const DistMatrix<T> A = call.A ? call.A->slice(b) : *call.A_view;
    const DistMatrix<T> B = call.B ? call.B->slice(b) : *call.B_view;
    DistMatrix<T> Cb = C.slice(b);
    add_report(report.gemm, front::run_product(plan, p, call.opA, call.opB, alpha, A, B, beta, Cb),
               b == 0);
    ++report.products;
  }
}

/// Decides merged or one by one (Auto: by price) and plans the elements' product once, all
/// rank-local; the agreement over the whole mesh makes a failure on any rank throw on every
/// rank. Then runs the merged product or the elements.
template <Scalar T>
void run_batch(front::BatchCall<T>& call, T alpha, T beta, const Options& options, BatchMerge merge,
               const std::string& obstacle, BatchedReport& report) {
  BatchedMatrix<T>& C = *call.C;
  const algo::Problem p = element_problem(call);
  const bool trivial = p.m == 0 || p.n == 0 || p.k == 0 || alpha == T(0);
  front::Planned plan;
  bool merged = merge == BatchMerge::Always;  // the caller checked that it can
  comm::agreed(C.mesh().comm(), "plan batched products", [&] {
    if (merge == BatchMerge::Auto && obstacle.empty())
      merged = front::merge_pays(call, p, beta != T(0), options, report.merge_why);
    if (!merged) plan = front::plan_product<T>(p, C.slice_mesh(), trivial, options);
  });
  comm::agreed(C.mesh().comm(), "batched products", [&] {
    if (!merged) return run_elements(call, plan, p, alpha, beta, report);
    report.merged = true;
    report.gemm = front::run_merged(call, alpha, beta, options);
    report.products = C.local_batch() > 0 ? 1 : 0;
  });
}

}  // namespace

namespace front {

template <Scalar T>
BatchedReport batched_products(Op opA, Op opB, T alpha, const BatchedMatrix<T>* A,
                               const DistMatrix<T>* A_shared, const BatchedMatrix<T>* B,
                               const DistMatrix<T>* B_shared, T beta, BatchedMatrix<T>& C,
                               const Options& caller_options, BatchMerge merge) {
  validate_batched(opA, A, A_shared, opB, B, B_shared, C);
  const Options options = wire_checked<T>(caller_options);
  BatchedReport report;
  report.batch = batch_text(C.layout(), C.local_batch());
  if (!C.mesh().active()) return report;
  const comm::WireScope wire(options.wire);  // operands only: see comm/wire.hpp
  const comm::WaitScope waiting(options.wait);
  trace::Call trace_call(C.mesh().comm(), "gemm_batched", options.trace);
  const double t0 = MPI_Wtime();
  std::optional<BatchedMatrix<T>> A_cut, B_cut;  // A, B moved into C's batch cut (if not in it)
  Regrouped moved;
  BatchCall<T> call{
      opA, opB, regrouped("A", A, C, A_cut, moved), regrouped("B", B, C, B_cut, moved), {}, {},
      {},  &C};
  const std::string obstacle = merge_obstacle(call);
  if (merge == BatchMerge::Always && !obstacle.empty())
    throw NotSupported("gemm_batched: cannot merge the batch into one product: " + obstacle);
  if (A_shared) view_shared(*A_shared, C, call.A_view, call.held);
  if (B_shared) view_shared(*B_shared, C, call.B_view, call.held);
  run_batch(call, alpha, beta, options, merge, obstacle, report);
  report_regrouped(moved, report);
  report.gemm.seconds_total = MPI_Wtime() - t0;
  trace_call.done();
  return report;
}

}  // namespace front

namespace {

/// The layout gemm_batched's C takes for these operands (batched_output_layout).
BatchedLayout output_for(Op opA, Op opB, const BatchedLayout& cut, const ShardingSpec& a,
                         const ShardingSpec& b, index_t m, index_t n) {
  BatchedSpec s;
  s.batch = cut.spec().batch;
  s.matrix.name = "C";
  s.matrix.dims[0] = a.dims[opA == Op::N ? 0 : 1];
  s.matrix.dims[1] = b.dims[opB == Op::N ? 1 : 0];
  s.matrix.dims[0].label = "I";
  s.matrix.dims[1].label = "J";
  for (const auto& x : s.matrix.dims[0].axes)
    for (const auto& y : s.matrix.dims[1].axes)
      if (cut.mesh().axis_index(x) == cut.mesh().axis_index(y))
        s.matrix.dims[1] = replicated_dim("J");
  return {cut.mesh(), cut.batch(), m, n, s};
}

/// Validation against a stand-in C of the right shape (no storage: only metadata is read).
template <Scalar T>
BatchedLayout output_layout_impl(Op opA, Op opB, const BatchedMatrix<T>* A,
                                 const DistMatrix<T>* A_shared, const BatchedMatrix<T>* B,
                                 const DistMatrix<T>* B_shared) {
  const BatchedMatrix<T>& X = A ? *A : *B;
  const BatchedOpShape a = batched_op_shape(opA, A, A_shared),
                       b = batched_op_shape(opB, B, B_shared);
  if (a.cols != b.rows)
    throw DimensionMismatch("batched_output_layout: op(A) is " + std::to_string(a.rows) + "x" +
                            std::to_string(a.cols) + ", op(B) " + std::to_string(b.rows) + "x" +
                            std::to_string(b.cols) + " (A " + a.text + ", B " + b.text + ")");
  if (A && B) check_batch("A", *A, *B);
  const auto spec_of = [&](const BatchedMatrix<T>* Y, const DistMatrix<T>* S) {
    return Y ? front::in_batch_cut_of(Y->layout(), X.layout()).slice().spec()
             : without_batch_axes(S->layout(), X.layout());
  };
  return output_for(opA, opB, X.layout(), spec_of(A, A_shared), spec_of(B, B_shared), a.rows,
                    b.cols);
}

}  // namespace

template <Scalar T>
BatchedLayout batched_output_layout(Op opA, Op opB, const BatchedMatrix<T>& A,
                                    const BatchedMatrix<T>& B) {
  return output_layout_impl<T>(opA, opB, &A, nullptr, &B, nullptr);
}
template <Scalar T>
BatchedLayout batched_output_layout(Op opA, Op opB, const BatchedMatrix<T>& A,
                                    const DistMatrix<T>& B) {
  return output_layout_impl<T>(opA, opB, &A, nullptr, nullptr, &B);
}
template <Scalar T>
BatchedLayout batched_output_layout(Op opA, Op opB, const DistMatrix<T>& A,
                                    const BatchedMatrix<T>& B) {
  return output_layout_impl<T>(opA, opB, nullptr, &A, &B, nullptr);
}

#define SHARDMM_INSTANTIATE_BATCHED_OUTPUT(T)                                   \
  template BatchedLayout batched_output_layout(Op, Op, const BatchedMatrix<T>&, \
                                               const BatchedMatrix<T>&);        \
  template BatchedLayout batched_output_layout(Op, Op, const BatchedMatrix<T>&, \
                                               const DistMatrix<T>&);           \
  template BatchedLayout batched_output_layout(Op, Op, const DistMatrix<T>&,    \
                                               const BatchedMatrix<T>&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE_BATCHED_OUTPUT)
SHARDMM_FOR_EACH_HALF(SHARDMM_INSTANTIATE_BATCHED_OUTPUT)
#undef SHARDMM_INSTANTIATE_BATCHED_OUTPUT

std::string BatchedReport::to_string() const {
  std::ostringstream s;
  s << "batch " << batch << ": " << products << (merged ? " merged product" : " products") << "; "
    << gemm.to_string();
  if (!merge_why.empty()) s << " (" << merge_why << ")";
  if (!regrouped.empty()) s << "; first " << regrouped;
  return s.str();
}

template <Scalar T>
BatchedReport gemm_batched(Op opA, Op opB, T alpha, const BatchedMatrix<T>& A,
                           const BatchedMatrix<T>& B, T beta, BatchedMatrix<T>& C,
                           const Options& options, BatchMerge merge) {
  return front::batched_products<T>(opA, opB, alpha, &A, nullptr, &B, nullptr, beta, C, options,
                                    merge);
}

template <Scalar T>
BatchedReport gemm_batched(Op opA, Op opB, T alpha, const BatchedMatrix<T>& A,
                           const DistMatrix<T>& B, T beta, BatchedMatrix<T>& C,
                           const Options& options, BatchMerge merge) {
  return front::batched_products<T>(opA, opB, alpha, &A, nullptr, nullptr, &B, beta, C, options,
                                    merge);
}

template <Scalar T>
BatchedReport gemm_batched(Op opA, Op opB, T alpha, const DistMatrix<T>& A,
                           const BatchedMatrix<T>& B, T beta, BatchedMatrix<T>& C,
                           const Options& options, BatchMerge merge) {
  return front::batched_products<T>(opA, opB, alpha, nullptr, &A, &B, nullptr, beta, C, options,
                                    merge);
}

#define SHARDMM_INSTANTIATE_GEMM_BATCHED(T)                                                        \
  template BatchedReport gemm_batched(Op, Op, T, const BatchedMatrix<T>&, const BatchedMatrix<T>&, \
                                      T, BatchedMatrix<T>&, const Options&, BatchMerge);           \
  template BatchedReport gemm_batched(Op, Op, T, const BatchedMatrix<T>&, const DistMatrix<T>&, T, \
                                      BatchedMatrix<T>&, const Options&, BatchMerge);              \
  template BatchedReport gemm_batched(Op, Op, T, const DistMatrix<T>&, const BatchedMatrix<T>&, T, \
                                      BatchedMatrix<T>&, const Options&, BatchMerge);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE_GEMM_BATCHED)
#undef SHARDMM_INSTANTIATE_GEMM_BATCHED

#define SHARDMM_INSTANTIATE_GEMM_BATCHED(T)                                              \
  template BatchedReport front::batched_products(                                        \
      Op, Op, T, const BatchedMatrix<T>*, const DistMatrix<T>*, const BatchedMatrix<T>*, \
      const DistMatrix<T>*, T, BatchedMatrix<T>&, const Options&, BatchMerge);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE_GEMM_BATCHED)
#undef SHARDMM_INSTANTIATE_GEMM_BATCHED

}  // namespace shardmm
