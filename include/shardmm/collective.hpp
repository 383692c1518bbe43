// Collective helpers for front ends built on the library (the Python package): agreements of
// their own checks, made as library calls so that SHARDMM_WATCHDOG watches them like gemm.
#pragma once

#include <string>
#include <vector>

#include "shardmm/mesh.hpp"

namespace shardmm {

/// Collective over the mesh's active ranks (an idle rank gets only its own): every rank's
/// `mine`, by mesh rank. A library call named `name` for SHARDMM_TRACE and SHARDMM_WATCHDOG,
/// so a rank that never arrives (an SPMD mistake) is named by the hang reporter. For small
/// payloads (a front end's verdict on its checks); throws InvalidArgument above 2^31 - 1
/// bytes (every rank must pass a small one).
std::vector<std::string> allgather_strings(const Mesh& mesh, const std::string& mine,
                                           const char* name = "agree");

}  // namespace shardmm
