// bench --op symm|hemm|syrk|herk|syr2k|her2k|trmm|trsm|tran|geadd: shardmm's routine
// (include/shardmm/blas3.hpp) and ScaLAPACK's p?<op>_ on the same generated bc(nb,nb) operands
// in one mpirun, alternating call by call after the warm-up as gemm's bench does: reset the
// output (untimed), barrier, time one call (the slowest rank's). Then one table row / JSON
// record each (bench_report.cpp): words received per rank (shardmm's own counters, around the
// call) against the op's lower bound (blas3_bound.cpp), memory added, and a check that the
// two outputs agree: ||out - out_ScaLAPACK||_F <= 10 max(inner, 10) eps ||out_ScaLAPACK||_F
// (check_limit).
#include <unistd.h>

#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "agree.hpp"
#include "algo_options.hpp"
#include "bench.hpp"
#include "bench_measure.hpp"
#include "bench_report.hpp"
#include "bench_util.hpp"
#include "blas3_op.hpp"
#include "mpi_util.hpp"
#include "scalapack_ref.hpp"
#include "shardmm/blas3.hpp"

namespace shardmm::cli {

const std::vector<std::string>& blas3_ops() {
  static const std::vector<std::string> ops = {"symm",  "hemm", "syrk", "herk", "syr2k",
                                               "her2k", "trmm", "trsm", "tran", "geadd"};
  return ops;
}

namespace {

using bench::max_over;

// The generated operands: A, B (symm, hemm, syr2k, her2k) and the output's initial value
// (C, or B for trmm / trsm), bc(nb,nb) on the near-square operand mesh.
template <Scalar T>
struct Blas3Setup {
  Mesh mesh;
  Blas3Op o;
  Blas3Shape shape;
  T alpha, beta;
  DistMatrix<T> A;
  std::optional<DistMatrix<T>> B;
  DistMatrix<T> out0;
};

template <Scalar T>
std::unique_ptr<Blas3Setup<T>> make_blas3_setup(const BenchConfig& cfg) {
  Blas3Op o{cfg.op, cfg.side[0], cfg.uplo[0], to_string(cfg.transa)[0], cfg.diag[0]};
  if (o.op == "tran" && o.trans == 'N') o.trans = 'T';  // p?tran is op T (p?tranc: --transa C)
  const Blas3Shape sh = blas3_shape(o, cfg.m, cfg.n, cfg.k);
  Mesh mesh = operand_mesh(cfg);
  const auto bc = [&](index_t r, index_t c) {
    return Layout::block_cyclic(mesh.shape(), r, c, cfg.nb, cfg.nb);
  };
  auto s = std::unique_ptr<Blas3Setup<T>>(new Blas3Setup<T>{
      mesh, o, sh, bench::value_from<T>(cfg.alpha), bench::value_from<T>(cfg.beta),
      DistMatrix<T>(mesh, bc(sh.a_rows, sh.a_cols)), std::nullopt,
      DistMatrix<T>(mesh, bc(sh.out_rows, sh.out_cols))});
  const double na = double(std::max<index_t>(sh.inner, 1));
  s->A.fill([&](index_t i, index_t j) {  // trmm / trsm: a well-conditioned triangle
    const T a = bench::entry<T>(i, j, 1);
    if (!o.triangular()) return a;
    return i == j ? a + T(2) : a / T(static_cast<real_t<T>>(na));
  });
  if (o.has_b()) {
    s->B.emplace(mesh, bc(sh.b_rows, sh.b_cols));
    s->B->fill([](index_t i, index_t j) { return bench::entry<T>(i, j, 2); });
  }
  s->out0.fill([](index_t i, index_t j) { return bench::entry<T>(i, j, 3); });
  return s;
}

// out <- shardmm's routine for the op (blas3.hpp), on the same operands as ScaLAPACK's.
template <Scalar T>
void shardmm_blas3(const Blas3Op& o, T alpha, const DistMatrix<T>& A, const DistMatrix<T>* B,
                   T beta, DistMatrix<T>& out) {
  const Uplo uplo = o.uplo == 'U' ? Uplo::Upper : Uplo::Lower;
  const Side side = o.side == 'L' ? Side::Left : Side::Right;
  const Op op = parse_op(std::string(1, o.trans));
  if (o.op == "symm") symm(side, uplo, alpha, A, *B, beta, out);
  else if (o.op == "hemm") hemm(side, uplo, alpha, A, *B, beta, out);
  else if (o.op == "syrk") syrk(uplo, op, alpha, A, beta, out);
  else if (o.op == "herk") herk(uplo, op, std::real(alpha), A, std::real(beta), out);
  else if (o.op == "syr2k") syr2k(uplo, op, alpha, A, *B, beta, out);
  else if (o.op == "her2k") her2k(uplo, op, alpha, A, *B, std::real(beta), out);
  else if (o.op == "trmm" || o.op == "trsm") {
    const Diag diag = o.diag == 'U' ? Diag::Unit : Diag::NonUnit;
    if (o.op == "trsm") trsm(side, uplo, op, diag, alpha, A, out);
    else trmm(side, uplo, op, diag, alpha, A, out);
  } else if (o.op == "tran") transpose(op, alpha, A, beta, out);
  else if (o.op == "geadd") geadd(op, alpha, A, beta, out);
  else throw InvalidArgument("bench: unknown --op " + o.op);
}

// One contender: shardmm ("auto") or ScaLAPACK, with its own output.
template <Scalar T>
struct Blas3Contender {
  bench::Row row;
  bool scalapack = false;
  std::optional<DistMatrix<T>> out;
  std::optional<BlacsGrid> grid;
  double words = 0;  // received on this rank during the last call (shardmm only)

