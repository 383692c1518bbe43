// What a call adds to the caller's operands, from the layouts (the planner's staged_elements
// and resident hooks): the copies of operands that move and the redistributions' buffers.
// Global metadata only: every rank computes the same.
#include <algorithm>
#include <array>

#include "front/resolve.hpp"

namespace shardmm::front {
namespace {

// Elements of rank r's tile of L.
double tile(const Layout& L, int r) {
  const std::vector<int> at = L.mesh().coords_of(r);
  return double(L.local_rows(at)) * double(L.local_cols(at));
}

double largest_tile(const Layout& L) {
  double most = 0;
  for (int r = 0; r < L.mesh().size(); ++r) most = std::max(most, tile(L, r));
  return most;
}

}  // namespace

double resident_elements(const algo::Problem& p) {
  double most = 0;
  for (int r = 0; r < p.mesh.size(); ++r)
    most = std::max(most, tile(p.A, r) + tile(p.B, r) + tile(p.C, r));
  return most;
}

double staged_elements(const algo::Problem& p, const algo::Layouts25D& to) {
  // Per operand: the caller's layout, the run's, and whether it moves; C moves back out.
  const std::array<const Layout*, 3> from = {&p.A, &p.B, &p.C}, run = {&to.A, &to.B, &to.C};
  std::array<bool, 3> moves{};
  for (int i = 0; i < 3; ++i)
    moves[i] = !(from[i]->mesh() == run[i]->mesh() && from[i]->same_distribution(*run[i]));
  double copies = 0, send = 0, recv = 0;
  for (int r = 0; r < p.mesh.size(); ++r) {
    double mine = 0;
    for (int i = 0; i < 3; ++i)
      if (moves[i]) mine += tile(*run[i], r);
    copies = std::max(copies, mine);
  }
  for (int i = 0; i < 3; ++i) {
    if (!moves[i]) continue;
    const double src = largest_tile(i < 2 ? *from[i] : *run[i]),
                 dst = largest_tile(i < 2 ? *run[i] : *from[i]);
    send = std::max(send, src), recv = std::max(recv, dst);
  }
  return copies + send + recv;
}

}  // namespace shardmm::front
