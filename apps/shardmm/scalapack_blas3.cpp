// ScaLAPACK's PBLAS level-3 routines (p?symm_ ... p?geadd_) on the DistMatrix local arrays,
// for bench --op: the descriptors describe the operands' own bc layouts on the BLACS grid, so
// nothing is copied. Prototypes from shardmm/c/scalapack.h's parameter lists (void for the
// element pointers: the one declaration serves every type).
#include <complex>
#include <string>

#include "blas3_op.hpp"
#include "scalapack_ref.hpp"
#include "shardmm/c/scalapack.h"

#if SHARDMM_HAVE_SCALAPACK
extern "C" {
#define SHARDMM_DECLARE(x)                               \
  void p##x##symm_(SHARDMM_PXSYMM_PARAMS(void));         \
  void p##x##syrk_(SHARDMM_PXSYRK_PARAMS(void, void));   \
  void p##x##syr2k_(SHARDMM_PXSYR2K_PARAMS(void, void)); \
  void p##x##trmm_(SHARDMM_PXTRSM_PARAMS(void));         \
  void p##x##trsm_(SHARDMM_PXTRSM_PARAMS(void));         \
  void p##x##geadd_(SHARDMM_PXGEADD_PARAMS(void));
SHARDMM_DECLARE(s)
SHARDMM_DECLARE(d)
SHARDMM_DECLARE(c)
SHARDMM_DECLARE(z)
#undef SHARDMM_DECLARE
void pstran_(SHARDMM_PXTRAN_PARAMS(void));
void pdtran_(SHARDMM_PXTRAN_PARAMS(void));
void pctranu_(SHARDMM_PXTRAN_PARAMS(void));
void pztranu_(SHARDMM_PXTRAN_PARAMS(void));
void pctranc_(SHARDMM_PXTRAN_PARAMS(void));
void pztranc_(SHARDMM_PXTRAN_PARAMS(void));
void pchemm_(SHARDMM_PXSYMM_PARAMS(void));
void pzhemm_(SHARDMM_PXSYMM_PARAMS(void));
void pcherk_(SHARDMM_PXSYRK_PARAMS(void, void));
void pzherk_(SHARDMM_PXSYRK_PARAMS(void, void));
void pcher2k_(SHARDMM_PXSYR2K_PARAMS(void, void));
void pzher2k_(SHARDMM_PXSYR2K_PARAMS(void, void));
}
#endif

