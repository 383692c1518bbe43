// Per-rank traffic counters. Every communication wrapper adds the logical volume it moves:
// bytes this rank is the origin of and delivers to other ranks (sent), bytes that arrive here
// from other ranks (received), and messages this rank sends. Collectives count their logical
// data flow (a broadcast root "sends" one copy per receiver; all-gather sends the own piece to
// every peer; reduce-scatter sends every peer's block of partials), independent of the MPI
// library's internal algorithm, so the counts equal the formulas in docs/ALGORITHMS.md.
#pragma once

#include <cstdint>

namespace shardmm::comm {

struct Traffic {
  std::int64_t bytes_sent = 0;
  std::int64_t bytes_received = 0;
  std::int64_t messages = 0;

  Traffic& operator+=(const Traffic& o) {
    bytes_sent += o.bytes_sent;
    bytes_received += o.bytes_received;
    messages += o.messages;
    return *this;
  }
  friend Traffic operator-(Traffic a, const Traffic& b) {
    a.bytes_sent -= b.bytes_sent;
    a.bytes_received -= b.bytes_received;
    a.messages -= b.messages;
    return a;
  }
};

/// Running totals for this process since start (never reset; take differences).
Traffic& traffic();
/// The part of traffic() that redistributions moved (layout changes, not algorithm steps).
Traffic& redistribution_traffic();

/// Says what a redistribution is while this object lives (innermost wins): a layout change
/// (counted in redistribution_traffic(); the default) or a step of an algorithm (an
/// all-gather or a transposition done with redistribute, counted as algorithm traffic only).
class RedistributionRole {
 public:
  explicit RedistributionRole(bool layout_change);
  ~RedistributionRole();
  RedistributionRole(const RedistributionRole&) = delete;
  RedistributionRole& operator=(const RedistributionRole&) = delete;
  RedistributionRole(RedistributionRole&&) = delete;
  RedistributionRole& operator=(RedistributionRole&&) = delete;
  static bool layout_change();

 private:
  bool previous_;
};

}  // namespace shardmm::comm
