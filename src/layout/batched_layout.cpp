// Batched layouts: name[batch, rows, cols]. The batch dimension is a dim of today's notation
// (B_X, B_{dp}:c, B); the rows and columns are a 2-D layout on the mesh's other axes (the
// slice mesh). Pure index math, no MPI.
#include <algorithm>
#include <cctype>

#include "shardmm/batched.hpp"
#include "shardmm/error.hpp"

namespace shardmm {
namespace {

std::string lowercase_axis(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Position of the first ',' inside the outer brackets that is outside an axis group {..}.
std::size_t first_dim_end(std::string_view text) {
  int depth = 0;
  bool inside = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[') inside = true;
    if (c == '{') ++depth;
    if (c == '}') --depth;
    if (inside && depth == 0 && c == ',') return i;
  }
  return std::string_view::npos;
}

[[noreturn]] void bad_batched(std::string_view text, const std::string& why, std::size_t pos) {
  throw ParseError("bad batched layout '" + std::string(text) + "': " + why, std::string(text),
                   pos);
}

/// The batch dim's text, parsed as the first dim of a 2-D spec "[<dim>,J]".
DimSpec parse_batch_dim(std::string_view text, std::size_t open, std::size_t comma) {
  const std::string dim(text.substr(open + 1, comma - open - 1));
  try {
    return ShardingSpec::parse("[" + dim + ",J]").dims[0];
  } catch (const ParseError& e) {
    bad_batched(text, "in the batch dimension: " + std::string(e.what()),
                open + std::min(e.position(), dim.size()));
  }
}

}  // namespace

BatchedSpec BatchedSpec::parse(std::string_view text) {
  const std::size_t open = text.find('[');
  const std::size_t comma = first_dim_end(text);
  if (open == std::string_view::npos || comma == std::string_view::npos)
    bad_batched(text, "expected name[batch,rows,cols], e.g. A[B_X,I,J_Y]", 0);
  BatchedSpec s;
  s.batch = parse_batch_dim(text, open, comma);
  const std::string rest =
      std::string(text.substr(0, open + 1)) + std::string(text.substr(comma + 1));
  try {
    s.matrix = ShardingSpec::parse(rest);
  } catch (const ParseError& e) {
    const std::size_t shift = e.position() > open ? comma - open : 0;
    bad_batched(text, "in the matrix part: " + std::string(e.what()), e.position() + shift);
  }
  if (!s.matrix.unreduced.empty())
    bad_batched(text, "a batched layout holds no partial sums ({U_..})", text.rfind('{'));
  for (const auto& a : s.batch.axes)
    for (const auto& d : s.matrix.dims)
      for (const auto& b : d.axes)
        if (lowercase_axis(a) == lowercase_axis(b))
          bad_batched(text, "mesh axis '" + a + "' cuts both the batch and a matrix dimension",
                      comma);
  return s;
}

std::string BatchedSpec::to_string() const {
  ShardingSpec both = matrix;  // print the batch dim with the 2-D printer, then splice it in
  both.dims[1] = both.dims[0];
  both.dims[0] = batch;
  const std::string b = both.to_string();  // name[<batch>,<rows>]
  std::string m = matrix.to_string();
  const std::size_t open = m.find('[');
  if (open == std::string::npos) return m;  // bc(..) shorthand cannot occur (parse rejects it)
  return m.substr(0, open + 1) + b.substr(open + 1, first_dim_end(b) - open) + m.substr(open + 1);
}

BatchedLayout::BatchedLayout(MeshShape mesh, index_t batch, index_t m, index_t n, BatchedSpec spec)
    : mesh_(std::move(mesh)), spec_(std::move(spec)) {
  if (batch < 0)
    throw InvalidArgument("batched layout " + spec_.to_string() + ": batch size " +
                          std::to_string(batch) + " is negative");
  if (!spec_.matrix.unreduced.empty())
    throw InvalidArgument("batched layout " + spec_.to_string() + ": no partial sums ({U_..})");
  int p = 1;
  for (const auto& a : spec_.batch.axes) p *= mesh_.sizes[mesh_.axis_index(a)];
  batch_.extent = batch;
  batch_.nprocs = p;
  batch_.src = spec_.batch.src;
  batch_.first = spec_.batch.first;
  switch (spec_.batch.kind) {
    case DimSpec::Kind::Replicated:
    case DimSpec::Kind::Block: batch_.nb = std::max<index_t>(1, (batch + p - 1) / p); break;
    case DimSpec::Kind::Cyclic: batch_.nb = 1; break;
    case DimSpec::Kind::BlockCyclic: batch_.nb = spec_.batch.nb; break;
  }
  if (batch_.src < 0 || batch_.src >= p)
    throw InvalidArgument("batched layout " + spec_.to_string() + ": source coordinate " +
                          std::to_string(batch_.src) + " is outside 0.." + std::to_string(p - 1));
  std::vector<std::string> names;
  std::vector<int> sizes;
  for (const auto& a : slice_axes()) {
    names.push_back(a);
    sizes.push_back(mesh_.sizes[mesh_.axis_index(a)]);
  }
  if (names.empty()) {  // the batch uses every axis: each product is on one rank
    names.emplace_back("self");
    sizes.push_back(1);
  }
  slice_ = Layout(MeshShape(names, sizes, MeshShape::Order::RowMajor), m, n, spec_.matrix);
}

std::vector<std::string> BatchedLayout::slice_axes() const {
  std::vector<std::string> out;
  for (const auto& name : mesh_.names) {
    bool batch_axis = false;
    for (const auto& a : spec_.batch.axes)
      batch_axis = batch_axis || lowercase_axis(a) == lowercase_axis(name);
    if (!batch_axis) out.push_back(name);
  }
  return out;
}

int BatchedLayout::batch_coord(const std::vector<int>& mesh_coords) const {
  int c = 0;
  for (const auto& a : spec_.batch.axes) {
    const int i = mesh_.axis_index(a);
    c = c * mesh_.sizes[i] + mesh_coords[i];
  }
  return c;
}

index_t BatchedLayout::local_batch(const std::vector<int>& mesh_coords) const {
  return batch_.local_extent(batch_coord(mesh_coords));
}

std::vector<int> BatchedLayout::slice_coords(const std::vector<int>& mesh_coords) const {
  std::vector<int> out;
  for (const auto& a : slice_axes()) out.push_back(mesh_coords[mesh_.axis_index(a)]);
  if (out.empty()) out.push_back(0);
  return out;
}

bool BatchedLayout::same_batch_cut(const BatchedLayout& other) const {
  // Size-1 axes cut nothing but still decide the slice mesh the elements are multiplied on.
  if (slice_axes() != other.slice_axes()) return false;
  if (batch_.nprocs == 1 && other.batch_.nprocs == 1) return batch_.extent == other.batch_.extent;
  if (spec_.batch.axes.size() != other.spec_.batch.axes.size()) return false;
  for (std::size_t i = 0; i < spec_.batch.axes.size(); ++i)
    if (lowercase_axis(spec_.batch.axes[i]) != lowercase_axis(other.spec_.batch.axes[i]))
      return false;
  return batch_ == other.batch_;
}

std::string BatchedLayout::to_string() const {
  return spec_.to_string() + " " + std::to_string(batch()) + "x" + std::to_string(rows()) + "x" +
         std::to_string(cols()) + " on " + mesh_.to_string();
}

std::string to_string(BatchMerge m) {
  switch (m) {
    case BatchMerge::Auto: return "auto";
    case BatchMerge::Never: return "never";
    case BatchMerge::Always: return "always";
  }
  return "?";
}

BatchMerge parse_batch_merge(std::string_view text) {
  const std::string t = lowercase_axis(text);
  if (t == "auto") return BatchMerge::Auto;
  if (t == "never") return BatchMerge::Never;
  if (t == "always") return BatchMerge::Always;
  throw InvalidArgument("unknown batch merge '" + std::string(text) +
                        "': expected auto, never or always");
}

}  // namespace shardmm
