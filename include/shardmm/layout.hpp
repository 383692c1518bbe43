// Layouts: how a logical m x n matrix is cut over the axes of a mesh. Pure index math, no MPI.
//
// Each dimension is either replicated or distributed over an ordered group of mesh axes
// (JAX's I_X or I_XY: first axis major). A distributed dimension is block-cyclic with a block
// size nb and a source coordinate src (ScaLAPACK's MB/NB/RSRC/CSRC); "block" is block-cyclic
// with nb = ceil(extent / p) and "cyclic" is nb = 1. A block-cyclic dimension may start with a
// first block of its own size (ScaLAPACK's IMB/INB in a type-2 descriptor, or a submatrix that
// starts inside a block): indices [0, first) on src, then blocks of nb dealt out from src + 1.
// Axes listed in `unreduced` hold pending partial sums (C[I,J]{U_X}): the logical value is the
// sum over those axes.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shardmm/mesh.hpp"
#include "shardmm/types.hpp"

namespace shardmm {

/// How one matrix dimension is distributed (independent of its extent).
struct DimSpec {
  enum class Kind { Replicated, Block, Cyclic, BlockCyclic };
  std::string label = "I";  ///< dimension letter in the notation (cosmetic)
  Kind kind = Kind::Replicated;
  std::vector<std::string> axes;  ///< mesh axes, first is major; empty when replicated
  index_t nb = 0;                 ///< block size (BlockCyclic only)
  int src = 0;                    ///< coordinate owning the first block (BlockCyclic only)
  index_t first = 0;              ///< size of the first block (BlockCyclic only); 0: nb
  bool operator==(const DimSpec&) const = default;
};

/// A sharding written in the notation: name[dim, dim]{U_axes}. Independent of shape and mesh.
struct ShardingSpec {
  std::string name;                    ///< matrix name, may be empty
  std::array<DimSpec, 2> dims;         ///< rows, columns
  std::vector<std::string> unreduced;  ///< axes with pending partial sums
  bool operator==(const ShardingSpec&) const = default;

  /// Parses A[I_X,J], A[I_XY,J_Z:bc64+1], A[I_X:bc64f16,J], C[I_X,K_Y]{U_Z}, bc(64,64) and
  /// bc(mb,nb,rsrc,csrc[,imb,inb]) (first two mesh axes). Throws ParseError pointing at the bad
  /// character.
  static ShardingSpec parse(std::string_view text);
  [[nodiscard]] std::string to_string() const;
};

/// Block-cyclic math of one dimension after binding to an extent and a process count: global
/// indices [0, first_block()) on `src`, then blocks of `nb` dealt out cyclically from src + 1.
struct DimMap {
  index_t extent = 0;  ///< global size of the dimension
  int nprocs = 1;      ///< processes along the dimension (product of its axes)
  index_t nb = 1;      ///< block size (>= 1)
  int src = 0;         ///< process holding the first block
  index_t first = 0;   ///< size of the first block (>= 1); 0: nb, the regular map

  [[nodiscard]] index_t first_block() const { return first > 0 ? first : nb; }
  /// Every block nb long (or one process): local = global arithmetic on nb alone holds.
  [[nodiscard]] bool regular() const { return first_block() == nb || nprocs == 1; }
  [[nodiscard]] int owner(index_t i_glob) const;
  [[nodiscard]] index_t to_local(index_t i_glob) const;
  [[nodiscard]] index_t to_global(index_t i_loc, int proc) const;
  [[nodiscard]] index_t local_extent(int proc) const;  ///< ScaLAPACK NUMROC (PB_Cnumroc)
  /// Half-open global ranges [begin, end) owned by `proc`, in increasing order.
  [[nodiscard]] std::vector<std::pair<index_t, index_t>> owned_ranges(int proc) const;
  /// End (exclusive) of the block holding i_glob (past extent when that block is cut short).
  [[nodiscard]] index_t block_end(index_t i_glob) const;
  /// The indices [begin, begin + size) as a dimension of their own: first block from `begin`
  /// to the end of its block, owned by owner(begin). Throws InvalidArgument when out of range.
  [[nodiscard]] DimMap sub(index_t begin, index_t size) const;
  /// Same fields, the first block compared by its size (0 and nb are the same).
  bool operator==(const DimMap& o) const;
};

/// ScaLAPACK-compatible helpers (0-based coordinates and indices).
index_t numroc(index_t n, index_t nb, int iproc, int isrcproc, int nprocs);

/// A sharding bound to a mesh shape and a global shape: everything needed to find elements.
class Layout {
 public:
  Layout() = default;
  /// Throws InvalidArgument (unknown axis, axis used twice, nb < 1, src out of range,
  /// negative extent).
  Layout(MeshShape mesh, index_t m, index_t n, ShardingSpec spec);
  Layout(MeshShape mesh, index_t m, index_t n, std::string_view spec)
      : Layout(std::move(mesh), m, n, ShardingSpec::parse(spec)) {}

