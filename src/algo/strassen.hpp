// Private to the Strassen files: the line form (strassen_ring.cpp) and the crossover in force.
#pragma once

#include "algo/algo.hpp"

namespace shardmm::algo {

/// The crossover a run uses: Options::fast_crossover (the front end fills in the profile's).
index_t strassen_crossover(const Options& o);

/// Strassen's line form: C[I,J_S] with op(A)[I,K_S] and op(B)[K,J_S]; each rank's op(A) piece
/// goes to every other rank of the line and each piece times op(B)'s matching rows is one
/// local Winograd product accumulated into C.
template <Scalar T>
void strassen_ring_run(const Operands<T>& x, const Options& o, Timers& t);

}  // namespace shardmm::algo
