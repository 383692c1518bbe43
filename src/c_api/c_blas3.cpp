// C API: the PBLAS level-3 family beside shardmm_gemm (include/shardmm/blas3.hpp from C).
// Each call checks its flag characters, scalars and handles on every rank and agrees on the
// outcome over the matrices' mesh (c_dispatch.hpp: a bad argument on one rank fails the call
// on all), then runs the C++ routine on the handles' DistMatrix of their common dtype; what
// moves where is the routine's (blas3.hpp, docs/ALGORITHMS.md).
#include <cctype>
#include <cstring>

#include "c_api/c_dispatch.hpp"
#include "shardmm/blas3.hpp"

namespace shardmm::c_api {
namespace {

char upper_flag(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }

Uplo parse_uplo(char c) {
  if (upper_flag(c) == 'U') return Uplo::Upper;
  if (upper_flag(c) == 'L') return Uplo::Lower;
  throw InvalidArgument(std::string("uplo must be 'U' or 'L', got '") + c + "'");
}

Side parse_side(char c) {
  if (upper_flag(c) == 'L') return Side::Left;
  if (upper_flag(c) == 'R') return Side::Right;
  throw InvalidArgument(std::string("side must be 'L' or 'R', got '") + c + "'");
}

Diag parse_diag(char c) {
  if (upper_flag(c) == 'N') return Diag::NonUnit;
  if (upper_flag(c) == 'U') return Diag::Unit;
  throw InvalidArgument(std::string("diag must be 'N' or 'U', got '") + c + "'");
}

// The value `p` points to, as an S (the dtype's scalar, or its real type for herk's).
template <class S>
S scalar_at(const void* p) {
  S v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// symm or hemm: the flags and arguments checked and agreed, then the routine.
int symm_call(const char* routine, bool hermitian, char side, char uplo, const void* alpha,
              shardmm_matrix A, shardmm_matrix B, const void* beta, shardmm_matrix C) {
  return guarded([&] {
    Side s{};
    Uplo u{};
    const int dtype =
        agreed_dtype(routine, {{"A", A}, {"B", B}, {"C", C}}, {{"alpha", alpha}, {"beta", beta}},
                     [&] { s = parse_side(side), u = parse_uplo(uplo); });
    with_type(dtype, [&]<Scalar T>() {
      const T al = scalar_at<T>(alpha), be = scalar_at<T>(beta);
      if (hermitian) hemm(s, u, al, typed<T>(A), typed<T>(B), be, typed<T>(C));
      else symm(s, u, al, typed<T>(A), typed<T>(B), be, typed<T>(C));
    });
  });
}

// syrk or herk (alpha and beta real); B null.
int rank_k_call(const char* routine, bool hermitian, char uplo, char trans, const void* alpha,
                shardmm_matrix A, const void* beta, shardmm_matrix C) {
  return guarded([&] {
    Uplo u{};
    Op op{};
    const int dtype =
        agreed_dtype(routine, {{"A", A}, {"C", C}}, {{"alpha", alpha}, {"beta", beta}},
                     [&] { u = parse_uplo(uplo), op = parse_trans(trans, "trans"); });
    with_type(dtype, [&]<Scalar T>() {
      using R = real_t<T>;
      if (hermitian) herk(u, op, scalar_at<R>(alpha), typed<T>(A), scalar_at<R>(beta), typed<T>(C));
      else syrk(u, op, scalar_at<T>(alpha), typed<T>(A), scalar_at<T>(beta), typed<T>(C));
    });
  });
}

// syr2k or her2k (beta real).
int rank_2k_call(const char* routine, bool hermitian, char uplo, char trans, const void* alpha,
                 shardmm_matrix A, shardmm_matrix B, const void* beta, shardmm_matrix C) {
  return guarded([&] {
    Uplo u{};
    Op op{};
    const int dtype =
        agreed_dtype(routine, {{"A", A}, {"B", B}, {"C", C}}, {{"alpha", alpha}, {"beta", beta}},
                     [&] { u = parse_uplo(uplo), op = parse_trans(trans, "trans"); });
    with_type(dtype, [&]<Scalar T>() {
      const T al = scalar_at<T>(alpha);
      if (hermitian)
        her2k(u, op, al, typed<T>(A), typed<T>(B), scalar_at<real_t<T>>(beta), typed<T>(C));
      else syr2k(u, op, al, typed<T>(A), typed<T>(B), scalar_at<T>(beta), typed<T>(C));
    });
  });
}

// trmm or trsm (solve).
int triangular_call(const char* routine, bool solve, char side, char uplo, char transa, char diag,
                    const void* alpha, shardmm_matrix A, shardmm_matrix B) {
  return guarded([&] {
    Side s{};
    Uplo u{};
    Op op{};
    Diag d{};
    const int dtype = agreed_dtype(routine, {{"A", A}, {"B", B}}, {{"alpha", alpha}}, [&] {
      s = parse_side(side), u = parse_uplo(uplo), op = parse_trans(transa, "transa");
      d = parse_diag(diag);
    });
    with_type(dtype, [&]<Scalar T>() {
      if (solve) trsm(s, u, op, d, scalar_at<T>(alpha), typed<T>(A), typed<T>(B));
      else trmm(s, u, op, d, scalar_at<T>(alpha), typed<T>(A), typed<T>(B));
    });
  });
}

}  // namespace
}  // namespace shardmm::c_api

using namespace shardmm;
using namespace shardmm::c_api;

extern "C" {

int shardmm_symm(char side, char uplo, const void* alpha, shardmm_matrix A, shardmm_matrix B,
                 const void* beta, shardmm_matrix C) {
  return symm_call("symm", false, side, uplo, alpha, A, B, beta, C);
}

int shardmm_hemm(char side, char uplo, const void* alpha, shardmm_matrix A, shardmm_matrix B,
                 const void* beta, shardmm_matrix C) {
  return symm_call("hemm", true, side, uplo, alpha, A, B, beta, C);
}

int shardmm_syrk(char uplo, char trans, const void* alpha, shardmm_matrix A, const void* beta,
                 shardmm_matrix C) {
  return rank_k_call("syrk", false, uplo, trans, alpha, A, beta, C);
}

int shardmm_herk(char uplo, char trans, const void* alpha, shardmm_matrix A, const void* beta,
                 shardmm_matrix C) {
  return rank_k_call("herk", true, uplo, trans, alpha, A, beta, C);
}

int shardmm_syr2k(char uplo, char trans, const void* alpha, shardmm_matrix A, shardmm_matrix B,
                  const void* beta, shardmm_matrix C) {
  return rank_2k_call("syr2k", false, uplo, trans, alpha, A, B, beta, C);
}

int shardmm_her2k(char uplo, char trans, const void* alpha, shardmm_matrix A, shardmm_matrix B,
                  const void* beta, shardmm_matrix C) {
  return rank_2k_call("her2k", true, uplo, trans, alpha, A, B, beta, C);
}

int shardmm_trmm(char side, char uplo, char transa, char diag, const void* alpha, shardmm_matrix A,
                 shardmm_matrix B) {
  return triangular_call("trmm", false, side, uplo, transa, diag, alpha, A, B);
}

int shardmm_trsm(char side, char uplo, char transa, char diag, const void* alpha, shardmm_matrix A,
                 shardmm_matrix B) {
  return triangular_call("trsm", true, side, uplo, transa, diag, alpha, A, B);
}

int shardmm_transpose(char trans, const void* alpha, shardmm_matrix A, const void* beta,
                      shardmm_matrix C) {
  return guarded([&] {
    Op op{};
    const int dtype =
        agreed_dtype("transpose", {{"A", A}, {"C", C}}, {{"alpha", alpha}, {"beta", beta}}, [&] {
          op = parse_trans(trans, "trans");
          if (op == Op::N) throw InvalidArgument("transpose: trans must be 'T' or 'C', got 'N'");
        });
    with_type(dtype, [&]<Scalar T>() {
      transpose(op, scalar_at<T>(alpha), typed<T>(A), scalar_at<T>(beta), typed<T>(C));
    });
  });
}

int shardmm_geadd(char trans, const void* alpha, shardmm_matrix A, const void* beta,
                  shardmm_matrix C) {
  return guarded([&] {
    Op op{};
    const int dtype =
        agreed_dtype("geadd", {{"A", A}, {"C", C}}, {{"alpha", alpha}, {"beta", beta}},
                     [&] { op = parse_trans(trans, "trans"); });
    with_type(dtype, [&]<Scalar T>() {
      geadd(op, scalar_at<T>(alpha), typed<T>(A), scalar_at<T>(beta), typed<T>(C));
    });
  });
}

int shardmm_tradd(char uplo, char trans, const void* alpha, shardmm_matrix A, const void* beta,
                  shardmm_matrix C) {
  return guarded([&] {
    Uplo u{};
    Op op{};
    const int dtype =
        agreed_dtype("tradd", {{"A", A}, {"C", C}}, {{"alpha", alpha}, {"beta", beta}},
                     [&] { u = parse_uplo(uplo), op = parse_trans(trans, "trans"); });
    with_type(dtype, [&]<Scalar T>() {
      tradd(u, op, scalar_at<T>(alpha), typed<T>(A), scalar_at<T>(beta), typed<T>(C));
    });
  });
}

}  // extern "C"
