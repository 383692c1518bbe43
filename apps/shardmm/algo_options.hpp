// What bench and multiply share after parsing: the operands' mesh (--grid) and the library
// Options of the algorithm options (cli.cpp declares them once for both subcommands). Cfg is
// BenchConfig or MultiplyConfig: both have the fields grid, panel, stationary_chunk, ring_chunk,
// strassen_step, stationary, ring_axis, bidirectional, wire, wait, allow_fast, memory_limit,
// blas_threads and trace.
#pragma once

#include <mpi.h>

#include <string>

#include "commands.hpp"
#include "mpi_util.hpp"
#include "shardmm/error.hpp"
#include "shardmm/gemm.hpp"
#include "shardmm/mesh.hpp"
#include "shardmm/options.hpp"

namespace shardmm::cli {

/// --grid PxQ is the operands' mesh; PxQxC keeps a near-square 2D mesh for the operands and
/// asks the 2.5D algorithm for that 3D grid; none: near-square.
template <class Cfg>
Mesh operand_mesh(const Cfg& cfg) {
  if (cfg.grid.empty() || MeshShape::parse(cfg.grid).ndims() == 3)
    return Mesh::grid2d(MPI_COMM_WORLD);
  MeshShape s = MeshShape::parse(cfg.grid);
  if (s.ndims() == 2) s = MeshShape({"x", "y"}, s.sizes);
  return Mesh(MPI_COMM_WORLD, s);
}

/// The library options of `algorithm` (auto|local|summa|cannon|ring|sharded|25d|strassen) with the
/// algorithm options of `cfg`. Throws InvalidArgument for an unknown name or a bad
/// --memory-limit.
template <class Cfg>
Options algo_options(const Cfg& cfg, const std::string& algorithm) {
  Options o;
  o.algorithm = parse_algorithm(algorithm);
  o.panel = cfg.panel;
  o.stationary_chunk = cfg.stationary_chunk;
  o.ring_chunk = cfg.ring_chunk;
  o.strassen_step = parse_strassen_step(cfg.strassen_step);
  o.stationary = cfg.stationary == "A"   ? Stationary::A
                 : cfg.stationary == "B" ? Stationary::B
                 : cfg.stationary == "C" ? Stationary::C
                                         : Stationary::Auto;
  o.ring_axis = cfg.ring_axis;
  o.bidirectional = cfg.bidirectional;
  o.wire = parse_wire(cfg.wire);
  o.wait = parse_wait(cfg.wait);
  o.allow_fast = cfg.allow_fast;
  o.blas_threads = cfg.blas_threads;
  o.trace = cfg.trace;  // --trace: the command's products, each traced into the file
  if (!cfg.memory_limit.empty()) o.memory_limit = parse_bytes(cfg.memory_limit);
  if (!cfg.memory_growth.empty()) o.memory_growth = parse_growth(cfg.memory_growth);
  if (!cfg.grid.empty() && MeshShape::parse(cfg.grid).ndims() == 3) {
    const auto g = MeshShape::parse(cfg.grid).sizes;
    o.grid_m = g[0], o.grid_n = g[1], o.grid_k = g[2];
  }
  return o;
}

/// --layouts preferred: the mesh and layouts preferred_layouts chooses for the product of
/// `cfg` (BenchConfig: m, n, k), planned as gemm's Auto plans it (SHARDMM_PROFILE,
/// --memory-limit, --allow-fast). Throws InvalidArgument with --grid or --layout-a/-b/-c.
template <class Cfg>
PreferredLayouts preferred_inputs(const Cfg& cfg, Dtype dtype, Op opA, Op opB) {
  if (!cfg.grid.empty() || !cfg.layout_a.empty() || !cfg.layout_b.empty() || !cfg.layout_c.empty())
    throw InvalidArgument("--layouts preferred chooses the mesh and the layouts: drop --grid and "
                          "--layout-a/-b/-c");
  const Options o = algo_options(cfg, "auto");
  PlanRequest r;
  r.m = cfg.m, r.n = cfg.n, r.k = cfg.k, r.dtype = dtype;
  SHARDMM_CLI_MPI(MPI_Comm_size(MPI_COMM_WORLD, &r.ranks));
  r.memory_limit = o.memory_limit, r.memory_growth = o.memory_growth;
  r.allow_fast = o.allow_fast;
  r.profile = MachineProfile::from_environment();
  r.relays_in_gemm = o.overlap && Mesh::line(MPI_COMM_WORLD).spans_nodes();  // as gemm will see
  return preferred_layouts(r, opA, opB);
}

}  // namespace shardmm::cli