  /// 2D block-cyclic over the first two mesh axes (ScaLAPACK's layout).
  /// imb / inb: sizes of the first block of rows / columns (ScaLAPACK's IMB/INB; 0: mb / nb).
  static Layout block_cyclic(const MeshShape& mesh, index_t m, index_t n, index_t mb, index_t nb,
                             int rsrc = 0, int csrc = 0, index_t imb = 0, index_t inb = 0);
  static Layout replicated(const MeshShape& mesh, index_t m, index_t n);

  [[nodiscard]] const MeshShape& mesh() const { return mesh_; }
  [[nodiscard]] const ShardingSpec& spec() const { return spec_; }
  [[nodiscard]] index_t rows() const { return rows_.extent; }
  [[nodiscard]] index_t cols() const { return cols_.extent; }
  [[nodiscard]] const DimMap& row_map() const { return rows_; }
  [[nodiscard]] const DimMap& col_map() const { return cols_; }
  [[nodiscard]] const DimMap& map(int dim) const { return dim == 0 ? rows_ : cols_; }

  /// Coordinate of a mesh cell along a dimension's axis group (0 when replicated).
  [[nodiscard]] int dim_coord(int dim, const std::vector<int>& mesh_coords) const;
  /// Local extents on the mesh cell with these coordinates.
  [[nodiscard]] index_t local_rows(const std::vector<int>& mesh_coords) const;
  [[nodiscard]] index_t local_cols(const std::vector<int>& mesh_coords) const;
  /// True when the mesh cell holds element (i, j) (replicas included).
  [[nodiscard]] bool owns(const std::vector<int>& mesh_coords, index_t i, index_t j) const;
  /// Mesh axes (indices) that shard dimension `dim`, first major; empty when replicated.
  [[nodiscard]] const std::vector<int>& dim_axes(int dim) const { return dim_axes_[dim]; }
  /// Mesh axes that shard a dimension (rows then columns); the others replicate or are unreduced.
  [[nodiscard]] std::vector<int> sharded_axes() const;
  [[nodiscard]] std::vector<int> unreduced_axes() const;
  /// Mesh axes that only replicate (neither shard a dimension nor are unreduced).
  [[nodiscard]] std::vector<int> replica_axes() const;
  /// True on the one replica that speaks for its data: coordinate 0 on every replica axis.
  /// (Unreduced axes all speak: each holds a partial sum.)
  [[nodiscard]] bool is_primary(const std::vector<int>& mesh_coords) const;
  [[nodiscard]] bool is_unreduced() const { return !spec_.unreduced.empty(); }
  /// Same distribution of the same shape: every element on the same ranks at the same local
  /// index (cosmetic names ignored; axes of size 1 and the block size over one process too).
  [[nodiscard]] bool same_distribution(const Layout& other) const;
  /// The layout of the transpose (dims swapped).
  [[nodiscard]] Layout transposed() const;
  /// True when no dimension has a first block of another size (DimMap::regular()).
  [[nodiscard]] bool regular() const { return rows_.regular() && cols_.regular(); }
  /// The same layout with every first block nb long (itself when regular()).
  [[nodiscard]] Layout regularized() const;
  /// "A[I_X,J_Y] 100x200 on {x:2, y:3}".
  [[nodiscard]] std::string to_string() const;

 private:
  MeshShape mesh_;
  ShardingSpec spec_;
  DimMap rows_, cols_;
  std::array<std::vector<int>, 2> dim_axes_;  // mesh axis indices per dimension
  std::vector<int> unreduced_axes_;
};

}  // namespace shardmm
