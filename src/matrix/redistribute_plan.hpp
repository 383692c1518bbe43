// Which collective a redistribution is, and the words it moves: pure layout metadata, no MPI
// (the planner and the sharding rules price with it; redistribute() runs what it says).
//
// Every mesh axis longer than 1 is, in each layout, a row axis, a column axis, an unreduced
// axis ({U_..}) or a replica axis. An axis is *stable* when it has the same role in both
// layouts and, for row / column axes, the same coordinate owns every index in both (I_XY ->
// I_X: X is stable, Y is not). Axes that replicate the source and split the destination are
// *slice* axes: every rank already holds what it needs along them. The remaining axes are the
// *exchange axes*: only ranks that differ along them exchange anything, so the redistribution
// runs on the sub-communicator over those axes, as
//   Local          no exchange axis: each rank copies (a slice of) its own tile;
//   AllGather      every exchange axis splits the source and replicates the destination
//                  (I_XY -> I_X over Y; [I_X,J_Y] -> [I,J] over X and Y);
//   AllToAll       every exchange axis splits both ([I,J_X] -> [I_X,J]; [I_XY,J] -> [I_X,J_Y]);
//   Permute        an AllToAll in which each rank receives its tile from one other rank and
//                  sends to one (I_XY -> I_YX): a send-receive pair;
//   ReduceScatter  every exchange axis is unreduced in the source and splits the destination
//                  ([I,J]{U_X} -> [I_X,J]);
//   AllReduce      every exchange axis is unreduced in the source and replicates the
//                  destination ([I,J]{U_X} -> [I,J]);
//   General        anything else: one all-to-all over the exchange axes (every axis when the
//                  two layouts are on mesh shapes of different form).
// Words are elements a rank receives, in the library's logical accounting (comm/traffic.hpp):
// for a group of g ranks, AllGather delivers the g - 1 other pieces of the gathered tile,
// ReduceScatter (a ring) every block but its predecessor's, AllReduce 2 (g - 1) / g of the
// tile, AllToAll / Permute / General the destination tile less what the rank already holds.
#pragma once

#include <string>
#include <vector>

#include "shardmm/layout.hpp"

namespace shardmm::matrix {

enum class Pattern { Local, AllGather, AllToAll, Permute, ReduceScatter, AllReduce, General };

std::string to_string(Pattern p);

struct RedistPlan {
  Pattern pattern = Pattern::General;
  /// Exchange axes (mesh axis indices, in mesh order): ranks that differ only along them form
  /// one group and exchange. Empty for Local.
  std::vector<int> axes;
  /// Source and destination on mesh shapes of different form: one exchange over every rank.
  bool across_meshes = false;
  /// Ranks per group (product of the exchange axes' sizes; every rank across meshes).
  int group = 1;
  /// "AllGather over {y}" etc.
  [[nodiscard]] std::string to_string(const MeshShape& mesh) const;
};

/// How redistribute moves a matrix from `src` to `dst` (same global shape, mesh shapes of the
/// same size).
RedistPlan plan_redistribution(const Layout& src, const Layout& dst);

/// Elements each rank (indexed by its rank) receives when redistribute runs `plan`.
std::vector<double> received_words(const Layout& src, const Layout& dst, const RedistPlan& plan);
std::vector<double> received_words(const Layout& src, const Layout& dst);

/// The most any rank receives, and the messages the busiest rank sends (for latency).
double max_received_words(const Layout& src, const Layout& dst);
double messages(const RedistPlan& plan);

/// Mesh ranks of the group of the rank at `coords` along `axes`, in group-rank order (the
/// order of Mesh::axis_comm over those axes: first axis major).
std::vector<int> group_members(const MeshShape& mesh, const std::vector<int>& coords,
                               const std::vector<int>& axes);

}  // namespace shardmm::matrix
