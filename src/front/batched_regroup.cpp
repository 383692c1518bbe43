// gemm_batched's operands that cut the batch differently from C: each is first moved into C's
// batch cut (a temporary BatchedMatrix: C's batch dimension, the operand's own matrix part
// less C's batch axes), by the batched redistribution (matrix/batched_redistribute.cpp: one
// exchange over the whole mesh; each rank receives the temporary's tiles less what it already
// holds). Then every product is local to one slice mesh, as when the cuts agree.
#include <optional>
#include <string>
#include <type_traits>

#include "comm/agree.hpp"
#include "comm/wire.hpp"
#include "core/instantiate.hpp"
#include "front/batched.hpp"

namespace shardmm::front {
namespace {

bool cuts_batch(const BatchedLayout& cut, const std::string& axis) {
  for (const auto& a : cut.batch_axes())
    if (cut.mesh().axis_index(a) == cut.mesh().axis_index(axis)) return true;
  return false;
}

/// One matrix dimension of X's slice layout with the axes of `cut`'s batch dropped: kept as
/// it is when none is dropped, else blocked over the axes left (replicated when none is).
DimSpec without_cut_axes(const Layout& slice, int d, const BatchedLayout& cut) {
  DimSpec dim = slice.spec().dims[d];
  std::vector<std::string> keep;
  for (int a : slice.dim_axes(d))
    if (!cuts_batch(cut, slice.mesh().names[a])) keep.push_back(slice.mesh().names[a]);
  if (keep.size() == slice.dim_axes(d).size()) return dim;
  DimSpec out;
  out.label = dim.label;
  out.kind = keep.empty() ? DimSpec::Kind::Replicated : DimSpec::Kind::Block;
  out.axes = keep;
  return out;
}

}  // namespace

BatchedLayout in_batch_cut_of(const BatchedLayout& X, const BatchedLayout& cut) {
  BatchedSpec s = X.spec();
  s.batch = cut.spec().batch;
  s.batch.label = X.spec().batch.label;
  for (int d = 0; d < 2; ++d) s.matrix.dims[d] = without_cut_axes(X.slice(), d, cut);
  return {X.mesh(), X.batch(), X.rows(), X.cols(), s};
}

template <Scalar T>
const BatchedMatrix<T>* regrouped(const char* name, const BatchedMatrix<T>* X,
                                  const BatchedMatrix<T>& C, std::optional<BatchedMatrix<T>>& copy,
                                  Regrouped& held) {
  if (X == nullptr || X->layout().same_batch_cut(C.layout())) return X;
  const BatchedLayout layout = in_batch_cut_of(X->layout(), C.layout());
  comm::agreed(C.mesh().comm(), "batched regroup", [&] { copy.emplace(C.mesh(), layout); });
  const comm::OperandMoves operand;  // may travel in a 16-bit wire format
  const RedistStats s = redistribute(*X, *copy);
  held.moved.bytes_sent += s.bytes_sent;
  held.moved.bytes_received += s.bytes_received;
  held.moved.messages_sent += s.messages_sent;
  // words: elements as they travel (f32 under a 16-bit wire: 2 bytes each)
  const std::int64_t words = s.bytes_received / std::int64_t(comm::on_wire<T>() ? 2 : sizeof(T));
  held.text += std::string(held.text.empty() ? "" : "; ") + name + " " +
               X->layout().spec().to_string() + " moved into " + layout.spec().to_string() + " (" +
               std::to_string(words) + " words received here)";
  return &*copy;
}

void report_regrouped(const Regrouped& held, BatchedReport& report) {
  report.regrouped = held.text;
  report.gemm.redist_bytes_sent += held.moved.bytes_sent;
  report.gemm.redist_bytes_received += held.moved.bytes_received;
}

#define SHARDMM_INSTANTIATE_REGROUP(T)                                             \
  template const BatchedMatrix<T>* regrouped(const char*, const BatchedMatrix<T>*, \
                                             const BatchedMatrix<T>&,              \
                                             std::optional<BatchedMatrix<T>>&, Regrouped&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE_REGROUP)
#undef SHARDMM_INSTANTIATE_REGROUP

}  // namespace shardmm::front
