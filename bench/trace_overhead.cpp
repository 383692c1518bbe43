// What tracing costs a call: gemm with Options::trace empty and set, alternating call by call in
// one run on the same operands (a noisy neighbour hits both alike), per algorithm; prints the
// median seconds of each, their ratio, and the trace file's bytes per traced call. Rank 0
// prints; run it like the launcher:
//   mpirun -n 4 build/bench_trace_overhead --size 2048 --reps 5 --algo summa,ring,25d --trace
//   t.json
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "shardmm/shardmm.hpp"

namespace {

using namespace shardmm;

struct Args {
  index_t size = 2048;
  int reps = 5;
  std::vector<std::string> algos{"summa", "ring", "25d"};
  std::string trace = "trace_overhead.json";
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--size") a.size = std::stoll(v);
    else if (k == "--reps") a.reps = std::stoi(v);
    else if (k == "--trace") a.trace = v;
    else if (k == "--algo") {
      a.algos.clear();
      std::stringstream in(v);
      for (std::string s; std::getline(in, s, ',');) a.algos.push_back(s);
    } else {
      throw InvalidArgument("unknown option " + k +
                            " (--size N --reps R --algo a,b,c --trace FILE)");
    }
  }
  return a;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Seconds of one call, the slowest rank's, the ranks starting together.
double timed(const Mesh& mesh, const DistMatrix<double>& A, const DistMatrix<double>& B,
             DistMatrix<double>& C, const Options& o) {
  MPI_Barrier(mesh.comm());
  const double t0 = MPI_Wtime();
  gemm(Op::N, Op::N, 1.0, A, B, 0.0, C, o);
  double t = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, mesh.comm());
  return t;
}

void run(const Args& a) {
  const Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  DistMatrix<double> A(mesh, a.size, a.size, "A[I_X,J_Y]"), B(mesh, a.size, a.size, "B[I_X,J_Y]"),
      C(mesh, a.size, a.size, "C[I_X,J_Y]");
  A.fill([](index_t i, index_t j) { return 1.0 / double(1 + i + j); });
  B.fill([](index_t i, index_t j) { return 1.0 / double(1 + 2 * i + j); });
  if (mesh.rank() == 0)
    std::printf("%lld^3 f64 on %d ranks, %d calls each way, alternating\n%-6s %10s %10s %8s\n",
                static_cast<long long>(a.size), mesh.size(), a.reps, "algo", "off_s", "on_s",
                "on/off");
  int traced = 0;
  for (const std::string& name : a.algos) {
    Options off;
    off.algorithm = parse_algorithm(name);
    Options on = off;
    on.trace = a.trace;
    timed(mesh, A, B, C, off);  // warm-up: the workspace, the plan's profile, the clocks
    timed(mesh, A, B, C, on);
    ++traced;
    std::vector<double> t_off, t_on;
    for (int r = 0; r < a.reps; ++r) {
      t_off.push_back(timed(mesh, A, B, C, off));
      t_on.push_back(timed(mesh, A, B, C, on));
      ++traced;
    }
    if (mesh.rank() == 0)
      std::printf("%-6s %10.4f %10.4f %8.3f\n", name.c_str(), median(t_off), median(t_on),
                  median(t_on) / median(t_off));
  }
  if (mesh.rank() == 0) {
    const auto bytes = std::filesystem::file_size(a.trace);
    std::printf("%s: %llu bytes for %d traced calls on %d ranks: %.0f bytes per call\n",
                a.trace.c_str(), static_cast<unsigned long long>(bytes), traced, mesh.size(),
                double(bytes) / traced);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    run(parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_trace_overhead: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
