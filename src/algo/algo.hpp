// Interface between the gemm front end and the distributed algorithms.
// Each algorithm provides
//   Setup <name>_setup(const Problem&, const Options&)  -- the stored layouts it runs on (the
//        caller's own layouts where they already fit, so no redistribution is needed), and
//   void <name>_run<T>(const Operands<T>&, const Setup&, const Options&, Timers&)
// The front end resolves every choice first (Options carry no Auto the algorithm must
// decide, except where a setup says what Auto means), then redistributes A, B (and C) into
// the setup's layouts when they differ. An algorithm may compose another (2.5D runs SUMMA
// per slice) through this interface, on views, with the caller's timers.
#pragma once

#include <mpi.h>

#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "blas/blas.hpp"
#include "comm/agree.hpp"
#include "comm/collectives.hpp"
#include "core/fault.hpp"
#include "core/instantiate.hpp"
#include "shardmm/dist_matrix.hpp"
#include "shardmm/options.hpp"
#include "trace/trace.hpp"

namespace shardmm::algo {

/// A dimension cut in contiguous blocks over `axes` (the notation's I_x).
inline DimSpec block_dim(const char* label, std::vector<std::string> axes) {
  return DimSpec{label, DimSpec::Kind::Block, std::move(axes), 0, 0};
}

/// Whether an overlapped GEMM polls the messages in flight (blas::Progress): when they cross a
/// network (the mesh spans nodes: over TCP a message moves only inside MPI calls). On one node
/// shared memory gains nothing from it and the blocks cost the GEMM 2-3 % (2048^3 TN, P = 2);
/// blas::Blocking::on_node turns it on there too (tests).
inline bool polls(const Mesh& mesh, bool overlap = true) {
  return overlap && (mesh.spans_nodes() || blas::blocking().on_node);
}

/// While it lives, this thread's GEMMs poll `pending` (the requests in flight during an
/// overlapped step) through a blas::Progress, where polls(mesh, overlap) says so.
class Polling {
 public:
  Polling(const Mesh& mesh, bool overlap, std::initializer_list<comm::Requests*> pending)
      : pending_(pending),
        progress_([this] { return comm::test_each(pending_); }, polls(mesh, overlap)) {}

 private:
  std::vector<comm::Requests*> pending_;
  blas::Progress progress_;
};

/// Global description of a call: shapes, ops and the caller's layouts (all ranks agree).
struct Problem {
  Op opA = Op::N, opB = Op::N;
  index_t m = 0, n = 0, k = 0;
  Layout A, B, C;  // the caller's stored layouts
  MeshShape mesh;
};

/// The ring's own choices (ring_setup.cpp).
struct RingSetup {
  RingForm form = RingForm::AllGatherA;
  std::string axis;     // the mesh axis it runs along
  bool stream = false;  // p = 2 AllGather form: the other operand's k split streamed
};

/// SUMMA's variant (summa.cpp, summa_stationary.cpp).
struct SummaSetup {
  Stationary stationary = Stationary::C;
  // A/B-stationary: how many of each owner's local columns (A stays) or rows (B stays) of C
  // one chunk of the moving operand streams (blocking::stationary_chunk_width).
  index_t chunk = 0;
};

/// 2.5D's grid: rows x cols x k-slices (gemm25d.cpp).
struct Gemm25DSetup {
  int pm = 1, pn = 1, pk = 1;
};

/// Strassen's form (strassen.cpp): by C's split over pm x pn ranks, or the breadth-first step
/// first (then 1 x Q: Q ranks per group).
struct StrassenSetup {
  enum class Form { Local, Line, Column, Grid, BreadthFirst };
  Form form = Form::Local;
  int pm = 1, pn = 1;
};

/// The sharding rules' staged layouts: op(A)'s, op(B)'s and the product's (sharded.cpp).
struct ShardedSetup {
  std::vector<Layout> staged;
};

/// Layouts an algorithm runs on, how to describe the run, and the algorithm's own choices:
/// one alternative per algorithm that makes any (none for Local and Cannon), so no
/// algorithm sees another's fields.
struct Setup {
  Algorithm algorithm = Algorithm::Auto;
  Layout A, B, C;  // stored layouts (A is k x m when opA != N)
  std::string grid, detail;
  std::variant<std::monostate, RingSetup, SummaSetup, Gemm25DSetup, StrassenSetup, ShardedSetup>
      own;
  /// The algorithm's own part; std::bad_variant_access when the setup is another's.
  template <class S>
  [[nodiscard]] const S& as() const {
    return std::get<S>(own);
  }
};

double now();  // seconds, MPI_Wtime

/// Where a call's time goes, per rank: every interval is measured with `timed`.
struct Timers {
  double gemm = 0;    // local BLAS
  double comm = 0;    // waiting for communication
  double redist = 0;  // redistribution inside the algorithm (2.5D)
  /// Runs f(), adds its duration to the counter `acc` (&Timers::gemm, ::comm or ::redist; none
  /// when nullptr) and traces it as a span of algorithm step `step` (-1: none), named "compute"
  /// for &Timers::gemm, else `what` (default: "wait" or "redistribute" after the counter).
  /// Returns f()'s result.
  template <class F>
  decltype(auto) timed(double Timers::*acc, const char* what, std::int64_t step, F&& f) {
    const Interval span(*this, acc, what, step);
    return f();
  }
  template <class F>
  decltype(auto) timed(double Timers::*acc, F&& f) {
    return timed(acc, nullptr, -1, std::forward<F>(f));
  }

