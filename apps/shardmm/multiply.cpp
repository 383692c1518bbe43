// multiply: check the output's destination and every input's header first (rank 0 looks at
// the files, every rank gets the same answer), then read A, B (and C0) collectively into
// their layouts, run gemm, and write C to a temporary file that is renamed onto the output only
// after every rank succeeded. 1-D .npy operands follow numpy's matmul (multiply.hpp). Rank 0
// reports the read, multiply and write times and every rank's peak resident memory;
// --progress shows the stages on stderr (progress.hpp).
#include "multiply.hpp"

#include <mpi.h>

#include <unistd.h>
#include <complex>
#include <cstdio>
#include <string>
#include <vector>

#include "agree.hpp"
#include "algo_options.hpp"
#include "multiply_files.hpp"
#include "progress.hpp"
#include "shardmm/shardmm.hpp"

namespace shardmm::cli {
namespace {

// An operand as stored: rows x cols, and the number of dimensions its .npy file declares
// (shape (n,) is n x 1 with ndims 1, shape () is 1 x 1 with ndims 0).
struct Operand {
  index_t rows = 0, cols = 0;
  int ndims = 2;
};

Operand parse_shape(const std::string& text, const char* option) {
  if (text.empty())
    throw InvalidArgument(std::string("--format raw needs ") + option +
                          " RxC (the shape as stored)");
  const auto s = MeshShape::parse(text);  // "RxC" -> sizes (validated digits)
  if (s.ndims() != 2)
    throw InvalidArgument(std::string(option) + " must be RxC, got '" + text + "'");
  return {s.sizes[0], s.sizes[1], 2};
}

struct Inputs {
  Dtype dtype = Dtype::F64;
  Operand a, b, c;
};

// The header of .npy `path` (same on every rank) and its number of dimensions.
Operand npy_operand(const std::string& path, Dtype& dtype) {
  const NpyHeader h = read_npy_header(path, MPI_COMM_WORLD);
  int ndims = 2;
  if (int rank = 0; MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS && rank == 0)
    ndims = files::npy_ndims(path);
  SHARDMM_CLI_MPI(MPI_Bcast(&ndims, 1, MPI_INT, 0, MPI_COMM_WORLD));
  dtype = h.dtype;
  return {h.rows, h.cols, ndims};
}

// Headers (or raw shapes) of every input, checked before any data moves.
Inputs inspect(const MultiplyConfig& cfg) {
  Inputs in;
  if (cfg.format == "raw") {
    in.dtype = parse_dtype(cfg.dtype);
    in.a = parse_shape(cfg.shape_a, "--shape-a");
    in.b = parse_shape(cfg.shape_b, "--shape-b");
    if (!cfg.c_in.empty()) in.c = parse_shape(cfg.shape_c, "--shape-c");
    return in;
  }
  for (const auto& [offset, option] :
       {std::pair{cfg.offset_a, "--offset-a"}, std::pair{cfg.offset_b, "--offset-b"},
        std::pair{cfg.offset_c, "--offset-c"}})
    if (offset != 0)
      throw InvalidArgument(std::string(option) +
                            " applies to --format raw (a .npy file's header gives its offset)");
  Dtype db = Dtype::F64, dc = Dtype::F64;
  in.a = npy_operand(cfg.a, in.dtype);
  in.b = npy_operand(cfg.b, db);
  if (in.dtype != db)
    throw InvalidArgument("A is " + to_string(in.dtype) + " but B is " + to_string(db) +
                          "; both operands must have the same dtype");
  if (!cfg.c_in.empty()) {
    in.c = npy_operand(cfg.c_in, dc);
    if (dc != in.dtype)
      throw InvalidArgument("--c-in is " + to_string(dc) + " but A is " + to_string(in.dtype));
  }
  return in;
}

// The 2-D product the files describe: C (m x n, stored) = op1(first) op2(second). Usually A and
// B as given; numpy's matmul for 1-D operands: A (k,) is a row (1, k), B (k,) a column (k, 1),
// and C drops what they add (out_ndims 1 or 0; C is stored as a column then: a 1-D A with a 2-D
// B runs as C^T = op(B)^T a).
struct Product {
  std::string first, second, layout1, layout2;
  Operand s1, s2;
  Op op1 = Op::N, op2 = Op::N;
  index_t m = 0, n = 0, k = 0;
  int out_ndims = 2;
};

std::string dims(index_t r, index_t c) { return std::to_string(r) + "x" + std::to_string(c); }

// "op(A) is 4x3 (a.npy)", or "A has shape (3,) (a.npy)" for a vector.
std::string described(const char* name, const Operand& s, Op op, const std::string& path) {
  if (s.ndims < 2)
    return std::string(name) + " has shape (" + std::to_string(s.rows) + ",) (" + path + ")";
  return std::string("op(") + name + ") is " +
         (op == Op::N ? dims(s.rows, s.cols) : dims(s.cols, s.rows)) + " (" + path + ")";
}

// Transposes apply to matrices: refused for a vector (numpy has none either) and a scalar.
void check_vector(const char* name, const Operand& s, Op op, const char* option) {
  if (s.ndims == 0)
    throw InvalidArgument(
        std::string(name) +
        " has shape (): matmul needs at least one dimension (numpy refuses a 0-d operand too)");
  if (s.ndims == 1 && op != Op::N)
    throw InvalidArgument(std::string(name) + " is 1-D (shape (" + std::to_string(s.rows) +
                          ",)): " + option + " applies to 2-D operands only");
}

void check_c_in(const Product& p, const Operand& c) {
  if (p.out_ndims == 2 && c.ndims == 2) {
    if (c.rows != p.m || c.cols != p.n)
      throw DimensionMismatch("--c-in is " + dims(c.rows, c.cols) + " but op(A) op(B) is " +
                              dims(p.m, p.n));
    return;
  }
  const std::string want = p.out_ndims == 2
                               ? "(" + std::to_string(p.m) + ", " + std::to_string(p.n) + ")"
                               : files::vector_shape(p.m, p.out_ndims);
  const std::string got = c.ndims == 2
                              ? "(" + std::to_string(c.rows) + ", " + std::to_string(c.cols) + ")"
                              : files::vector_shape(c.rows, c.ndims);
  if (want != got)
    throw DimensionMismatch("--c-in has shape " + got + " but the product has shape " + want);
}

Product product_of(const MultiplyConfig& cfg, const Inputs& in) {
  Op opA = cfg.transa;
  const Op opB = cfg.transb;
  check_vector("A", in.a, opA, "--transa");
  check_vector("B", in.b, opB, "--transb");
  if (in.a.ndims == 1) opA = Op::T;  // the row (1, k): the stored k x 1 column transposed
  const index_t m = opA == Op::N ? in.a.rows : in.a.cols, k = opA == Op::N ? in.a.cols : in.a.rows;
  const index_t kb = opB == Op::N ? in.b.rows : in.b.cols, n = opB == Op::N ? in.b.cols : in.b.rows;
  if (k != kb)
    throw DimensionMismatch("inner dimensions differ: " + described("A", in.a, opA, cfg.a) +
                            " but " + described("B", in.b, opB, cfg.b));
  Product p{cfg.a, cfg.b, cfg.layout_a, cfg.layout_b, in.a, in.b, opA, opB, m, n, k, 2};
  p.out_ndims = 2 - (in.a.ndims == 1 ? 1 : 0) - (in.b.ndims == 1 ? 1 : 0);
  if (in.a.ndims == 1 && in.b.ndims == 2) {  // C^T (n x 1) = op(B)^T a
    if (opB == Op::C)
      throw NotSupported("a 1-D A with --transb C: conjugate B in the file instead");
    p = {cfg.b,
         cfg.a,
         cfg.layout_b,
         cfg.layout_a,
         in.b,
         in.a,
         opB == Op::N ? Op::T : Op::N,
         Op::N,
         n,
         1,
         k,
         1};
  }
  if (!cfg.c_in.empty()) check_c_in(p, in.c);
  return p;
}

template <Scalar T>
void read_into(const MultiplyConfig& cfg, const std::string& path, std::int64_t offset,
               DistMatrix<T>& X) {
  if (cfg.format == "raw") read_raw(path, X, cfg.order == "F", offset);
  else read_npy(path, X);
}

// C to the output: raw, a 2-D .npy, or a 1-D / 0-d .npy (multiply_files.hpp).
template <Scalar T>
void write_output(const MultiplyConfig& cfg, const Product& p, const DistMatrix<T>& C) {
  if (cfg.format == "raw") return write_raw(cfg.output, C, cfg.order == "F");
  if (p.out_ndims == 2) return write_npy(cfg.output, C, cfg.fortran_out);
  int pid = static_cast<int>(::getpid());
  SHARDMM_CLI_MPI(MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
  const std::string tmp = cfg.output + ".vector." + std::to_string(pid);
  write_npy(tmp, C, cfg.fortran_out);
  checked_on_root(MPI_COMM_WORLD, [&] {
    files::publish_vector(tmp, cfg.output, p.m, files::vector_shape(p.m, p.out_ndims));
  });
}

// Rank 0's account of the in-core run, as the out-of-core path gives one: the files read and
// written with their times, and every rank's peak resident memory (collective: every rank
// calls it).
struct InCoreTimes {
  double read = 0, gemm = 0, write = 0;
  double read_mib = 0, write_mib = 0;
};

void report_in_core(const MultiplyConfig& cfg, const InCoreTimes& t, bool root) {
  const std::vector<long long> rss = peak_rss_per_rank();
  if (!root || cfg.quiet) return;
  std::printf("rank 0: read %.1f MiB in %.3f s, multiplied in %.3f s, wrote %.1f MiB in %.3f s\n",
              t.read_mib, t.read, t.gemm, t.write_mib, t.write);
  std::printf("%s\n", peak_rss_line(rss).c_str());
}

template <Scalar T>
int multiply_typed(const MultiplyConfig& cfg, const Product& p, const Options& o) {
  Mesh mesh = operand_mesh(cfg);
  const bool root = mesh.rank() == 0;
  ProgressLine progress;  // --progress, rank 0: one update per stage
  auto stage = [&](const std::string& text) {
    if (root && cfg.progress && !cfg.quiet) progress.update("multiply: " + text);
  };
  auto layout = [&](const std::string& spec, index_t r, index_t c) {
    return spec.empty() ? Layout::block_cyclic(mesh.shape(), r, c, cfg.nb, cfg.nb)
                        : Layout(mesh.shape(), r, c, spec);
  };
  DistMatrix<T> X(mesh, layout(p.layout1, p.s1.rows, p.s1.cols));
  DistMatrix<T> Y(mesh, layout(p.layout2, p.s2.rows, p.s2.cols));
  DistMatrix<T> C(mesh, layout(cfg.layout_c, p.m, p.n));
  InCoreTimes t;
  const double elements = double(p.s1.rows) * double(p.s1.cols) +
                          double(p.s2.rows) * double(p.s2.cols) +
                          (cfg.c_in.empty() ? 0.0 : double(p.m) * double(p.n));
  t.read_mib = mib(elements * sizeof(T));
  t.write_mib = mib(double(p.m) * double(p.n) * sizeof(T));
  stage("reading " + p.first + ", " + p.second + (cfg.c_in.empty() ? "" : ", " + cfg.c_in));
  double t0 = MPI_Wtime();
  read_into(cfg, p.first, cfg.offset_a, X);  // raw operands are 2-D: first is A, second B
  read_into(cfg, p.second, cfg.offset_b, Y);
  if (!cfg.c_in.empty()) read_into(cfg, cfg.c_in, cfg.offset_c, C);
  t.read = MPI_Wtime() - t0;
  stage("multiplying " + dims(p.m, p.n) + " x " + std::to_string(p.k));
  const double beta = cfg.c_in.empty() ? 0.0 : cfg.beta_given ? cfg.beta : 1.0;
  const GemmReport r = gemm(p.op1, p.op2, T(static_cast<real_t<T>>(cfg.alpha)), X, Y,
                            T(static_cast<real_t<T>>(beta)), C, o);
  t.gemm = r.seconds_total;
  stage("writing " + cfg.output);
  t0 = MPI_Wtime();
  write_output(cfg, p, C);
  t.write = MPI_Wtime() - t0;
  stage("done");
  progress.finish();
  const std::string shape =
      p.out_ndims == 2 ? dims(p.m, p.n) : files::vector_shape(p.m, p.out_ndims);
  if (root && !cfg.quiet)
    std::printf("wrote %s: %s %s = %s(A) %s(B) with %s in %.3f s\n", cfg.output.c_str(),
                shape.c_str(), to_string(dtype_of<T>()).c_str(), to_string(cfg.transa).c_str(),
                to_string(cfg.transb).c_str(), r.to_string().c_str(), r.seconds_total);
  report_in_core(cfg, t, root);
  return 0;
}

}  // namespace

int run_multiply(const MultiplyConfig& cfg) {
  if (cfg.c_in.empty() && cfg.beta != 0)
    throw InvalidArgument("--beta needs --c-in (the C0 it scales)");
  checked_on_root(MPI_COMM_WORLD, [&cfg] {
    files::check_destination(cfg.output, {cfg.a, cfg.b, cfg.c_in});
  });
  const Options o = algo_options(cfg, cfg.algo);
  const Inputs in = inspect(cfg);
  const Product p = product_of(cfg, in);
  if (in.a.ndims == 2 && in.b.ndims == 2 && run_multiply_out_of_core(cfg)) return 0;
  switch (in.dtype) {
    case Dtype::F32: return multiply_typed<float>(cfg, p, o);
    case Dtype::F64: return multiply_typed<double>(cfg, p, o);
    case Dtype::C64: return multiply_typed<std::complex<float>>(cfg, p, o);
    case Dtype::C128: return multiply_typed<std::complex<double>>(cfg, p, o);
    case Dtype::F16:
    case Dtype::BF16: break;
  }
  throw NotSupported("multiply: " + to_string(in.dtype) +
                     " files are not supported by the launcher yet (the library reads them: "
                     "read_npy / read_raw, then gemm)");
}

}  // namespace shardmm::cli
