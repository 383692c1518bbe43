// C API: batched matrices and gemm_batched. The handle holds a variant of the six
// BatchedMatrix types (16-bit ones included); each call dispatches on it.
#include <cstring>

#include "c_api/c_api.hpp"
#include "comm/agree.hpp"
#include "shardmm/batched.hpp"

struct shardmm_batched_s {
  std::variant<shardmm::BatchedMatrix<float>, shardmm::BatchedMatrix<double>,
               shardmm::BatchedMatrix<std::complex<float>>,
               shardmm::BatchedMatrix<std::complex<double>>, shardmm::BatchedMatrix<shardmm::bf16>,
               shardmm::BatchedMatrix<shardmm::f16>>
      matrix;
};

namespace shardmm::c_api {
namespace {

// Calls f.template operator()<T>() for the element type with dtype (variant index) `dtype`.
template <class F>
decltype(auto) with_batched_type(int dtype, F&& f) {
  switch (dtype) {
    case SHARDMM_F32: return f.template operator()<float>();
    case SHARDMM_F64: return f.template operator()<double>();
    case SHARDMM_C64: return f.template operator()<std::complex<float>>();
    case SHARDMM_C128: return f.template operator()<std::complex<double>>();
    case SHARDMM_BF16: return f.template operator()<bf16>();
    case SHARDMM_F16: return f.template operator()<f16>();
    default: throw InvalidArgument("unknown dtype " + std::to_string(dtype));
  }
}

int batched_dtype(shardmm_batched X) { return static_cast<int>(X->matrix.index()); }

// The dtype of the call, checked: every batched operand's and every shared one's.
int call_dtype(shardmm_batched A, shardmm_matrix sa, shardmm_batched B, shardmm_matrix sb,
               shardmm_batched C) {
  if ((A == nullptr) == (sa == nullptr) || (B == nullptr) == (sb == nullptr))
    throw InvalidArgument(
        "gemm_batched: give exactly one of A and shared_a, and of B and shared_b");
  const int d = batched_dtype(require(C, "C"));
  const bool same = (!A || batched_dtype(A) == d) && (!B || batched_dtype(B) == d) &&
                    (!sa || static_cast<int>(sa->matrix.index()) == d) &&
                    (!sb || static_cast<int>(sb->matrix.index()) == d);
  if (!same) throw InvalidArgument("gemm_batched: A, B and C must have one dtype");
  return d;
}

template <class T>
BatchedReport run_batched_call(Op ta, Op tb, const void* alpha, shardmm_batched A,
                               shardmm_matrix sa, shardmm_batched B, shardmm_matrix sb,
                               const void* beta, shardmm_batched C, const Options& o,
                               BatchMerge merge) {
  using S = std::conditional_t<is_half_v<T>, float, T>;
  S al, be;
  std::memcpy(&al, alpha, sizeof al);
  std::memcpy(&be, beta, sizeof be);
  auto& c = std::get<BatchedMatrix<T>>(C->matrix);
  if constexpr (is_half_v<T>) {
    if (sa || sb) throw NotSupported("gemm_batched: shared operands are f32/f64/c64/c128 only");
  } else {
    if (sa)
      return gemm_batched(ta, tb, al, std::get<DistMatrix<T>>(sa->matrix),
                          std::get<BatchedMatrix<T>>(B->matrix), be, c, o, merge);
    if (sb)
      return gemm_batched(ta, tb, al, std::get<BatchedMatrix<T>>(A->matrix),
                          std::get<DistMatrix<T>>(sb->matrix), be, c, o, merge);
  }
  return gemm_batched(ta, tb, al, std::get<BatchedMatrix<T>>(A->matrix),
                      std::get<BatchedMatrix<T>>(B->matrix), be, c, o, merge);
}

}  // namespace
}  // namespace shardmm::c_api

using namespace shardmm;
using namespace shardmm::c_api;

