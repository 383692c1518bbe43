// Private to the Strassen files: the line form (strassen_ring.cpp) and the crossover in force.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "algo/algo.hpp"
#include "core/winograd.hpp"  // pair_levels, pair_scratch

namespace shardmm::algo {

/// Global index ranges [begin, end), increasing (DimMap::owned_ranges).
using Ranges = std::vector<std::pair<index_t, index_t>>;

/// One piece of the grid form's k: its owners and where its indices sit in each owner's local
/// op(A) / op(B).
struct Piece {
  int s = 0, r = 0;  // op(A)'s owner along S, op(B)'s along R
  index_t k = 0;
  Ranges a_local, b_local;  // local k ranges [begin, end) in the owners' tiles
};

/// The grid form's pieces of k (op(A)'s k map ka, op(B)'s kb), ordered by (s, r): one sweep
/// over k cut at both maps' block ends. Setup sizes the run with it; the run follows it.
std::vector<Piece> pieces_of(const DimMap& ka, const DimMap& kb, index_t k);

/// The crossover a run uses: Options::fast_crossover (the front end fills in the profile's).
index_t strassen_crossover(const Options& o);

/// Strassen's line forms: C[I,J_S] with op(A)[I,K_S] and op(B)[K,J_S] (AllGatherA: each rank's
/// op(A) piece goes to every other rank of the line), or C[I_R,J] with op(A)[I_R,K] and
/// op(B)[K_R,J] (AllGatherB: op(B)'s pieces go); each piece times the staying operand's
/// matching k is one local Winograd product accumulated into C.
template <Scalar T>
void strassen_ring_run(const Operands<T>& x, RingForm form, const Options& o, Timers& t);

/// Strassen's grid form (both of C's dimensions split): op(A)[I_R,K_S] and op(B)[K_R,J_S]
/// broadcast piece by piece along S and R, each pair of pieces one local Winograd product.
template <Scalar T>
void strassen_grid_run(const Operands<T>& x, const Options& o, Timers& t);

/// Strassen's breadth-first step (CAPS) on P = 7 Q ranks: one Winograd level over the whole
/// product, its seven products on seven groups of Q ranks (`group_product`, the front end's
/// planned product, on each group of more than one rank; depth-first below). Takes A, B and C
/// in any layouts; alpha and beta applied on the way into C.
template <Scalar T>
void strassen_caps_run(const Operands<T>& x, const Options& o, Timers& t,
                       SubProduct<T> group_product);

/// The two ranks' op(A) pieces (as stored, k columns of op(A) each, leading dimension m for
/// op N, k for op T / C) and their k indices.
template <Scalar T>
struct PairPieces {
  const T* own = nullptr;
  const T* other = nullptr;
  index_t k = 0;
  Ranges k_own, k_other;
};

/// C <- alpha [A_own | A_other] op(B)[K_own ; K_other, :] + beta C with `levels` levels, the top
/// one split along k between the pieces; wait_other() runs before the other piece is read.
template <Scalar T>
void strassen_pair(const Operands<T>& x, const PairPieces<T>& a, int levels, T* work,
                   const std::function<void()>& wait_other, Timers& t);

}  // namespace shardmm::algo
