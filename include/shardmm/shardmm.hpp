// Umbrella header.
#pragma once

#include "shardmm/batched.hpp"
#include "shardmm/blas3.hpp"
#include "shardmm/config.hpp"
#include "shardmm/dist_matrix.hpp"
#include "shardmm/error.hpp"
#include "shardmm/gemm.hpp"
#include "shardmm/io.hpp"
#include "shardmm/layout.hpp"
#include "shardmm/mesh.hpp"
#include "shardmm/ooc.hpp"
#include "shardmm/options.hpp"
#include "shardmm/plan.hpp"
#include "shardmm/redistribute.hpp"
#include "shardmm/runtime.hpp"
#include "shardmm/types.hpp"
#include "shardmm/version.hpp"
