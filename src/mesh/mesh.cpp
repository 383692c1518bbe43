// Mesh: rank <-> coordinates and cached per-axis-group communicators.
//   construction: MPI_Comm_dup (+ MPI_Comm_split when surplus ranks are idle; with
//   SHARDMM_WATCHDOG, one broadcast of the watchdog's status directory);
//   axis_comm(axes): MPI_Comm_split of the mesh communicator, colour = coordinates on the
//   other axes, key = flattened coordinate over `axes` (first axis major).
#include "shardmm/mesh.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>

#include "comm/mpi_check.hpp"
#include "shardmm/error.hpp"
#include "trace/call.hpp"
#include "trace/trace.hpp"

namespace shardmm {

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

MeshShape::MeshShape(std::vector<std::string> axis_names, std::vector<int> axis_sizes,
                     Order rank_order)
    : names(std::move(axis_names)), sizes(std::move(axis_sizes)), order(rank_order) {
  if (names.size() != sizes.size() || names.empty() || names.size() > 3)
    throw InvalidArgument("mesh needs 1 to 3 axes, each with a name and a size");
  for (std::size_t a = 0; a < names.size(); ++a) {
    if (names[a].empty()) throw InvalidArgument("mesh axis name is empty");
    if (sizes[a] < 1)
      throw InvalidArgument("mesh axis '" + names[a] + "' has size " + std::to_string(sizes[a]) +
                            "; sizes must be >= 1");
    for (std::size_t b = 0; b < a; ++b)
      if (lower(names[a]) == lower(names[b]))
        throw InvalidArgument("mesh axis '" + names[a] + "' is named twice");
  }
}

MeshShape MeshShape::parse(std::string_view text) {
  const bool named = text.find('=') != std::string_view::npos;
  const char sep = named ? ',' : 'x';
  const auto bad = [&] {
    return InvalidArgument("bad mesh shape '" + std::string(text) +
                           "': expected e.g. 2x3 or x=2,y=3");
  };
  if (text.empty() || text.back() == sep) throw bad();
  std::vector<std::string> n;
  std::vector<int> s;
  std::string item;
  std::stringstream ss{std::string(text)};
  while (std::getline(ss, item, sep)) {
    const std::size_t eq = item.find('=');
    if (named && eq == std::string::npos) throw bad();
    std::string name =
        named ? item.substr(0, eq) : std::string(1, "XYZ"[std::min<std::size_t>(n.size(), 2)]);
    std::string num = named ? item.substr(eq + 1) : item;
    if (num.empty() || !std::all_of(num.begin(), num.end(), ::isdigit) || num.size() > 9)
      throw bad();
    n.push_back(name);
    s.push_back(std::stoi(num));
  }
  return MeshShape(std::move(n), std::move(s));
}

int MeshShape::size() const {
  return std::accumulate(sizes.begin(), sizes.end(), 1, std::multiplies<>());
}

int MeshShape::axis_index(std::string_view name) const {
  for (std::size_t a = 0; a < names.size(); ++a)
    if (lower(names[a]) == lower(name)) return static_cast<int>(a);
  throw InvalidArgument("mesh " + to_string() + " has no axis '" + std::string(name) + "'");
}

std::vector<int> MeshShape::long_axes(const std::vector<int>& axes) const {
  std::vector<int> out;
  for (int a : axes)
    if (sizes[a] > 1) out.push_back(a);
  return out;
}

std::vector<int> MeshShape::long_axes() const {
  std::vector<int> all(sizes.size());
  std::iota(all.begin(), all.end(), 0);
  return long_axes(all);
}

std::vector<int> MeshShape::coords_of(int rank) const {
  std::vector<int> c(sizes.size());
  const int d = ndims();
  for (int t = 0; t < d; ++t) {
    const int a = order == Order::RowMajor ? d - 1 - t : t;  // fastest axis first
    c[a] = rank % sizes[a];
    rank /= sizes[a];
  }
  return c;
}

int MeshShape::rank_of(const std::vector<int>& coords) const {
  int r = 0;
  const int d = ndims();
  for (int t = 0; t < d; ++t) {
    const int a = order == Order::RowMajor ? t : d - 1 - t;  // slowest axis first
    r = r * sizes[a] + coords[a];
  }
  return r;
}

std::string MeshShape::to_string() const {
  std::string s = "{";
  for (std::size_t a = 0; a < names.size(); ++a)
    s += (a ? ", " : "") + names[a] + ":" + std::to_string(sizes[a]);
  return s + (order == Order::ColMajor ? "} col-major" : "}");
}

std::vector<int> factor_near_square(int P, int ndims) {
  if (P < 1 || ndims < 1) throw InvalidArgument("factor_near_square needs P >= 1, ndims >= 1");
  std::vector<int> f;
  int rest = P;
  for (int d = ndims; d > 1; --d) {
    // largest divisor of rest not above rest^(1/d) gives the smallest factor; keep it last
    int best = 1;
    const auto root = static_cast<int>(std::floor(std::pow(rest, 1.0 / d) + 1e-9));
    for (int c = root; c >= 1; --c)
      if (rest % c == 0) {
        best = c;
        break;
      }
    f.push_back(best);
    rest /= best;
  }
  f.push_back(rest);
  std::sort(f.begin(), f.end(), std::greater<>());
  return f;
}

// ---------------------------------------------------------------- Mesh

struct Mesh::State {
  MeshShape shape;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = -1;
  bool spans_nodes = false;
  std::vector<int> coords;
  mutable std::map<std::vector<int>, MPI_Comm> axis_comms;
  mutable std::map<std::string, Mesh> derived;  // reshaped() and slice() results

