// Which of a side's two panel buffers each step of the streamed schedule uses. A step whose
// panel is the one the step before it read reuses that buffer instead of reading it again:
// when a block's k is one panel and a rank's next block shares its rows (or columns), as when
// the ranks' blocks are dealt so that each rank keeps its rows of C.
#pragma once

#include "ooc/panel_reader.hpp"

namespace shardmm::ooc {

class PanelSlots {
 public:
  /// Chooses step s's buffer for `sub`: true when it must be read (into buffer(s)), false
  /// when the previous step's buffer already holds it. Steps come in order.
  bool pick(index_t s, const Sub& sub) {
    const int step = static_cast<int>(s % 2);
    fresh_[step] = true;
    if (s == 0) {
      use_[step] = 0;
    } else {
      const int prev = use_[1 - step];
      if (sub.elems() > 0 && same(sub, held_[prev])) {
        use_[step] = prev;
        fresh_[step] = false;
        return false;
      }
      use_[step] = 1 - prev;  // the buffer step s-1 does not use: free
    }
    held_[use_[step]] = sub;
    return true;
  }
  /// The buffer (0 or 1) step s uses.
  [[nodiscard]] int buffer(index_t s) const { return use_[s % 2]; }
  /// Whether step s's buffer was read for it (not reused): what is done to a panel once
  /// (a conjugate in place) is done then.
  [[nodiscard]] bool fresh(index_t s) const { return fresh_[s % 2]; }

 private:
  static bool same(const Sub& a, const Sub& b) {
    return a.r0 == b.r0 && a.r1 == b.r1 && a.c0 == b.c0 && a.c1 == b.c1;
  }
  Sub held_[2];
  int use_[2] = {0, 0};
  bool fresh_[2] = {true, true};
};

}  // namespace shardmm::ooc