extern "C" {

int shardmm_batched_local_shape(shardmm_mesh mesh, int64_t batch, int64_t m, int64_t n,
                                const char* layout, int64_t* local_batch, int64_t* local_rows,
                                int64_t* local_cols) {
  return guarded([&] {
    const Mesh& me = require(mesh, "mesh")->mesh;
    const BatchedLayout L(me.shape(), batch, m, n, std::string_view(require(layout, "layout")));
    const bool on = me.active();
    const auto sc = on ? L.slice_coords(me.coords()) : std::vector<int>{};
    if (local_batch) *local_batch = on ? L.local_batch(me.coords()) : 0;
    if (local_rows) *local_rows = on ? L.slice().local_rows(sc) : 0;
    if (local_cols) *local_cols = on ? L.slice().local_cols(sc) : 0;
  });
}

int shardmm_batched_create(shardmm_mesh mesh, shardmm_dtype dtype, int64_t batch, int64_t m,
                           int64_t n, const char* layout, void* data, int64_t ld, int64_t stride,
                           shardmm_batched* matrix) {
  return guarded([&] {
    require(matrix, "matrix (output)");
    *matrix = nullptr;
    const Mesh& me = require(mesh, "mesh")->mesh;
    const BatchedLayout L(me.shape(), batch, m, n, std::string_view(require(layout, "layout")));
    *matrix = with_batched_type(dtype, [&]<Scalar T>() {
      if (data == nullptr && ld == 0 && stride == 0)
        return new shardmm_batched_s{BatchedMatrix<T>(me, L)};
      return new shardmm_batched_s{
          BatchedMatrix<T>::view(me, L, static_cast<T*>(data), ld, stride)};
    });
  });
}

int shardmm_batched_destroy(shardmm_batched matrix) {
  return guarded([&] { delete matrix; });
}

int shardmm_batched_local(shardmm_batched matrix, void** data, int64_t* local_batch,
                          int64_t* local_rows, int64_t* local_cols, int64_t* ld, int64_t* stride) {
  return guarded([&] {
    std::visit(
        [&](auto& X) {
          if (data) *data = X.data();
          if (local_batch) *local_batch = X.local_batch();
          if (local_rows) *local_rows = X.local_rows();
          if (local_cols) *local_cols = X.local_cols();
          if (ld) *ld = X.ld();
          if (stride) *stride = X.stride();
        },
        require(matrix, "matrix")->matrix);
  });
}

int shardmm_batched_global_index(shardmm_batched matrix, int64_t b_loc, int64_t i_loc,
                                 int64_t j_loc, int64_t* b, int64_t* i, int64_t* j) {
  return guarded([&] {
    std::visit(
        [&](auto& X) {
          if (b_loc < 0 || b_loc >= X.local_batch() || i_loc < 0 || i_loc >= X.local_rows() ||
              j_loc < 0 || j_loc >= X.local_cols())
            throw InvalidArgument(
                "local index (" + std::to_string(b_loc) + ", " + std::to_string(i_loc) + ", " +
                std::to_string(j_loc) + ") is outside the local tiles " +
                std::to_string(X.local_batch()) + "x" + std::to_string(X.local_rows()) + "x" +
                std::to_string(X.local_cols()));
          const auto S = X.slice(b_loc);
          if (b) *b = X.global_batch(b_loc);
          if (i) *i = S.global_row(i_loc);
          if (j) *j = S.global_col(j_loc);
        },
        require(matrix, "matrix")->matrix);
  });
}

int shardmm_gemm_batched(char transa, char transb, const void* alpha, shardmm_batched A,
                         shardmm_matrix shared_a, shardmm_batched B, shardmm_matrix shared_b,
                         const void* beta, shardmm_batched C, const shardmm_options* options,
                         shardmm_batch_merge merge, shardmm_batched_report* report) {
  return guarded([&] {
    Op ta = Op::N, tb = Op::N;
    Options o;
    int dtype = 0;
    BatchMerge m = BatchMerge::Auto;
    const auto check = [&] {
      ta = parse_trans(transa, "transa"), tb = parse_trans(transb, "transb");
      o = to_options(options);
      dtype = call_dtype(A, shared_a, B, shared_b, C);
      require(alpha, "alpha"), require(beta, "beta");
      if (merge < SHARDMM_MERGE_AUTO || merge > SHARDMM_MERGE_ALWAYS)
        throw InvalidArgument("unknown batch merge " + std::to_string(int(merge)));
      m = merge == SHARDMM_MERGE_NEVER    ? BatchMerge::Never
          : merge == SHARDMM_MERGE_ALWAYS ? BatchMerge::Always
                                          : BatchMerge::Auto;
    };
    // checked on each rank, then agreed over C's mesh: a bad argument on one rank fails the
    // call on every rank instead of leaving the others waiting
    const MPI_Comm comm =
        C ? std::visit(
                [](const auto& X) { return X.mesh().active() ? X.mesh().comm() : MPI_COMM_NULL; },
                C->matrix)
          : MPI_COMM_NULL;
    if (comm == MPI_COMM_NULL) check();
    else comm::agreed(comm, "gemm_batched arguments", check);
    const BatchedReport r = with_batched_type(dtype, [&]<Scalar T>() {
      return run_batched_call<T>(ta, tb, alpha, A, shared_a, B, shared_b, beta, C, o, m);
    });
    if (report) {
      *report = shardmm_batched_report{};
      report->products = r.products;
      report->merged = r.merged ? 1 : 0;
      fill_report(r.gemm, &report->gemm);
    }
  });
}

}  // extern "C"