 private:
  static const char* name_of(double Timers::*acc, const char* what) {
    if (acc == &Timers::gemm) return "compute";  // "gemm" names the call
    if (what != nullptr) return what;
    if (acc == &Timers::comm) return "wait";
    return acc == &Timers::redist ? "redistribute" : "step";
  }
  // Closes on scope exit, also when f() throws. The span opens before the clock starts and
  // closes after it stops (the destructor's body runs before the members'), so a traced step
  // always covers the time its counter got.
  struct Interval {
    Timers& t;
    double Timers::*acc;
    trace::Span span;
    double start;
    Interval(Timers& timers, double Timers::*counter, const char* name, std::int64_t index)
        : t(timers),
          acc(counter),
          span(name_of(counter, name), trace::Cat::Step, index),
          start(now()) {}
    Interval(const Interval&) = delete;
    Interval& operator=(const Interval&) = delete;
    Interval(Interval&&) = delete;
    Interval& operator=(Interval&&) = delete;
    ~Interval() {
      if (acc) t.*acc += now() - start;
    }
  };
};

template <Scalar T>
struct Operands {
  Op opA, opB;
  T alpha;
  const DistMatrix<T>& A;
  const DistMatrix<T>& B;
  T beta;
  DistMatrix<T>& C;
};

/// A product of its own on a group of the ranks, handed back to the front end (which passes
/// front::sub_product): C <- alpha op(A) op(B) + beta C on C's mesh with options `o`, planned
/// (agreed by the group's ranks) and run as gemm runs a call, its times added to `t`.
/// Collective over C's mesh. Strassen's breadth-first step multiplies each group's pair so:
/// an algorithm never calls the public gemm.
template <Scalar T>
using SubProduct = void (*)(const Operands<T>& x, const Options& o, Timers& t);

/// The stored layout of X when op(X) has logical layout `spec` (rows x cols).
Layout stored_layout(Op op, const MeshShape& mesh, index_t rows, index_t cols,
                     const ShardingSpec& spec);
/// Dimension of stored X that holds op(X)'s dimension `logical_dim`.
inline int stored_dim(Op op, int logical_dim) {
  return op == Op::N ? logical_dim : 1 - logical_dim;
}

/// The multiply phase's boundary: `take` gets the run's work buffers (rank-local work, no
/// communication); then every rank of `comm` (C's mesh) agrees before the first message
/// moves, so a rank that cannot allocate makes every rank throw instead of leaving them
/// waiting in the algorithm's first collective.
template <class F>
void prologue(MPI_Comm comm, F&& take) {
  comm::agreed(comm, "multiply", [&] {
    fault::point("multiply");
    take();
  });
}

/// Names of the mesh axes with these indices (for Mesh::axis_comm).
std::vector<std::string> axis_names(const MeshShape& mesh, const std::vector<int>& axes);

/// 2.5D's own layouts on the mesh {x: pm, y: pn, z: pk}: stored A and B, and C. gemm25d_run
/// reads inputs already in them in place and reduces straight into a C in its layout.
struct Layouts25D {
  Layout A, B, C;
};
Layouts25D gemm25d_layouts(Op opA, Op opB, index_t m, index_t n, index_t k, int pm, int pn, int pk);

Setup summa_setup(const Problem& p, const Options& o);
/// SUMMA A/B-stationary (`stays`: A or B) on setup `s`'s layouts: SummaSetup::chunk
/// (summa_stationary.cpp).
index_t stationary_chunk(const Problem& p, const Options& o, const Setup& s, Stationary stays);
Setup cannon_setup(const Problem& p, const Options& o);
Setup ring_setup(const Problem& p, const Options& o);
Setup sharded_setup(const Problem& p, const Options& o);
Setup local_setup(const Problem& p, const Options& o);
Setup gemm25d_setup(const Problem& p, const Options& o);
Setup strassen_setup(const Problem& p, const Options& o);

template <Scalar T>
void summa_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t);
template <Scalar T>
void summa_stationary_run(const Operands<T>& x, const Setup& setup, bool overlap, Timers& t);
template <Scalar T>
void cannon_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t);
template <Scalar T>
void ring_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t);
template <Scalar T>
void sharded_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t);
template <Scalar T>
void gemm25d_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t);
template <Scalar T>
void strassen_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t,
                  SubProduct<T> group_product);
template <Scalar T>
void local_run(const Operands<T>& x, const Setup& setup, const Options& o, Timers& t);

}  // namespace shardmm::algo

// Instantiates an algorithm's run function for the scalar types of SHARDMM_FOR_EACH_SCALAR
// (core/instantiate.hpp: all four, two under scripts/lint).
#define SHARDMM_RUN_FOR(T, run) \
  template void run<T>(const Operands<T>&, const Setup&, const Options&, Timers&);
#ifdef SHARDMM_LINT
#define SHARDMM_INSTANTIATE_RUN(run) \
  SHARDMM_RUN_FOR(double, run)       \
  SHARDMM_RUN_FOR(std::complex<double>, run)
#else
#define SHARDMM_INSTANTIATE_RUN(run)        \
  SHARDMM_RUN_FOR(float, run)               \
  SHARDMM_RUN_FOR(double, run)              \
  SHARDMM_RUN_FOR(std::complex<float>, run) \
  SHARDMM_RUN_FOR(std::complex<double>, run)
#endif
