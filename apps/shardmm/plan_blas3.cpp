// plan --op syrk|herk|symm|hemm|syr2k|her2k|trmm|trsm|tran|geadd: the PBLAS level-3 planner's
// candidates, lower bound, choice and why (include/shardmm/plan_blas3.hpp), as the routine
// itself plans the call. No communication; rank 0 prints.
#include <mpi.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "blas3_op.hpp"
#include "commands.hpp"
#include "mpi_util.hpp"

namespace shardmm::cli {
namespace {

// The request's layouts from --grid (bc(nb,nb) on that PxQ grid) and --layout-a/-b/-c (the
// output's for -c: C, or B of trmm / trsm).
void add_layouts(const PlanConfig& cfg, const Blas3Op& o, const Blas3Shape& s, Blas3Request& q) {
  if (cfg.grid.empty()) {
    if (!cfg.layout_a.empty() || !cfg.layout_b.empty() || !cfg.layout_c.empty())
      throw InvalidArgument("plan --layout-a/-b/-c need --grid (the mesh they are on)");
    return;
  }
  const MeshShape g = MeshShape::parse(cfg.grid);
  if (g.ndims() != 2 || g.size() != cfg.ranks)
    throw InvalidArgument("plan --op " + cfg.op + " --grid " + cfg.grid +
                          ": need PxQ with P*Q = " + "--ranks " + std::to_string(cfg.ranks));
  const MeshShape mesh({"x", "y"}, {g.sizes[0], g.sizes[1]});  // as bench names its mesh
  const auto layout = [&](const std::string& spec, index_t rows, index_t cols) {
    return spec.empty() ? Layout::block_cyclic(mesh, rows, cols, cfg.nb, cfg.nb)
                        : Layout(mesh, rows, cols, spec);
  };
  q.a = layout(cfg.layout_a, s.a_rows, s.a_cols);
  if (o.has_b()) q.b = layout(cfg.layout_b, s.b_rows, s.b_cols);
  q.out = layout(cfg.layout_c, s.out_rows, s.out_cols);
}

nlohmann::json candidate_json(const Blas3Candidate& c) {
  return {{"name", c.name()},     {"algorithm", c.algorithm},
          {"pr", c.pr},           {"pc", c.pc},
          {"words", c.words},     {"messages", c.messages},
          {"flops", c.flops},     {"memory_bytes", c.memory_bytes},
          {"seconds", c.seconds}, {"fits", c.fits},
          {"detail", c.detail}};
}

}  // namespace

int run_plan_blas3(const PlanConfig& cfg) {
  Blas3Op o{cfg.op, cfg.side[0], cfg.uplo[0], to_string(cfg.transa)[0], cfg.diag[0]};
  if (o.op == "tran" && o.trans == 'N') o.trans = 'T';  // as bench: p?tran is op T
  const Blas3Shape s = blas3_shape(o, cfg.m, cfg.n, cfg.k);
  Blas3Request q = blas3_request(o, s, cfg.ranks, parse_dtype(cfg.dtype));
  q.nb = cfg.nb;
  if (!cfg.memory_limit.empty()) q.memory_limit = parse_bytes(cfg.memory_limit);
  if (!cfg.memory_growth.empty()) q.memory_growth = parse_growth(cfg.memory_growth);
  q.profile = cfg.profile.empty() ? MachineProfile::from_environment()
                                  : MachineProfile::from_json_file(cfg.profile);
  add_layouts(cfg, o, s, q);
  const Blas3Plan plan = plan_blas3(q);
  if (world_rank() != 0) return 0;
  if (!cfg.json) {
    if (std::fputs(plan.explain().c_str(), stdout) < 0)
      throw IoError("cannot write the plan to stdout");
    return 0;
  }
  nlohmann::json out = {{"op", blas3_text(o)},
                        {"m", q.m},
                        {"n", q.n},
                        {"k", q.k},
                        {"ranks", q.ranks},
                        {"dtype", cfg.dtype},
                        {"lower_bound_words", plan.lower_bound},
                        {"flops", plan.flops},
                        {"cap_bytes", plan.cap_bytes},
                        {"chosen", candidate_json(plan.chosen)},
                        {"why", plan.why},
                        {"candidates", nlohmann::json::array()}};
  for (const Blas3Candidate& c : plan.candidates) out["candidates"].push_back(candidate_json(c));
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace shardmm::cli
