// Layout index math: per-dimension block-cyclic maps bound to a mesh shape.
#include "shardmm/layout.hpp"

#include <algorithm>

#include "shardmm/error.hpp"

namespace shardmm {

// ---------------------------------------------------------------- DimMap
//
// Regular maps (every block nb long) use the classic formulas. With a first block of f != nb
// elements, block 0 is [0, f) on src and block b >= 1 is [f + (b-1) nb, f + b nb) on
// (src + b) mod nprocs: a process at distance d from src holds blocks d, d + P, d + 2P, ...

namespace {

// Block holding i >= first_block() (blocks counted from 0, the first block included).
index_t block_of(const DimMap& m, index_t i) { return (i - m.first_block()) / m.nb + 1; }

// Global start of block b >= 1.
index_t block_start(const DimMap& m, index_t b) { return m.first_block() + (b - 1) * m.nb; }

}  // namespace

int DimMap::owner(index_t i_glob) const {
  if (first == 0) return static_cast<int>((i_glob / nb + src) % nprocs);
  if (i_glob < first) return src;
  return static_cast<int>((block_of(*this, i_glob) + src) % nprocs);
}

index_t DimMap::to_local(index_t i_glob) const {
  if (first == 0) return (i_glob / (nb * nprocs)) * nb + i_glob % nb;
  if (i_glob < first) return i_glob;
  const index_t b = block_of(*this, i_glob), within = (i_glob - first) % nb;
  const index_t before = b / nprocs;  // the owner's blocks ahead of b
  // The source's blocks ahead of b include the first block (first long instead of nb).
  return (b % nprocs == 0 ? first + (before - 1) * nb : before * nb) + within;
}

index_t DimMap::to_global(index_t i_loc, int proc) const {
  const int dist = (proc - src + nprocs) % nprocs;  // which block of each cycle
  if (first == 0) return ((i_loc / nb) * nprocs + dist) * nb + i_loc % nb;
  if (dist == 0 && i_loc < first) return i_loc;
  const index_t l = dist == 0 ? i_loc - first : i_loc;  // past the source's first block
  const index_t b = (l / nb + (dist == 0 ? 1 : 0)) * nprocs + dist;
  return block_start(*this, b) + l % nb;
}

index_t DimMap::local_extent(int proc) const {
  if (first == 0) return numroc(extent, nb, proc, src, nprocs);
  const bool source = proc == src;
  if (extent <= first) return source ? extent : 0;
  // The blocks after the first are a regular map dealt out from src + 1.
  const index_t rest = numroc(extent - first, nb, proc, (src + 1) % nprocs, nprocs);
  return rest + (source ? first : 0);
}

std::vector<std::pair<index_t, index_t>> DimMap::owned_ranges(int proc) const {
  std::vector<std::pair<index_t, index_t>> out;
  const int dist = (proc - src + nprocs) % nprocs;
  if (first == 0) {
    for (index_t b = dist * nb; b < extent; b += nb * nprocs)
      out.emplace_back(b, std::min(b + nb, extent));
    return out;
  }
  if (dist == 0 && extent > 0) out.emplace_back(0, std::min(first, extent));
  for (index_t b = dist == 0 ? nprocs : dist; block_start(*this, b) < extent; b += nprocs)
    out.emplace_back(block_start(*this, b), std::min(block_start(*this, b) + nb, extent));
  return out;
}

index_t DimMap::block_end(index_t i_glob) const {
  if (i_glob < first_block()) return first_block();
  return block_start(*this, block_of(*this, i_glob) + 1);
}

DimMap DimMap::sub(index_t begin, index_t size) const {
  if (begin < 0 || size < 0 || begin + size > extent)
    throw InvalidArgument("DimMap::sub: [" + std::to_string(begin) + ", " +
                          std::to_string(begin + size) + ") is outside 0.." +
                          std::to_string(extent));
  DimMap m{size, nprocs, nb, begin < extent ? owner(begin) : src, 0};
  if (nprocs > 1 && begin < extent && block_end(begin) - begin != nb)
    m.first = block_end(begin) - begin;
  return m;
}

bool DimMap::operator==(const DimMap& o) const {
  return extent == o.extent && nprocs == o.nprocs && nb == o.nb && src == o.src &&
         first_block() == o.first_block();
}

index_t numroc(index_t n, index_t nb, int iproc, int isrcproc, int nprocs) {
  const int mydist = (nprocs + iproc - isrcproc) % nprocs;
  const index_t nblocks = n / nb;
  index_t num = (nblocks / nprocs) * nb;
  const index_t extrablks = nblocks % nprocs;
  if (mydist < extrablks) num += nb;
  else if (mydist == extrablks) num += n % nb;
  return num;
}

// ---------------------------------------------------------------- Layout

namespace {

// "#0"/"#1" are the placeholders of the bc(...) shorthand: the mesh's first / second axis.
int resolve_axis(const MeshShape& mesh, const std::string& name) {
  if (name.size() == 2 && name[0] == '#') {
    const int a = name[1] - '0';
    if (a >= mesh.ndims())
      throw InvalidArgument("bc(...) layout needs a mesh with at least " + std::to_string(a + 1) +
                            " axes, got " + mesh.to_string());
    return a;
  }
  return mesh.axis_index(name);
}

DimMap bind_dim(const DimSpec& d, index_t extent, int nprocs) {
  DimMap m{extent, nprocs, 1, 0};
  switch (d.kind) {
    case DimSpec::Kind::Replicated:
      m.nprocs = 1;
      m.nb = std::max<index_t>(extent, 1);
      break;
    case DimSpec::Kind::Block: m.nb = std::max<index_t>((extent + nprocs - 1) / nprocs, 1); break;
    case DimSpec::Kind::Cyclic: m.nb = 1; break;
    case DimSpec::Kind::BlockCyclic:
      if (d.nb < 1) throw InvalidArgument("block size must be >= 1, got " + std::to_string(d.nb));
      if (d.src < 0 || d.src >= nprocs)
        throw InvalidArgument("source coordinate " + std::to_string(d.src) + " is outside 0.." +
                              std::to_string(nprocs - 1));
      if (d.first < 0)
        throw InvalidArgument("first block size must be >= 1, got " + std::to_string(d.first));
      m.nb = d.nb;
      m.src = d.src;
      // One process holds every index in order whatever the blocks: keep the map regular.
      if (d.first != d.nb && nprocs > 1) m.first = d.first;
      break;
  }
  return m;
}

}  // namespace

Layout::Layout(MeshShape mesh, index_t m, index_t n, ShardingSpec spec)
    : mesh_(std::move(mesh)), spec_(std::move(spec)) {
  if (m < 0 || n < 0)
    throw InvalidArgument("matrix shape " + std::to_string(m) + "x" + std::to_string(n) +
                          " is negative");
  std::vector<int> used;
  auto use = [&](const std::string& name) {
    const int a = resolve_axis(mesh_, name);
    if (std::find(used.begin(), used.end(), a) != used.end())
      throw InvalidArgument("mesh axis '" + mesh_.names[a] + "' is used twice in layout " +
                            spec_.to_string());
    used.push_back(a);
    return a;
  };
  const index_t extents[2] = {m, n};
  for (int d = 0; d < 2; ++d) {
    int p = 1;
    for (const auto& name : spec_.dims[d].axes) {
      const int a = use(name);
      dim_axes_[d].push_back(a);
      p *= mesh_.sizes[a];
    }
    if (spec_.dims[d].kind != DimSpec::Kind::Replicated && dim_axes_[d].empty())
      throw InvalidArgument("distributed dimension without mesh axes in " + spec_.to_string());
    (d == 0 ? rows_ : cols_) = bind_dim(spec_.dims[d], extents[d], p);
  }
  for (const auto& name : spec_.unreduced) unreduced_axes_.push_back(use(name));
}

Layout Layout::block_cyclic(const MeshShape& mesh, index_t m, index_t n, index_t mb, index_t nb,
                            int rsrc, int csrc, index_t imb, index_t inb) {
  ShardingSpec s;
  s.dims[0] = {"I", DimSpec::Kind::BlockCyclic, {"#0"}, mb, rsrc, imb};
  s.dims[1] = {"J", DimSpec::Kind::BlockCyclic, {"#1"}, nb, csrc, inb};
  return Layout(mesh, m, n, s);
}

Layout Layout::replicated(const MeshShape& mesh, index_t m, index_t n) {
  ShardingSpec s;
  s.dims[1].label = "J";
  return Layout(mesh, m, n, s);
}

int Layout::dim_coord(int dim, const std::vector<int>& mesh_coords) const {
  int c = 0;
  for (int a : dim_axes_[dim]) c = c * mesh_.sizes[a] + mesh_coords[a];
  return c;
}

index_t Layout::local_rows(const std::vector<int>& mesh_coords) const {
  return rows_.local_extent(dim_coord(0, mesh_coords));
}
index_t Layout::local_cols(const std::vector<int>& mesh_coords) const {
  return cols_.local_extent(dim_coord(1, mesh_coords));
}

bool Layout::owns(const std::vector<int>& mesh_coords, index_t i, index_t j) const {
  return rows_.owner(i) == dim_coord(0, mesh_coords) && cols_.owner(j) == dim_coord(1, mesh_coords);
}

std::vector<int> Layout::sharded_axes() const {
  std::vector<int> out = dim_axes_[0];
  out.insert(out.end(), dim_axes_[1].begin(), dim_axes_[1].end());
  return out;
}
std::vector<int> Layout::unreduced_axes() const { return unreduced_axes_; }

std::vector<int> Layout::replica_axes() const {
  std::vector<int> used = sharded_axes(), out;
  used.insert(used.end(), unreduced_axes_.begin(), unreduced_axes_.end());
  for (int a = 0; a < mesh_.ndims(); ++a)
    if (std::find(used.begin(), used.end(), a) == used.end()) out.push_back(a);
  return out;
}

bool Layout::is_primary(const std::vector<int>& mesh_coords) const {
  for (int a : replica_axes())
    if (mesh_coords[a] != 0) return false;
  return true;
}

namespace {

// Over one process every block size and source give local index = global index.
bool same_map(const DimMap& a, const DimMap& b) {
  return a.nprocs == 1 && b.nprocs == 1 ? a.extent == b.extent : a == b;
}
}  // namespace

bool Layout::same_distribution(const Layout& o) const {
  if (!(mesh_ == o.mesh_) || !same_map(rows_, o.rows_) || !same_map(cols_, o.cols_)) return false;
  // Axes of size 1 split nothing (A[I_X,K] on x = 1 is A[I,K]).
  for (int d = 0; d < 2; ++d)
    if (mesh_.long_axes(dim_axes_[d]) != mesh_.long_axes(o.dim_axes_[d])) return false;
  return mesh_.long_axes(unreduced_axes_) == mesh_.long_axes(o.unreduced_axes_);
}

Layout Layout::transposed() const {
  ShardingSpec s = spec_;
  for (auto& d : s.dims)  // bc() placeholders name real axes once the dims are swapped
    for (auto& a : d.axes)
      if (a.size() == 2 && a[0] == '#') a = mesh_.names[a[1] - '0'];
  std::swap(s.dims[0], s.dims[1]);
  return Layout(mesh_, cols(), rows(), s);
}

Layout Layout::regularized() const {
  if (regular()) return *this;
  ShardingSpec s = spec_;
  for (auto& d : s.dims) d.first = 0;
  return Layout(mesh_, rows(), cols(), s);
}

std::string Layout::to_string() const {
  return spec_.to_string() + " " + std::to_string(rows()) + "x" + std::to_string(cols()) + " on " +
         mesh_.to_string();
}

}  // namespace shardmm