  // Owns the communicators above and frees them once: a copy would free them twice.
  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  State(State&&) = delete;
  State& operator=(State&&) = delete;
  ~State() {  // freeing after MPI_Finalize is an error: then there is nothing to free
    int finalized = 0;
    MPI_Finalized(&finalized);
    derived.clear();
    if (finalized) return;
    for (auto& [key, c] : axis_comms) MPI_Comm_free(&c);
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
};

Mesh::Mesh(MPI_Comm comm, MeshShape shape, bool allow_idle) : state_(std::make_shared<State>()) {
  const int P = comm::comm_size(comm);
  const int me = comm::comm_rank(comm);
  if (shape.size() > P || (shape.size() < P && !allow_idle))
    throw InvalidArgument("mesh " + shape.to_string() + " has " + std::to_string(shape.size()) +
                          " cells but the communicator has " + std::to_string(P) + " ranks" +
                          (shape.size() < P ? " (pass allow_idle to leave the rest idle)" : ""));
  state_->shape = std::move(shape);
  MPI_Comm dup = MPI_COMM_NULL;
  {  // watched (SHARDMM_WATCHDOG): a rank that makes a mesh alone is reported, not left hanging
    trace::Call call(comm, "Mesh", {}, trace::Call::Kind::SetUp);
    trace::Span wait("MPI_Comm_dup", trace::Cat::Wait);
    if (wait.seen()) wait.blocked("MPI_Comm_dup", "the new mesh's communicator", comm);
    SHARDMM_MPI(MPI_Comm_dup(comm, &dup));
  }
  SHARDMM_MPI(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
  if (state_->shape.size() < P) {
    MPI_Comm active = MPI_COMM_NULL;
    const int colour = me < state_->shape.size() ? 0 : MPI_UNDEFINED;
    SHARDMM_MPI(MPI_Comm_split(dup, colour, me, &active));
    SHARDMM_MPI(MPI_Comm_free(&dup));
    if (active != MPI_COMM_NULL) SHARDMM_MPI(MPI_Comm_set_errhandler(active, MPI_ERRORS_RETURN));
    dup = active;
  }
  state_->comm = dup;
  if (dup != MPI_COMM_NULL) {
    state_->rank = comm::comm_rank(dup);
    state_->coords = state_->shape.coords_of(state_->rank);
    // Every rank's node holds all ranks, or every rank's node lacks some: no vote needed.
    MPI_Comm node = MPI_COMM_NULL;
    SHARDMM_MPI(MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    state_->spans_nodes = comm::comm_size(node) < comm::comm_size(dup);
    SHARDMM_MPI(MPI_Comm_free(&node));
    trace::prepare_watch(dup);  // SHARDMM_WATCHDOG: its status directory, while all ranks are here
  }
}

Mesh Mesh::line(MPI_Comm comm, const std::string& axis) {
  return Mesh(comm, MeshShape({axis}, {comm::comm_size(comm)}));
}

Mesh Mesh::grid2d(MPI_Comm comm, const std::string& row_axis, const std::string& col_axis) {
  const auto f = factor_near_square(comm::comm_size(comm), 2);
  return Mesh(comm, MeshShape({row_axis, col_axis}, {f[1], f[0]}));
}

const MeshShape& Mesh::shape() const { return state_->shape; }
bool Mesh::active() const { return state_->comm != MPI_COMM_NULL; }
bool Mesh::spans_nodes() const { return state_->spans_nodes; }
MPI_Comm Mesh::comm() const { return state_->comm; }
int Mesh::rank() const { return state_->rank; }
const std::vector<int>& Mesh::coords() const { return state_->coords; }
int Mesh::coord(std::string_view axis) const { return coords().at(shape().axis_index(axis)); }
int Mesh::axis_size(std::string_view axis) const { return shape().sizes[shape().axis_index(axis)]; }

MPI_Comm Mesh::axis_comm(const std::vector<std::string>& axes) const {
  if (!active()) throw InvalidArgument("axis_comm called on an idle rank");
  std::vector<int> idx;
  for (const auto& a : axes) {
    const int i = shape().axis_index(a);
    if (std::find(idx.begin(), idx.end(), i) != idx.end())
      throw InvalidArgument("axis '" + a + "' named twice in an axis group");
    idx.push_back(i);
  }
  auto it = state_->axis_comms.find(idx);
  if (it != state_->axis_comms.end()) return it->second;
  int colour = 0, key = 0;
  for (int a = 0; a < shape().ndims(); ++a)
    if (std::find(idx.begin(), idx.end(), a) == idx.end())
      colour = colour * shape().sizes[a] + coords()[a];
  for (int a : idx) key = key * shape().sizes[a] + coords()[a];
  MPI_Comm sub = MPI_COMM_NULL;
  trace::Span span("axis_comm", trace::Cat::Wait);  // every rank of the mesh must come
  if (span.seen()) span.blocked("MPI_Comm_split", "the communicator of an axis group", comm());
  SHARDMM_MPI(MPI_Comm_split(state_->comm, colour, key, &sub));
  SHARDMM_MPI(MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN));
  state_->axis_comms.emplace(idx, sub);
  return sub;
}

Mesh Mesh::reshaped(const MeshShape& shape) const {
  if (!active()) throw InvalidArgument("reshaped called on an idle rank");
  if (shape.size() != size())
    throw InvalidArgument("cannot reshape mesh " + this->shape().to_string() + " into " +
                          shape.to_string() + ": sizes differ");
  const std::string key = "reshape " + shape.to_string();
  auto it = state_->derived.find(key);
  if (it != state_->derived.end()) return it->second;
  return state_->derived.emplace(key, Mesh(comm(), shape)).first->second;
}

Mesh Mesh::slice(const std::vector<std::string>& axes) const {
  std::string key = "slice";
  std::vector<std::string> names;
  std::vector<int> sizes;
  for (const auto& a : axes) {
    key += " " + a;
    names.push_back(shape().names[shape().axis_index(a)]);
    sizes.push_back(axis_size(a));
  }
  if (names.empty()) {  // no axis: this rank alone, as a one-axis mesh of one
    names.emplace_back("self");
    sizes.push_back(1);
  }
  auto it = state_->derived.find(key);
  if (it != state_->derived.end()) return it->second;
  Mesh m(axis_comm(axes), MeshShape(names, sizes, MeshShape::Order::RowMajor));
  return state_->derived.emplace(key, m).first->second;
}

}  // namespace shardmm
