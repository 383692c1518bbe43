// Reference model of layouts for the MPI tests. Owners, local index lists and rank coordinates
// are computed by brute force from the definitions (deal blocks round-robin, count ranks with
// an odometer), never through shardmm's Layout / DimMap / MeshShape index code, so tests that
// compare against it can fail. A Spec prints itself in the layout notation, which also checks
// the parser.
#pragma once

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "comm/mpi_check.hpp"
#include "mpi/mpi_test_util.hpp"
#include "shardmm/shardmm.hpp"

namespace shardmm::testing::ref {

/// One matrix dimension: mesh axis letters (first major; empty = replicated) and distribution.
struct Dim {
  std::string axes;
  char kind = 'b';  ///< 'b' block, 'c' cyclic, 'k' block-cyclic with nb and src
  index_t nb = 1;
  int src = 0;
};

/// A layout in the notation. `shorthand` prints bc(mb,nb,rsrc,csrc): rows must be 'k' on the
/// mesh's first axis and columns 'k' on its second.
struct Spec {
  Dim rows, cols;
  std::string unreduced;  ///< axis letters
  bool shorthand = false;

  [[nodiscard]] std::string text() const {
    if (shorthand)
      return "bc(" + std::to_string(rows.nb) + "," + std::to_string(cols.nb) + "," +
             std::to_string(rows.src) + "," + std::to_string(cols.src) + ")";
    std::string s = "A[" + dim_text("I", rows) + "," + dim_text("J", cols) + "]";
    return unreduced.empty() ? s : s + "{U_" + unreduced + "}";
  }

 private:
  static std::string dim_text(const std::string& label, const Dim& d) {
    if (d.axes.empty()) return label;
    std::string s = label + "_" + d.axes;
    if (d.kind == 'c') s += ":c";
    if (d.kind == 'k') s += ":bc" + std::to_string(d.nb) + "+" + std::to_string(d.src);
    return s;
  }
};

/// Mesh axis index of a letter of the test meshes (axes named x, y, z).
inline int axis_of(char letter) { return std::toupper(static_cast<unsigned char>(letter)) - 'X'; }

/// Coordinates of every rank: an odometer over the axes, fastest axis last (RowMajor) or
/// first (ColMajor).
inline std::vector<std::vector<int>> all_coords(const MeshShape& mesh) {
  const int d = static_cast<int>(mesh.sizes.size());
  std::vector<int> c(static_cast<std::size_t>(d), 0);
  std::vector<std::vector<int>> out;
  int total = 1;
  for (int s : mesh.sizes) total *= s;
  for (int r = 0; r < total; ++r) {
    out.push_back(c);
    for (int t = 0; t < d; ++t) {
      const int a = mesh.order == MeshShape::Order::RowMajor ? d - 1 - t : t;
      if (++c[a] < mesh.sizes[a]) break;
      c[a] = 0;
    }
  }
  return out;
}

/// A Spec bound to a mesh shape and a global shape.
class Model {
 public:
  Model(MeshShape mesh, index_t m, index_t n, Spec spec)
      : mesh_(std::move(mesh)), spec_(std::move(spec)), coords_(all_coords(mesh_)) {
    const Dim* dims[2] = {&spec_.rows, &spec_.cols};
    const index_t ext[2] = {m, n};
    for (int d = 0; d < 2; ++d) {
      extent_[d] = ext[d];
      owner_[d] = deal(*dims[d], ext[d]);
    }
  }

  [[nodiscard]] Layout layout() const {
    return Layout(mesh_, extent_[0], extent_[1], spec_.text());
  }
  [[nodiscard]] const MeshShape& mesh() const { return mesh_; }
  [[nodiscard]] const Spec& spec() const { return spec_; }
  [[nodiscard]] index_t extent(int dim) const { return extent_[dim]; }
  [[nodiscard]] int nranks() const { return static_cast<int>(coords_.size()); }
  [[nodiscard]] const std::vector<int>& coords(int rank) const { return coords_[rank]; }

