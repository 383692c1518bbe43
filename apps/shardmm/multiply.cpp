// multiply: validate every file and shape first (headers only, same answer on every rank),
// then read A, B (and C0) collectively into their layouts, run gemm, and write C to a
// temporary file that is renamed onto the output only after every rank succeeded.
#include "multiply.hpp"

#include <mpi.h>

#include <cstdio>
#include <filesystem>

#include "shardmm/shardmm.hpp"

namespace shardmm::cli {
namespace {

struct Shape {
  index_t rows = 0, cols = 0;
};

Shape parse_shape(const std::string& text, const char* what) {
  const auto s = MeshShape::parse(text);  // "RxC" -> sizes (validated digits)
  if (s.ndims() != 2) throw InvalidArgument(std::string(what) + " must be RxC, got '" + text + "'");
  return {s.sizes[0], s.sizes[1]};
}

struct Inputs {
  Dtype dtype = Dtype::F64;
  Shape a, b, c;
};

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
  const NpyHeader ha = read_npy_header(cfg.a, MPI_COMM_WORLD);
  const NpyHeader hb = read_npy_header(cfg.b, MPI_COMM_WORLD);
  if (ha.dtype != hb.dtype)
    throw InvalidArgument("A is " + to_string(ha.dtype) + " but B is " + to_string(hb.dtype) +
                          "; both operands must have the same dtype");
  in = {ha.dtype, {ha.rows, ha.cols}, {hb.rows, hb.cols}, {}};
  if (!cfg.c_in.empty()) {
    const NpyHeader hc = read_npy_header(cfg.c_in, MPI_COMM_WORLD);
    if (hc.dtype != ha.dtype) throw InvalidArgument("--c-in is " + to_string(hc.dtype) + " but A is " + to_string(ha.dtype));
    in.c = {hc.rows, hc.cols};
  }
  return in;
}

void refuse_overwriting_inputs(const MultiplyConfig& cfg) {
  namespace fs = std::filesystem;
  const fs::path out = fs::weakly_canonical(cfg.output);
  for (const std::string& in : {cfg.a, cfg.b, cfg.c_in})
    if (!in.empty() && fs::weakly_canonical(in) == out)
      throw InvalidArgument("output '" + cfg.output + "' is also an input; choose another path");
}

template <Scalar T>
void read_into(const MultiplyConfig& cfg, const std::string& path, DistMatrix<T>& X) {
  if (cfg.format == "raw") read_raw(path, X, cfg.order == "F");
  else read_npy(path, X);
}

template <Scalar T>
int multiply_typed(const MultiplyConfig& cfg, const Inputs& in) {
  Mesh mesh = Mesh::grid2d(MPI_COMM_WORLD);
  const Op opA = parse_op(cfg.transa), opB = parse_op(cfg.transb);
  const index_t m = opA == Op::N ? in.a.rows : in.a.cols, k = opA == Op::N ? in.a.cols : in.a.rows;
  const index_t kb = opB == Op::N ? in.b.rows : in.b.cols, n = opB == Op::N ? in.b.cols : in.b.rows;
  if (k != kb)
    throw DimensionMismatch("op(A) is " + std::to_string(m) + "x" + std::to_string(k) + " (" + cfg.a +
                            ") but op(B) is " + std::to_string(kb) + "x" + std::to_string(n) + " (" + cfg.b + ")");
  if (!cfg.c_in.empty() && (in.c.rows != m || in.c.cols != n))
    throw DimensionMismatch("--c-in is " + std::to_string(in.c.rows) + "x" + std::to_string(in.c.cols) +
                            " but op(A) op(B) is " + std::to_string(m) + "x" + std::to_string(n));
  auto layout = [&](const std::string& spec, index_t r, index_t c) {
    return spec.empty() ? Layout::block_cyclic(mesh.shape(), r, c, cfg.nb, cfg.nb) : Layout(mesh.shape(), r, c, spec);
  };
  DistMatrix<T> A(mesh, layout(cfg.layout_a, in.a.rows, in.a.cols));
  DistMatrix<T> B(mesh, layout(cfg.layout_b, in.b.rows, in.b.cols));
  DistMatrix<T> C(mesh, layout(cfg.layout_c, m, n));
  read_into(cfg, cfg.a, A);
  read_into(cfg, cfg.b, B);
  if (!cfg.c_in.empty()) read_into(cfg, cfg.c_in, C);
  Options o;
  o.algorithm = parse_algorithm(cfg.algo);
  const T beta = cfg.c_in.empty() ? T(0) : T(static_cast<real_t<T>>(cfg.beta));
  const GemmReport r = gemm(opA, opB, T(static_cast<real_t<T>>(cfg.alpha)), A, B, beta, C, o);
  if (cfg.format == "raw") write_raw(cfg.output, C, cfg.order == "F");
  else write_npy(cfg.output, C, cfg.fortran_out);
  if (mesh.rank() == 0 && !cfg.quiet)
    std::printf("wrote %s: %lldx%lld %s = %s(A) %s(B) with %s in %.3f s\n", cfg.output.c_str(), (long long)m,
                (long long)n, to_string(dtype_of<T>()).c_str(), cfg.transa.c_str(), cfg.transb.c_str(),
                r.to_string().c_str(), r.seconds_total);
  return 0;
}

}  // namespace

int run_multiply(const MultiplyConfig& cfg) {
  if (cfg.c_in.empty() && cfg.beta != 0)
    throw InvalidArgument("--beta needs --c-in (the C0 it scales)");
  refuse_overwriting_inputs(cfg);
  const Inputs in = inspect(cfg);
  switch (in.dtype) {
    case Dtype::F32: return multiply_typed<float>(cfg, in);
    case Dtype::F64: return multiply_typed<double>(cfg, in);
    case Dtype::C64: return multiply_typed<std::complex<float>>(cfg, in);
    case Dtype::C128: return multiply_typed<std::complex<double>>(cfg, in);
  }
  return 1;
}

}  // namespace shardmm::cli
