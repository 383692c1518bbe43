// C API: distributed matrices, gemm and plan. The element type is chosen at run time: the
// handle holds a variant of the four DistMatrix types, and each call dispatches on it.
#include <algorithm>
#include <cctype>
#include <cstring>

#include "c_api/c_dispatch.hpp"
#include "shardmm/gemm.hpp"

namespace shardmm::c_api {
namespace {

shardmm_matrix create(shardmm_mesh mesh, shardmm_dtype dtype, const Layout& L, void* data,
                      int64_t ld) {
  const Mesh& me = require(mesh, "mesh")->mesh;
  return with_type(dtype, [&]<Scalar T>() {
    if (data == nullptr) return new shardmm_matrix_s{DistMatrix<T>(me, L, ld)};
    return new shardmm_matrix_s{DistMatrix<T>::view(me, L, static_cast<T*>(data), ld)};
  });
}

template <class E>
E pick(int value, std::initializer_list<E> values, const char* what) {
  if (value < 0 || value >= static_cast<int>(values.size()))
    throw InvalidArgument(std::string("unknown ") + what + " " + std::to_string(value));
  return values.begin()[value];
}

}  // namespace

Options to_options(const shardmm_options* o) {
  Options r;
  if (o == nullptr) return r;
  using A = Algorithm;
  r.algorithm = pick<A>(
      o->algorithm,
      {A::Auto, A::Local, A::Summa, A::Cannon, A::Ring, A::Sharded, A::Gemm25D, A::Strassen},
      "algorithm");
  r.panel = o->panel;
  r.block = o->block;
  r.stationary = pick<Stationary>(
      o->stationary, {Stationary::Auto, Stationary::A, Stationary::B, Stationary::C}, "stationary");
  r.overlap = o->overlap != 0;
  r.ring_axis = o->ring_axis ? o->ring_axis : "";
  r.ring_form = pick<RingForm>(
      o->ring_form,
      {RingForm::Auto, RingForm::AllGatherA, RingForm::AllGatherB, RingForm::ReduceScatter},
      "ring form");
  r.bidirectional = o->bidirectional != 0;
  r.grid_m = o->grid_m, r.grid_n = o->grid_n, r.grid_k = o->grid_k;
  r.memory_limit = o->memory_limit;
  r.allow_fast = o->allow_fast != 0;
  r.trace = o->trace ? o->trace : "";
  r.wire = pick<Wire>(o->wire, {Wire::F32, Wire::BF16, Wire::F16}, "wire");
  r.stationary_chunk = o->stationary_chunk;
  r.ring_chunk = o->ring_chunk;
  r.strassen_step = pick<StrassenStep>(
      o->strassen_step, {StrassenStep::Auto, StrassenStep::BreadthFirst, StrassenStep::DepthFirst},
      "strassen step");
  r.wait = pick<Wait>(o->wait, {Wait::Auto, Wait::Spin, Wait::Sleep}, "wait");
  return r;
}

void copy_text(const std::string& text, char* out, std::size_t size) {
  if (out == nullptr || size == 0) return;
  const std::size_t n = std::min(text.size(), size - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

void fill_report(const GemmReport& r, shardmm_report* out) {
  if (out == nullptr) return;
  *out = shardmm_report{};
  copy_text(to_string(r.algorithm), out->algorithm, sizeof out->algorithm);
  copy_text(r.grid, out->grid, sizeof out->grid);
  out->bytes_sent = r.bytes_sent, out->bytes_received = r.bytes_received;
  out->messages = r.messages;
  out->seconds_total = r.seconds_total, out->seconds_gemm = r.seconds_gemm;
  out->seconds_comm = r.seconds_comm, out->seconds_redist = r.seconds_redist;
}

Op parse_trans(char t, const char* which) {
  switch (std::toupper(static_cast<unsigned char>(t))) {
    case 'N': return Op::N;
    case 'T': return Op::T;
    case 'C': return Op::C;
    default:
      throw InvalidArgument(std::string(which) + " must be 'N', 'T' or 'C', got '" + t + "'");
  }
}

int common_dtype(const char* routine, std::initializer_list<NamedMatrix> matrices) {
  std::string names, types;
  bool same = true;
  std::size_t first = 0, i = 0;
  for (const NamedMatrix& X : matrices) {
    const std::size_t d = require(X.matrix, X.name)->matrix.index();
    if (i == 0) first = d;
    same = same && d == first;
    const char* sep = i == 0 ? "" : (i + 1 == matrices.size() ? " and " : ", ");
    names += sep + std::string(X.name);
    types += (i == 0 ? "" : ", ") + to_string(static_cast<Dtype>(d));
    ++i;
  }
  if (!same)
    throw InvalidArgument(std::string(routine) + ": " + names + " must have one dtype, got " +
                          types);
  return static_cast<int>(first);
}

}  // namespace shardmm::c_api

using namespace shardmm;
using namespace shardmm::c_api;

extern "C" {

int shardmm_matrix_create(shardmm_mesh mesh, shardmm_dtype dtype, int64_t m, int64_t n,
                          const char* layout, void* data, int64_t ld, shardmm_matrix* matrix) {
  return guarded([&] {
    require(matrix, "matrix (output)");
    *matrix = nullptr;
    const Layout L(require(mesh, "mesh")->mesh.shape(), m, n,
                   std::string_view(require(layout, "layout")));
    *matrix = create(mesh, dtype, L, data, ld);
  });
}

int shardmm_matrix_create_block_cyclic(shardmm_mesh mesh, shardmm_dtype dtype, int64_t m, int64_t n,
                                       int64_t mb, int64_t nb, int rsrc, int csrc, void* data,
                                       int64_t ld, shardmm_matrix* matrix) {
  return guarded([&] {
    require(matrix, "matrix (output)");
    *matrix = nullptr;
    const Layout L =
        Layout::block_cyclic(require(mesh, "mesh")->mesh.shape(), m, n, mb, nb, rsrc, csrc);
    *matrix = create(mesh, dtype, L, data, ld);
  });
}

int shardmm_matrix_destroy(shardmm_matrix matrix) {
  return guarded([&] { delete matrix; });
}

int shardmm_matrix_local(shardmm_matrix matrix, void** data, int64_t* local_rows,
                         int64_t* local_cols, int64_t* ld) {
  return guarded([&] {
    std::visit(
        [&](auto& X) {
          if (data) *data = X.data();
          if (local_rows) *local_rows = X.local_rows();
          if (local_cols) *local_cols = X.local_cols();
          if (ld) *ld = X.ld();
        },
        require(matrix, "matrix")->matrix);
  });
}

int shardmm_matrix_global_index(shardmm_matrix matrix, int64_t i_loc, int64_t j_loc, int64_t* i,
                                int64_t* j) {
  return guarded([&] {
    std::visit(
        [&](const auto& X) {
          if (i_loc < 0 || i_loc >= X.local_rows() || j_loc < 0 || j_loc >= X.local_cols())
            throw InvalidArgument("local index (" + std::to_string(i_loc) + ", " +
                                  std::to_string(j_loc) + ") is outside the local tile " +
                                  std::to_string(X.local_rows()) + "x" +
                                  std::to_string(X.local_cols()));
          if (i) *i = X.global_row(i_loc);
          if (j) *j = X.global_col(j_loc);
        },
        require(matrix, "matrix")->matrix);
  });
}

int shardmm_gemm(char transa, char transb, const void* alpha, shardmm_matrix A, shardmm_matrix B,
                 const void* beta, shardmm_matrix C, const shardmm_options* options,
                 shardmm_report* report) {
  return guarded([&] {
    Op ta = Op::N, tb = Op::N;
    Options o;
    int dtype = 0;
    agreed_arguments("gemm", {{"A", A}, {"B", B}, {"C", C}}, [&] {
      ta = parse_trans(transa, "transa"), tb = parse_trans(transb, "transb");
      o = to_options(options);
      dtype = common_dtype("gemm", {{"A", A}, {"B", B}, {"C", C}});
      require(alpha, "alpha"), require(beta, "beta");
    });
    const GemmReport r = with_type(dtype, [&]<Scalar T>() {
      T al, be;
      std::memcpy(&al, alpha, sizeof al);
      std::memcpy(&be, beta, sizeof be);
      return gemm(ta, tb, al, std::get<DistMatrix<T>>(A->matrix),
                  std::get<DistMatrix<T>>(B->matrix), be, std::get<DistMatrix<T>>(C->matrix), o);
    });
    fill_report(r, report);
  });
}

int shardmm_plan(char transa, char transb, shardmm_matrix A, shardmm_matrix B, shardmm_matrix C,
                 const shardmm_options* options, char* buffer, size_t size, size_t* length) {
  return guarded([&] {
    const Op ta = parse_trans(transa, "transa"), tb = parse_trans(transb, "transb");
    const Options o = to_options(options);
    const int dtype = common_dtype("gemm", {{"A", A}, {"B", B}, {"C", C}});
    const GemmReport r = with_type(dtype, [&]<Scalar T>() {
      return gemm_dry_run(ta, tb, std::get<DistMatrix<T>>(A->matrix),
                          std::get<DistMatrix<T>>(B->matrix), std::get<DistMatrix<T>>(C->matrix),
                          o);
    });
    const std::string text = to_string(r.algorithm) + " on " + r.grid + " [" + r.detail + "]";
    if (length) *length = text.size();
    copy_text(text, buffer, size);
    if (buffer == nullptr || text.size() >= size)
      throw BufferTooSmall("plan: the buffer holds " + std::to_string(size) +
                           " bytes, the plan needs " + std::to_string(text.size() + 1));
  });
}

}  // extern "C"