  /// Coordinate of a rank along a dimension's axis group (first axis major).
  [[nodiscard]] int dim_coord(int dim, int rank) const {
    int c = 0;
    for (char a : (dim == 0 ? spec_.rows : spec_.cols).axes)
      c = c * mesh_.sizes[axis_of(a)] + coords_[rank][axis_of(a)];
    return c;
  }
  [[nodiscard]] bool holds(int rank, index_t i, index_t j) const {
    return owner_[0][i] == dim_coord(0, rank) && owner_[1][j] == dim_coord(1, rank);
  }
  /// Global indices of a dimension held by `rank`, increasing (= local index order).
  [[nodiscard]] std::vector<index_t> owned(int dim, int rank) const {
    std::vector<index_t> out;
    const int me = dim_coord(dim, rank);
    for (index_t g = 0; g < extent_[dim]; ++g)
      if (owner_[dim][g] == me) out.push_back(g);
    return out;
  }
  /// Coordinate 0 on every unreduced axis (where fill() and scatter() put the values).
  [[nodiscard]] bool holds_value(int rank) const {
    for (char a : spec_.unreduced)
      if (coords_[rank][axis_of(a)] != 0) return false;
    return true;
  }
  /// Flattened coordinate over the unreduced axes, and their number of cells.
  [[nodiscard]] int unreduced_index(int rank) const {
    int c = 0;
    for (char a : spec_.unreduced) c = c * mesh_.sizes[axis_of(a)] + coords_[rank][axis_of(a)];
    return c;
  }
  [[nodiscard]] int unreduced_count() const {
    int c = 1;
    for (char a : spec_.unreduced) c *= mesh_.sizes[axis_of(a)];
    return c;
  }
  /// Axes that neither shard a dimension nor are unreduced.
  [[nodiscard]] std::vector<int> replica_axes() const {
    const std::string used = spec_.rows.axes + spec_.cols.axes + spec_.unreduced;
    std::vector<int> out;
    for (int a = 0; a < static_cast<int>(mesh_.sizes.size()); ++a) {
      bool found = false;
      for (char u : used) found = found || axis_of(u) == a;
      if (!found) out.push_back(a);
    }
    return out;
  }
  [[nodiscard]] std::string name() const {
    return spec_.text() + " " + std::to_string(extent_[0]) + "x" + std::to_string(extent_[1]) +
           " on " + mesh_.to_string();
  }

 private:
  // Owners of 0..extent-1: blocks of nb dealt round-robin over the p coordinates from src.
  [[nodiscard]] std::vector<int> deal(const Dim& d, index_t extent) const {
    int p = 1;
    for (char a : d.axes) p *= mesh_.sizes[axis_of(a)];
    index_t nb = d.kind == 'k' ? d.nb : 1;
    if (d.kind == 'b') nb = std::max<index_t>(1, (extent + p - 1) / p);
    if (d.axes.empty()) nb = std::max<index_t>(1, extent);
    std::vector<int> out;
    int owner = d.kind == 'k' ? d.src : 0;
    for (index_t g = 0; g < extent; ++g) {
      if (g > 0 && g % nb == 0) owner = (owner + 1) % p;
      out.push_back(owner);
    }
    return out;
  }