  [[nodiscard]] bool failed() const { return !row.error.empty(); }
  void call(const Blas3Setup<T>& s) {
    const DistMatrix<T>* B = s.B ? &*s.B : nullptr;
    if (scalapack) return scalapack_blas3(*grid, s.o, s.alpha, s.A, B, s.beta, *out);
    const std::int64_t before = bytes_received_total();
    shardmm_blas3(s.o, s.alpha, s.A, B, s.beta, *out);
    words = double(bytes_received_total() - before) / sizeof(T);
  }
};

// What the routine's own plan runs on these operands (plan_blas3, as the routine plans it).
template <Scalar T>
std::string planned(const Blas3Setup<T>& s) {
  Blas3Request q = blas3_request(s.o, s.shape, s.mesh.size(), dtype_of<T>());
  q.profile = MachineProfile::from_environment();
  q.a = s.A.layout(), q.out = s.out0.layout();
  if (s.B) q.b = s.B->layout();
  const Blas3Plan p = plan_blas3(q);
  char words[32];
  (void)std::snprintf(words, sizeof words, "%.4g", p.chosen.words);
  return p.chosen.name() + ", planned " + words + " words/rank";
}

template <Scalar T>
std::unique_ptr<Blas3Contender<T>> make_blas3_contender(const BenchConfig& cfg,
                                                        const Blas3Setup<T>& s,
                                                        const std::string& name) {
  auto c = std::make_unique<Blas3Contender<T>>();
  c->row.name = name;
  if (auto error = failure_of(s.mesh.comm(), [&] {
        if (name != "auto" && name != "scalapack")
          throw InvalidArgument("--op " + cfg.op + " runs shardmm's own routine: --algo auto " +
                                "and/or scalapack, not " + name);
        c->scalapack = name == "scalapack";
        c->out.emplace(s.mesh, s.out0.layout());
        const auto& sizes = s.mesh.shape().sizes;
        if (c->scalapack) {
          if (sizes.size() != 2) throw InvalidArgument("--algo scalapack needs a 2D grid");
          c->grid.emplace(s.mesh.comm(), sizes[0], sizes[1]);
          c->row.plan = "ScaLAPACK p?" + cfg.op + "_ on " + std::to_string(sizes[0]) + "x" +
                        std::to_string(sizes[1]) + ", " + s.out0.layout().spec().to_string();
        } else {
          c->row.plan = "shardmm::" + cfg.op + " (blas3.hpp) on " + s.mesh.shape().to_string() +
                        ": " + planned(s);
        }
      }))
    c->row.error = *error;
  return c;
}

// Warm-up then timed calls, the contenders taking turns (one that fails drops out with its
// error); the first contender's own memory before the second runs.
template <Scalar T>
void run_blas3_calls(const BenchConfig& cfg, const Blas3Setup<T>& s,
                     std::vector<std::unique_ptr<Blas3Contender<T>>>& cs, double before,
                     double abc) {
  for (int r = 0; r < cfg.warmup + cfg.reps; ++r)
    for (auto& c : cs) {
      if (r == 0 && cs.size() > 1 && c == cs[1])
        cs.front()->row.own_extra_ratio =
            max_over(abc > 0 ? std::max(0.0, bench::peak_resident_bytes() - before) / abc : 0.0,
                     s.mesh.comm());
      if (c->failed()) continue;
      redistribute(s.out0, *c->out);  // reset the output (untimed)
      SHARDMM_CLI_MPI(MPI_Barrier(s.mesh.comm()));
      const double t0 = MPI_Wtime();
      const auto error = thrown_by([&] { c->call(s); });  // library errors: the same on every rank
      const double t = max_over(MPI_Wtime() - t0, s.mesh.comm());
      if (auto agreed = first_failure(s.mesh.comm(), error)) c->row.error = *agreed;
      else if (r >= cfg.warmup) c->row.times.push_back(t);
    }
}

// ||out - ref||_F / (||ref||_F eps) over all ranks: shardmm's output against ScaLAPACK's.
template <Scalar T>
double difference_in_eps(const DistMatrix<T>& out, const DistMatrix<T>& ref) {
  double sums[2] = {0, 0};
  for (index_t j = 0; j < out.local_cols(); ++j)
    for (index_t i = 0; i < out.local_rows(); ++i) {
      const T d = out.data()[i + j * out.ld()] - ref.data()[i + j * ref.ld()];
      sums[0] += std::norm(d), sums[1] += std::norm(ref.data()[i + j * ref.ld()]);
    }
  SHARDMM_CLI_MPI(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, out.mesh().comm()));
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  return std::sqrt(sums[0]) / (std::max(std::sqrt(sums[1]), 1e-300) * eps);
}

// The check's limit in eps: the normwise bound of sums of `inner` terms, 10 inner eps (at
// least 100 eps, gemm's probe limit).
double check_limit(const Blas3Shape& sh) { return 10.0 * double(std::max<index_t>(sh.inner, 10)); }

// Words, memory and the check of each row that ran; the exit code (3: the outputs differ).
template <Scalar T>
int finish_blas3_rows(const Blas3Setup<T>& s, std::vector<std::unique_ptr<Blas3Contender<T>>>& cs,
                      std::vector<bench::Row>& rows) {
  const Blas3Contender<T>* ref = nullptr;
  for (auto& c : cs)
    if (c->scalapack && !c->failed()) ref = c.get();
  int rc = 0;
  for (auto& c : cs) {
    bench::Row& row = c->row;
    if (c->failed()) rc = 1;
    if (!c->failed() && !c->scalapack) {
      row.words_max = max_over(c->words, s.mesh.comm());
      row.words_mean = bench::sum_over(c->words, s.mesh.comm()) / s.mesh.size();
      row.algo_words_max = row.words_max;
      if (ref != nullptr) row.probe = difference_in_eps(*c->out, *ref->out);
      if (row.probe > check_limit(s.shape) && rc == 0) rc = 3;
    }
    row.blas_threads = blas_threads();
    row.peak_kb = static_cast<long>(max_over(bench::peak_resident_bytes() / 1024, s.mesh.comm()));
    rows.push_back(row);
  }
  return rc;
}

template <Scalar T>
int bench_blas3_typed(const BenchConfig& cfg) {
  const auto s = make_blas3_setup<T>(cfg);
  std::vector<std::unique_ptr<Blas3Contender<T>>> cs;
  cs.reserve(cfg.algos.size());
  for (const std::string& name : cfg.algos) cs.push_back(make_blas3_contender(cfg, *s, name));
  const auto bytes = [](const DistMatrix<T>& X) {
    return double(X.local_rows() * X.local_cols() * index_t(sizeof(T)));
  };
  const double abc = bytes(s->A) + (s->B ? bytes(*s->B) : 0.0) + bytes(s->out0);
  const double before = bench::resident_bytes();
  run_blas3_calls(cfg, *s, cs, before, abc);
  const double extra = std::max(0.0, bench::peak_resident_bytes() - before);
  if (cs.size() == 1)
    cs.front()->row.own_extra_ratio = max_over(abc > 0 ? extra / abc : 0.0, s->mesh.comm());
  const DistMatrix<T>& b_or_out = s->B ? *s->B : s->out0;
  bench::Context ctx{cfg, s->mesh, s->A.layout(), b_or_out.layout(), s->out0.layout(), 0, 0};
  ctx.work = blas3_flops(s->o, s->shape, is_complex_v<T>);
  ctx.lower_bound = blas3_lower_bound(s->o, s->shape, s->mesh.size());
  ctx.operation = blas3_text(s->o);
  ctx.check_limit = check_limit(s->shape);
  ctx.extra_bytes = max_over(extra, s->mesh.comm());
  ctx.extra_ratio = max_over(abc > 0 ? extra / abc : 0.0, s->mesh.comm());
  ctx.rate = bench::local_rate<T>(s->shape.out_rows, s->shape.out_cols,
                                  std::max<index_t>(s->shape.inner, 1), s->mesh.size());
  std::vector<bench::Row> rows;
  const int rc = finish_blas3_rows(*s, cs, rows);
  if (s->mesh.rank() == 0) bench::report(ctx, rows);
  return rc;
}

}  // namespace

int run_bench_blas3(const BenchConfig& cfg) {
  if (cfg.bare || cfg.tune_scalapack || cfg.layouts != "given" || !cfg.layout_a.empty() ||
      !cfg.layout_b.empty() || !cfg.layout_c.empty() || !cfg.scalapack_grid.empty())
    throw InvalidArgument("bench --op " + cfg.op +
                          ": bc(nb,nb) operands on --grid only (no --bare, --tune-scalapack, "
                          "--layouts, --layout-a/-b/-c or --scalapack-grid yet)");
  return bench::with_dtype(cfg.dtype, [&]<Scalar T>() { return bench_blas3_typed<T>(cfg); });
}

}  // namespace shardmm::cli
