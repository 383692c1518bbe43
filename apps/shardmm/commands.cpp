// plan: the planner's table for (m, n, k, P) without running anything.
// calibrate: ping-pong between rank 0 and the last rank (8 B for latency, 8 MiB for
// bandwidth; medians), the bandwidth again with every rank shifting 8 MiB to the next rank
// around a ring across hosts while it receives from the previous one (the profile's: what a
// rank gets in a ring or chain broadcast while the ranks of a host share its link), about
// 1 GFLOP of 512^3 local GEMMs per type on every rank at once (the slowest), and Strassen's
// crossover (one Winograd step against one GEMM, f64, growing n), the disk of the profile's
// directory and MPI-IO's page-cache read cost there, per byte and per run (measure_mpiio_reads).
#include "commands.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>
#include <vector>

#include "mpi_util.hpp"
#include "multiply.hpp"
#include "shardmm/runtime.hpp"

namespace shardmm::cli {

namespace {

// The inputs' layouts preferred_layouts chooses, and the plan gemm runs on them.
std::string preferred_text(const PreferredLayouts& p, double lower_bound) {
  const double words = p.plan.words + p.plan.redist_words;
  char cost[96];
  (void)std::snprintf(cost, sizeof cost, "predicted %.4g s, %.4g words/rank = %.3g x lower bound",
                      p.plan.seconds, words, lower_bound > 0 ? words / lower_bound : 0.0);
  return "preferred inputs: mesh " + p.mesh.to_string() + ", A " + p.A.spec().to_string() + ", B " +
         p.B.spec().to_string() + ", C " + p.C.spec().to_string() + "\n  gemm runs " +
         p.plan.name() + " on them" +
         (p.in_place ? ", moving nothing into other layouts" : ", moving some of them") + " (" +
         cost + "); bench --layouts preferred takes them\n";
}

}  // namespace

int run_plan(const PlanConfig& cfg) {
  if (cfg.op != "gemm") return run_plan_blas3(cfg);
  PlanRequest r;
  r.m = cfg.m, r.n = cfg.n, r.k = cfg.k, r.ranks = cfg.ranks, r.dtype = parse_dtype(cfg.dtype);
  if (!cfg.memory_limit.empty()) r.memory_limit = parse_bytes(cfg.memory_limit);
  if (!cfg.memory_growth.empty()) r.memory_growth = parse_growth(cfg.memory_growth);
  r.allow_fast = cfg.allow_fast;
  r.relays_in_gemm = cfg.hosts > 1;
  r.profile = cfg.profile.empty() ? MachineProfile::from_environment()
                                  : MachineProfile::from_json_file(cfg.profile);
  if (!cfg.grid.empty()) {  // what gemm's Auto sees for ScaLAPACK-style inputs on that grid
    const MeshShape g = MeshShape::parse(cfg.grid);
    // A 3-D mesh (2.5D's own layouts) has no block-cyclic default: every layout is given.
    const bool laid_out = !cfg.layout_a.empty() && !cfg.layout_b.empty() && !cfg.layout_c.empty();
    const bool shape_ok = g.ndims() == 2 || (g.ndims() == 3 && laid_out);
    if (!shape_ok || g.size() != cfg.ranks)
      throw InvalidArgument("plan --grid " + cfg.grid + ": need PxQ with P*Q = --ranks " +
                            std::to_string(cfg.ranks) +
                            " (or PxQxR with --layout-a, --layout-b and --layout-c)");
    const Op opA = cfg.transa, opB = cfg.transb;
    const MeshShape mesh = g.ndims() == 2  // as bench names its mesh
                               ? MeshShape({"x", "y"}, {g.sizes[0], g.sizes[1]})
                               : MeshShape({"x", "y", "z"}, {g.sizes[0], g.sizes[1], g.sizes[2]});
    auto layout = [&](const std::string& spec, Op op, index_t rows, index_t cols) {
      if (op != Op::N) std::swap(rows, cols);  // as stored
      return spec.empty() ? Layout::block_cyclic(mesh, rows, cols, cfg.nb, cfg.nb)
                          : Layout(mesh, rows, cols, spec);
    };
    r = layouts_request(r, opA, opB, layout(cfg.layout_a, opA, r.m, r.k),
                        layout(cfg.layout_b, opB, r.k, r.n), layout(cfg.layout_c, Op::N, r.m, r.n));
  } else if (!cfg.layout_a.empty() || !cfg.layout_b.empty() || !cfg.layout_c.empty()) {
    throw InvalidArgument("plan --layout-a/-b/-c need --grid (the mesh they are on)");
  }
  if (memory_limit(r) > 0 && !cfg.json) {  // in core, or streamed from files when nothing fits
    try {
      (void)plan_gemm(r);
    } catch (const OutOfMemory& e) {  // streamed then; throws everywhere when even that can't
      (void)plan_out_of_core(r.m, r.n, r.k, r.dtype, r.ranks, memory_limit(r));
      if (world_rank() != 0) return 0;
      std::printf("in core: %s\n", e.what());
      print_out_of_core_plan(r.m, r.n, r.k, r.dtype, r.ranks, memory_limit(r), r.profile,
                             parse_io_method(cfg.io));
      return 0;
    }
  }
  const GemmPlan plan = plan_gemm(r);
  const PreferredLayouts pref = preferred_layouts(r, cfg.transa, cfg.transb);
  if (world_rank() != 0) return 0;
  if (!cfg.json) {
    if (std::fputs(plan.explain(static_cast<std::size_t>(cfg.rows)).c_str(), stdout) < 0 ||
        std::fputs(preferred_text(pref, plan.lower_bound).c_str(), stdout) < 0)
      throw IoError("cannot write the plan to stdout");
    if (memory_limit(r) > 0 &&  // streamed from files (docs/OUT_OF_CORE.md)
        plan_out_of_core(r.m, r.n, r.k, r.dtype, r.ranks, memory_limit(r)).out_of_core)
      print_out_of_core_plan(r.m, r.n, r.k, r.dtype, r.ranks, memory_limit(r), r.profile,
                             parse_io_method(cfg.io));
    return 0;
  }
  auto candidate = [](const Candidate& c) {
    return nlohmann::json{{"name", c.name()},
                          {"algorithm", to_string(c.algorithm)},
                          {"pm", c.pm},
                          {"pn", c.pn},
                          {"pk", c.pk},
                          {"seconds", c.seconds},
                          {"words", c.words},
                          {"redist_words", c.redist_words},
                          {"messages", c.messages},
                          {"flops", c.flops},
                          {"memory_bytes", c.memory_bytes},
                          {"added_bytes", c.added_bytes},
                          {"fits", c.fits}};
  };
  nlohmann::json out = {{"m", r.m},
                        {"n", r.n},
                        {"k", r.k},
                        {"ranks", r.ranks},
                        {"dtype", cfg.dtype},
                        {"profile", nlohmann::json::parse(r.profile.to_json())},
                        {"lower_bound_words", plan.lower_bound},
                        {"memory_policy", plan.policy},
                        {"resident_bytes", plan.resident_bytes},
                        {"chosen", candidate(plan.chosen)},
                        {"preferred",
                         {{"mesh", pref.mesh.to_string()},
                          {"A", pref.A.spec().to_string()},
                          {"B", pref.B.spec().to_string()},
                          {"C", pref.C.spec().to_string()},
                          {"in_place", pref.in_place},
                          {"plan", candidate(pref.plan)}}},
                        {"candidates", nlohmann::json::array()}};
  for (std::size_t i = 0; i < plan.candidates.size() && i < static_cast<std::size_t>(cfg.rows); ++i)
    out["candidates"].push_back(candidate(plan.candidates[i]));
  out["larger_budget"] = plan.roomier.empty() ? nlohmann::json() : candidate(plan.roomier.front());
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Waits for `req` without spinning: ranks that take no part in a ping-pong sleep between tests,
// so that on an oversubscribed node (several simulated hosts on a few cores) they do not steal
// the two measuring ranks' cores and inflate the latency by a scheduler time slice.
void quiet_wait(MPI_Request& req) {
  for (int done = 0;;) {
    SHARDMM_CLI_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// One-way time of a message of `bytes` between rank 0 and rank `peer`: median of reps round
// trips timed on rank 0 after one untimed round trip, then broadcast; the other ranks sleep.
double pingpong(int peer, std::size_t bytes, int reps) {
  int rank = 0;
  SHARDMM_CLI_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  std::vector<char> buf(std::max<std::size_t>(bytes, 1));
  std::vector<double> times;
  const int n = static_cast<int>(bytes);
  for (int r = 0; r <= reps && (rank == 0 || rank == peer); ++r) {
    const double t0 = MPI_Wtime();
    if (rank == 0) {  // rank 0 -> peer -> rank 0
      SHARDMM_CLI_MPI(MPI_Send(buf.data(), n, MPI_CHAR, peer, 0, MPI_COMM_WORLD));
      SHARDMM_CLI_MPI(
          MPI_Recv(buf.data(), n, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
      SHARDMM_CLI_MPI(MPI_Recv(buf.data(), n, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      SHARDMM_CLI_MPI(MPI_Send(buf.data(), n, MPI_CHAR, 0, 0, MPI_COMM_WORLD));
    }
    if (r > 0) times.push_back((MPI_Wtime() - t0) / 2);
  }
  double t = rank == 0 ? median(times) : 0;
  MPI_Request req = MPI_REQUEST_NULL;
  // The MPI checker cannot see quiet_wait's MPI_Test loop complete the request: a false positive.
  // NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
  SHARDMM_CLI_MPI(MPI_Ibcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req));
  quiet_wait(req);
  return t;
  // NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)
}

// GFLOP/s per rank of 512^3 GEMMs on every rank at once: the slowest rank's time for about
// 1 GFLOP of them back to back (4 real, 1 complex), median of 3 after a warm-up. One GEMM is
// a few ms, shorter than a scheduler slice: where ranks share cores, a single one timed alone
// measured anything from the shared rate to a core's own (4.0-12.5 GFLOP/s f64 at 4 ranks per
// core); 1 GFLOP is long enough for the ranks on a core to take turns as they do in a run.
template <Scalar T>
double gemm_gflops() {
  const index_t s = 512;
  const auto size = static_cast<std::size_t>(s * s);
  const double flops = (is_complex_v<T> ? 8.0 : 2.0) * double(s * s * s);
  const int count = is_complex_v<T> ? 1 : 4;
  std::vector<T> a(size, T(1)), b(size, T(1)), c(size, T(1));
  std::vector<double> times;
  for (int r = 0; r < 4; ++r) {
    SHARDMM_CLI_MPI(MPI_Barrier(MPI_COMM_WORLD));
    const double t0 = MPI_Wtime();
    for (int g = 0; g < count; ++g)
      local_gemm(Op::N, Op::N, s, s, s, T(1), a.data(), s, b.data(), s, T(0), c.data(), s);
    double t = MPI_Wtime() - t0, worst = 0;
    SHARDMM_CLI_MPI(MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (r > 0) times.push_back(worst);
  }
  return flops * count / median(times) * 1e-9;
}

// Seconds of the slowest rank for one gemm on an n^3 f64 product alone on each rank (every
// rank at once, as the algorithms run): classical (Local) or one Winograd step (Strassen with
// crossover n). Best of two after a warm-up that fills the workspace pool.
double step_seconds(index_t n, bool winograd) {
  const Mesh self = Mesh::line(MPI_COMM_SELF);
  DistMatrix<double> A(self, n, n, "[I_X,J]"), B(self, n, n, "[I_X,J]"), C(self, n, n, "[I_X,J]");
  A.fill([](index_t i, index_t j) { return double((i + 2 * j) % 7) - 3; });
  B.fill([](index_t i, index_t j) { return double((3 * i + j) % 5) - 2; });
  Options o;
  o.algorithm = winograd ? Algorithm::Strassen : Algorithm::Local;
  o.fast_crossover = n;
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    SHARDMM_CLI_MPI(MPI_Barrier(MPI_COMM_WORLD));
    const double t0 = MPI_Wtime();
    gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o);
    double t = MPI_Wtime() - t0, worst = 0;
    SHARDMM_CLI_MPI(MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (r > 0) best = std::min(best, worst);
  }
  return best;
}

// The ring of the bandwidth measurement, as (previous, next) world ranks: the hosts' first
// ranks in host order, then their second ranks, and so on, so that where there are several
// hosts every rank's neighbours are on other hosts and the ranks of a host share its link.
// A host is an MPI_COMM_TYPE_SHARED group, known by its lowest world rank.
std::pair<int, int> ring_across_hosts() {
  int rank = 0, size = 1, local = 0, host = 0;
  SHARDMM_CLI_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  SHARDMM_CLI_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  MPI_Comm node = MPI_COMM_NULL;
  SHARDMM_CLI_MPI(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  SHARDMM_CLI_MPI(MPI_Comm_rank(node, &local));
  host = rank;
  SHARDMM_CLI_MPI(MPI_Bcast(&host, 1, MPI_INT, 0, node));
  SHARDMM_CLI_MPI(MPI_Comm_free(&node));
  const long long key = static_cast<long long>(local) * size + host;
  std::vector<long long> keys(static_cast<std::size_t>(size));
  SHARDMM_CLI_MPI(
      MPI_Allgather(&key, 1, MPI_LONG_LONG, keys.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD));
  std::vector<int> order(keys.size());  // world ranks in ring order
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&keys](int x, int y) {
    return keys[static_cast<std::size_t>(x)] < keys[static_cast<std::size_t>(y)];
  });
  const auto at = std::find(order.begin(), order.end(), rank) - order.begin();
  return {order[static_cast<std::size_t>((at + size - 1) % size)],
          order[static_cast<std::size_t>((at + 1) % size)]};
}

// Seconds for every rank to send `bytes` to the next rank of ring_across_hosts while it
// receives as many from the previous one (a ring shift: what the chain broadcast and the rings
// do at every step), all ranks at once: the slowest rank's time, median of reps after one
// untimed shift. Every message crosses a link, and the ranks of a host send and receive over
// its one link at once, as they do in a run; one pair alone has a link to itself.
double ring_shift_seconds(std::size_t bytes, int reps) {
  const auto [prev, next] = ring_across_hosts();
  std::vector<char> out(bytes), in(bytes);
  const int n = static_cast<int>(bytes);
  std::vector<double> times;
  for (int r = 0; r <= reps; ++r) {
    SHARDMM_CLI_MPI(MPI_Barrier(MPI_COMM_WORLD));
    const double t0 = MPI_Wtime();
    SHARDMM_CLI_MPI(MPI_Sendrecv(out.data(), n, MPI_CHAR, next, 1, in.data(), n, MPI_CHAR, prev, 1,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    double t = MPI_Wtime() - t0, worst = 0;
    SHARDMM_CLI_MPI(MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (r > 0) times.push_back(worst);
  }
  return median(times);
}

// Strassen's crossover: the first n (256, 384, 512, 768, ... up to `largest`) at which one
// Winograd step beats one classical GEMM; twice `largest` when none does.
index_t strassen_crossover(index_t largest) {
  for (index_t n = 256; n <= largest; n = n % 3 == 0 ? n / 3 * 4 : n / 2 * 3)
    if (step_seconds(n, true) < step_seconds(n, false)) return n;
  return 2 * largest;
}

// Before any measurement: rank 0 can create the profile's temporary file (made and removed
// again), or every rank throws the same IoError, instead of after minutes of measuring.
void check_writable(const std::string& output, int rank) {
  int failed = 0;
  if (rank == 0) {
    const std::string tmp = output + ".tmp";
    failed = !std::ofstream(tmp);
    if (!failed) (void)std::remove(tmp.c_str());
  }
  SHARDMM_CLI_MPI(MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD));
  if (failed) throw IoError("cannot write profile '" + output + "'");
}

}  // namespace

int run_calibrate(const CalibrateConfig& cfg) {
  int rank = 0, size = 1;
  SHARDMM_CLI_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  SHARDMM_CLI_MPI(MPI_Comm_size(MPI_COMM_WORLD, &size));
  if (!cfg.output.empty()) check_writable(cfg.output, rank);
  MachineProfile p;
  double pair_bytes_per_s = 0;  // rank 0 and the last rank alone
  if (size > 1) {
    const double lat = pingpong(size - 1, 8, cfg.reps);
    const std::size_t big = std::size_t(8) << 20;
    const double t_big = pingpong(size - 1, big, std::max(3, cfg.reps / 4));
    p.latency_s = lat;
    pair_bytes_per_s = double(big) / std::max(t_big - lat, 1e-9);
    // The model's bandwidth is a rank's while every rank communicates (docs/ALGORITHMS.md):
    // the ring shift's across hosts, unless one pair alone is slower still.
    const double t_ring = ring_shift_seconds(big, std::max(3, cfg.reps / 4));
    p.bytes_per_s = std::min(pair_bytes_per_s, double(big) / std::max(t_ring - lat, 1e-9));
  }
  p.gflops[0] = gemm_gflops<float>();
  p.gflops[1] = gemm_gflops<double>();
  p.gflops[2] = gemm_gflops<std::complex<float>>();
  p.gflops[3] = gemm_gflops<std::complex<double>>();
  if (cfg.crossover_max > 0) p.strassen_crossover = strassen_crossover(cfg.crossover_max);
  std::string dir = std::filesystem::path(cfg.output).parent_path().string();
  if (dir.empty()) dir = ".";  // the profile's directory: its disk (docs/OUT_OF_CORE.md)
  if (const double d = measure_disk_bandwidth(dir); d > 0) p.disk_bytes_per_s = d;
  if (cfg.read_probe != "0") {
    const MpiioReadCost c = measure_mpiio_reads(MPI_COMM_WORLD, dir, parse_bytes(cfg.read_probe));
    p.read_copy_bytes_per_s.mpiio = c.bytes_per_s, p.read_run_seconds.mpiio = c.run_seconds;
  }
  p.source = cfg.output.empty() ? "calibrate" : cfg.output;
  if (rank == 0)
    std::printf("calibrated on %d ranks: latency %.3g us, bandwidth %.3g GB/s per rank in a ring "
                "shift across hosts (%.3g GB/s one pair alone), GEMM GFLOP/s per rank f32 %.1f "
                "f64 %.1f c64 %.1f c128 %.1f, Strassen crossover %lld, disk %.3g GB/s, "
                "page-cache reads per rank posix %.3g mpiio %.3g mmap %.3g GB/s (mpiio %.3g us "
                "a run)\n",
                size, p.latency_s * 1e6, p.bytes_per_s * 1e-9, pair_bytes_per_s * 1e-9, p.gflops[0],
                p.gflops[1], p.gflops[2], p.gflops[3], static_cast<long long>(p.strassen_crossover),
                p.disk_bytes_per_s * 1e-9, p.read_copy_bytes_per_s.posix * 1e-9,
                p.read_copy_bytes_per_s.mpiio * 1e-9, p.read_copy_bytes_per_s.mmap * 1e-9,
                p.read_run_seconds.mpiio * 1e6);
  if (cfg.output.empty()) return 0;
  int failed = 0;  // rank 0 writes (temporary file, then rename); every rank reports the outcome
  if (rank == 0) {
    const std::string tmp = cfg.output + ".tmp";
    std::ofstream out(tmp);
    out << p.to_json() << "\n";
    out.close();
    failed = !out || std::rename(tmp.c_str(), cfg.output.c_str()) != 0;
    if (failed) (void)std::remove(tmp.c_str());  // best effort: the error below is what counts
  }
  SHARDMM_CLI_MPI(MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD));
  if (failed) throw IoError("cannot write profile '" + cfg.output + "'");
  if (rank == 0)
    std::printf("profile written to %s (use with --profile or SHARDMM_PROFILE)\n",
                cfg.output.c_str());
  return 0;
}

}  // namespace shardmm::cli