  MeshShape mesh_;
  Spec spec_;
  std::vector<std::vector<int>> coords_;
  index_t extent_[2] = {0, 0};
  std::vector<int> owner_[2];
};

inline Dim rep() { return Dim{"", 'b', 1, 0}; }
inline Dim blk(std::string axes) { return Dim{std::move(axes), 'b', 1, 0}; }
inline Dim cyc(std::string axes) { return Dim{std::move(axes), 'c', 1, 0}; }
inline Dim bcyc(std::string axes, index_t nb, int src) {
  return Dim{std::move(axes), 'k', nb, src};
}
inline Spec spec(Dim rows, Dim cols, std::string unreduced = "", bool shorthand = false) {
  return Spec{std::move(rows), std::move(cols), std::move(unreduced), shorthand};
}

/// Representative layouts on a 2D mesh {x:px, y:py}: block, cyclic, flattened axis groups,
/// replicas, unreduced axes, and block-cyclic nb 1..5 with non-zero sources where the axis
/// allows (odd nb in the bc(...) shorthand, even nb in the I_X:bc<nb>+<src> form).
inline std::vector<Spec> grid_specs(int px, int py) {
  std::vector<Spec> out = {
      spec(blk("X"), blk("Y")),
      spec(cyc("Y"), cyc("X")),
      spec(blk("XY"), rep()),
      spec(rep(), cyc("YX")),
      spec(rep(), rep()),
      spec(blk("X"), rep()),
      spec(rep(), bcyc("Y", 3, 1 % py)),
      spec(blk("X"), rep(), "Y"),
      spec(rep(), cyc("Y"), "X"),
  };
  for (int nb = 1; nb <= 5; ++nb)
    out.push_back(spec(bcyc("X", nb, 1 % px), bcyc("Y", 6 - nb, nb % py), "", nb % 2 == 1));
  return out;
}

/// Representative layouts on a 1D mesh {x:p}.
inline std::vector<Spec> line_specs(int p) {
  return {spec(blk("X"), rep()), spec(rep(), bcyc("X", 2, 1 % p)), spec(bcyc("X", 5, p - 1), rep()),
          spec(rep(), rep()), spec(rep(), rep(), "X")};
}

/// Visits the local elements of `rank` in local column-major order: f(i_loc, j_loc, i, j).
template <class F>
void for_each_local(const Model& M, int rank, F&& f) {
  const auto rows = M.owned(0, rank), cols = M.owned(1, rank);
  for (std::size_t jl = 0; jl < cols.size(); ++jl)
    for (std::size_t il = 0; il < rows.size(); ++il)
      f(static_cast<index_t>(il), static_cast<index_t>(jl), rows[il], cols[jl]);
}

/// Sets every local element of this rank from f(i, j) (the caller decides what the cells of
/// unreduced axes hold). Written through local(), independent of DistMatrix::fill.
template <class T, class F>
void set_local(DistMatrix<T>& A, const Model& M, F&& f) {
  for_each_local(M, testing::world_rank(),
                 [&](index_t il, index_t jl, index_t i, index_t j) { A.local(il, jl) = f(i, j); });
}

/// Expects this rank's tile of `A` to hold want(i, j) on the cells that hold values and zero on
/// the other cells of unreduced axes; exact unless `tol` > 0 (then relative to 1 + |want|).
/// One failure per call, naming the first bad element.
template <class T, class F>
void expect_local(const DistMatrix<T>& A, const Model& M, F&& want, const std::string& what,
                  double tol = 0) {
  const int me = testing::world_rank();
  ASSERT_EQ(A.local_rows(), static_cast<index_t>(M.owned(0, me).size())) << what << " " << M.name();
  ASSERT_EQ(A.local_cols(), static_cast<index_t>(M.owned(1, me).size())) << what << " " << M.name();
  int bad = 0;
  std::string first;
  for_each_local(M, me, [&](index_t il, index_t jl, index_t i, index_t j) {
    const T expected = M.holds_value(me) ? T(want(i, j)) : T(0);
    const T got = A.local(il, jl);
    const bool ok =
        tol > 0 ? std::abs(got - expected) <= tol * (1 + std::abs(expected)) : got == expected;
    if (ok || bad++ > 0) return;
    first = "(" + std::to_string(i) + "," + std::to_string(j) +
            ") = " + ::testing::PrintToString(got) + ", want " + ::testing::PrintToString(expected);
  });
  EXPECT_EQ(bad, 0) << what << " " << M.name() << ": first bad element " << first;
}

/// Lowers the split-message threshold for its lifetime (restores INT_MAX).
class ScopedMessageLimit {
 public:
  explicit ScopedMessageLimit(std::int64_t limit) { comm::set_max_message_elems(limit); }
  ~ScopedMessageLimit() { comm::set_max_message_elems(INT_MAX); }
  ScopedMessageLimit(const ScopedMessageLimit&) = delete;
  ScopedMessageLimit& operator=(const ScopedMessageLimit&) = delete;
  ScopedMessageLimit(ScopedMessageLimit&&) = delete;
  ScopedMessageLimit& operator=(ScopedMessageLimit&&) = delete;
};

}  // namespace shardmm::testing::ref
