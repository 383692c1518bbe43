// Process mesh: every rank of a communicator owns one cell of a 1D/2D/3D grid with named axes.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardmm {

/// Pure description of a mesh: axis names, sizes and rank order. No MPI.
struct MeshShape {
  enum class Order { RowMajor, ColMajor };  ///< which axis varies fastest with the rank

  std::vector<std::string> names;
  std::vector<int> sizes;
  Order order = Order::RowMajor;

  /// Validates and builds; throws InvalidArgument on empty/duplicate names or sizes < 1.
  MeshShape(std::vector<std::string> axis_names, std::vector<int> axis_sizes,
            Order rank_order = Order::RowMajor);
  MeshShape() = default;

  /// Parses "x=2,y=3" or "2x3" (axes then named X, Y, Z).
  static MeshShape parse(std::string_view text);

  [[nodiscard]] int ndims() const { return static_cast<int>(sizes.size()); }
  [[nodiscard]] int size() const;                             ///< product of axis sizes
  [[nodiscard]] int axis_index(std::string_view name) const;  ///< throws if unknown
  /// Of `axes` (indices), those longer than 1: the ones that split anything (an axis of size 1
  /// places everything on its one process, as if it were not used).
  [[nodiscard]] std::vector<int> long_axes(const std::vector<int>& axes) const;
  [[nodiscard]] std::vector<int> long_axes() const;  ///< of every axis
  [[nodiscard]] std::vector<int> coords_of(int rank) const;
  [[nodiscard]] int rank_of(const std::vector<int>& coords) const;
  [[nodiscard]] std::string to_string() const;  ///< "{x:2, y:3}"
  bool operator==(const MeshShape&) const = default;
};

/// Factor P into `ndims` near-equal factors, largest first (e.g. 6,2 -> {3,2}; 8,3 -> {2,2,2}).
std::vector<int> factor_near_square(int P, int ndims);

/// A MeshShape bound to a communicator. Copies share one state (one duplicated communicator).
class Mesh {
 public:
  /// Collective over `comm`. The communicator is duplicated and set to MPI_ERRORS_RETURN.
  /// A shape whose size differs from the communicator's throws InvalidArgument on every rank,
  /// unless `allow_idle` is set and the shape is smaller: then surplus ranks are idle.
  Mesh(MPI_Comm comm, MeshShape shape, bool allow_idle = false);

  /// 1D mesh named `axis` over the whole communicator.
  static Mesh line(MPI_Comm comm, const std::string& axis = "x");
  /// 2D near-square mesh {x:p, y:q} over the whole communicator.
  static Mesh grid2d(MPI_Comm comm, const std::string& row_axis = "x",
                     const std::string& col_axis = "y");

  [[nodiscard]] const MeshShape& shape() const;
  [[nodiscard]] bool active() const;    ///< false on idle surplus ranks
  [[nodiscard]] MPI_Comm comm() const;  ///< active ranks only (MPI_COMM_NULL when idle)
  [[nodiscard]] int rank() const;       ///< rank in comm() (-1 when idle)
  [[nodiscard]] int size() const { return shape().size(); }
  /// True when the active ranks are on more than one node (MPI_COMM_TYPE_SHARED), so some of
  /// their messages cross a network.
  [[nodiscard]] bool spans_nodes() const;
  [[nodiscard]] const std::vector<int>& coords() const;
  [[nodiscard]] int coord(std::string_view axis) const;
  [[nodiscard]] int axis_size(std::string_view axis) const;
  /// Communicator over the ranks that differ only along `axes` (rank order = the flattened
  /// coordinate over `axes`, first axis major). Cached; valid as long as the mesh lives.
  [[nodiscard]] MPI_Comm axis_comm(const std::vector<std::string>& axes) const;
  [[nodiscard]] MPI_Comm axis_comm(const std::string& axis) const {
    return axis_comm(std::vector<std::string>{axis});
  }
  /// The same ranks arranged as `shape` (same size). Collective the first time a shape is
  /// asked for; cached for the lifetime of this mesh.
  [[nodiscard]] Mesh reshaped(const MeshShape& shape) const;
  /// The mesh formed by the ranks that differ only along `axes` (this rank's slice), with
  /// those axes (no axes: this rank alone, as a mesh {self:1}). Collective the first time;
  /// cached.
  [[nodiscard]] Mesh slice(const std::vector<std::string>& axes) const;
  /// Same underlying mesh object (operands of one call must share their mesh).
  [[nodiscard]] bool same_as(const Mesh& other) const { return state_ == other.state_; }

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace shardmm