namespace shardmm::cli {

#if SHARDMM_HAVE_SCALAPACK
namespace {

// The routines of element type T; the Hermitian ones (and tranc) are the symmetric ones (and
// tran) for real types, as in BLAS.
template <class T>
struct Pblas3;
#define SHARDMM_ROUTINES(T, x, he, tu, tc)                                \
  template <>                                                             \
  struct Pblas3<T> {                                                      \
    static constexpr auto symm = &p##x##symm_, hemm = &p##x##he##mm_;     \
    static constexpr auto syrk = &p##x##syrk_, herk = &p##x##he##rk_;     \
    static constexpr auto syr2k = &p##x##syr2k_, her2k = &p##x##he##r2k_; \
    static constexpr auto trmm = &p##x##trmm_, trsm = &p##x##trsm_;       \
    static constexpr auto tranu = &p##x##tu##_, tranc = &p##x##tc##_;     \
    static constexpr auto geadd = &p##x##geadd_;                          \
  };
SHARDMM_ROUTINES(float, s, sy, tran, tran)
SHARDMM_ROUTINES(double, d, sy, tran, tran)
SHARDMM_ROUTINES(std::complex<float>, c, he, tranu, tranc)
SHARDMM_ROUTINES(std::complex<double>, z, he, tranu, tranc)
#undef SHARDMM_ROUTINES

// The whole of each operand (IX = JX = 1) and its descriptor.
struct PblasOperand {
  ScalapackDesc desc;
  int rows, cols;
};
template <Scalar T>
PblasOperand pblas_operand(const DistMatrix<T>& X, const BlacsGrid& g) {
  return {scalapack_desc(X.layout(), X.ld(), g.context()), static_cast<int>(X.rows()),
          static_cast<int>(X.cols())};
}

}  // namespace

template <Scalar T>
void scalapack_blas3(const BlacsGrid& grid, const Blas3Op& o, T alpha, const DistMatrix<T>& A,
                     const DistMatrix<T>* B, T beta, DistMatrix<T>& out) {
  using P = Pblas3<T>;
  const int one = 1;
  const PblasOperand a = pblas_operand(A, grid), c = pblas_operand(out, grid);
  const PblasOperand b = B != nullptr ? pblas_operand(*B, grid) : c;
  const void* bd = B != nullptr ? static_cast<const void*>(B->data()) : nullptr;
  const char side[2] = {o.side, 0}, uplo[2] = {o.uplo, 0}, trans[2] = {o.trans, 0},
             diag[2] = {o.diag, 0};
  const real_t<T> ra = std::real(alpha), rb = std::real(beta);
  const int m = c.rows, n = c.cols, k = o.trans == 'N' ? a.cols : a.rows;
  const auto* ad = A.data();
  auto* cd = out.data();
  const int *da = a.desc.d, *db = b.desc.d, *dc = c.desc.d;
  if (o.op == "symm" || o.op == "hemm")
    (o.op == "hemm" ? P::hemm : P::symm)(side, uplo, &m, &n, &alpha, ad, &one, &one, da, bd, &one,
                                         &one, db, &beta, cd, &one, &one, dc);
  else if (o.op == "syrk")
    P::syrk(uplo, trans, &n, &k, &alpha, ad, &one, &one, da, &beta, cd, &one, &one, dc);
  else if (o.op == "herk")  // ALPHA and BETA real (the symmetric routine for real T)
    P::herk(uplo, trans, &n, &k, is_complex_v<T> ? static_cast<const void*>(&ra) : &alpha, ad, &one,
            &one, da, is_complex_v<T> ? static_cast<const void*>(&rb) : &beta, cd, &one, &one, dc);
  else if (o.op == "syr2k" || o.op == "her2k")  // her2k: BETA real
    (o.op == "her2k" ? P::her2k : P::syr2k)(
        uplo, trans, &n, &k, &alpha, ad, &one, &one, da, bd, &one, &one, db,
        o.op == "her2k" && is_complex_v<T> ? static_cast<const void*>(&rb) : &beta, cd, &one, &one,
        dc);
  else if (o.triangular())
    (o.op == "trsm" ? P::trsm : P::trmm)(side, uplo, trans, diag, &m, &n, &alpha, ad, &one, &one,
                                         da, cd, &one, &one, dc);
  else if (o.op == "tran")
    (o.trans == 'C' ? P::tranc : P::tranu)(&m, &n, &alpha, ad, &one, &one, da, &beta, cd, &one,
                                           &one, dc);
  else if (o.op == "geadd")
    P::geadd(trans, &m, &n, &alpha, ad, &one, &one, da, &beta, cd, &one, &one, dc);
  else throw InvalidArgument("no ScaLAPACK routine for --op " + o.op);
}
#else
template <Scalar T>
void scalapack_blas3(const BlacsGrid& /*grid*/, const Blas3Op& /*o*/, T /*alpha*/,
                     const DistMatrix<T>& /*A*/, const DistMatrix<T>* /*B*/, T /*beta*/,
                     DistMatrix<T>& /*out*/) {}  // unreachable: no BlacsGrid can be made
#endif

#define SHARDMM_INSTANTIATE(T)                                                                \
  template void scalapack_blas3<T>(const BlacsGrid&, const Blas3Op&, T, const DistMatrix<T>&, \
                                   const DistMatrix<T>*, T, DistMatrix<T>&);
SHARDMM_FOR_EACH_ARITHMETIC(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::cli
