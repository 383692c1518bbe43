// ScaLAPACK's p?gemm_ and shardmm's prefixed shardmm_p?gemm (libshardmm_pxgemm, which has no
// other p?gemm name) in one program: p?gemm_ stays ScaLAPACK's own, and both compute the same
// submatrix product on the same block-cyclic data (offsets, MB != NB, nonzero sources).
#include <dlfcn.h>

#include <cstring>
#include <vector>

#include "core/instantiate.hpp"
#include "mpi/mpi_test_util.hpp"
#include "shardmm/c/scalapack.h"

extern "C" {
void Cblacs_get(int ctxt, int what, int* val);
void Cblacs_gridinit(int* ctxt, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ctxt);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
void psgemm_(SHARDMM_PXGEMM_PARAMS(float));
void pdgemm_(SHARDMM_PXGEMM_PARAMS(double));
void pcgemm_(SHARDMM_PXGEMM_PARAMS(void));
void pzgemm_(SHARDMM_PXGEMM_PARAMS(void));
}

namespace shardmm::testing {
namespace {

using Pgemm = void (*)(SHARDMM_PXGEMM_PARAMS(void));

template <class T>
struct Entries;
#define SHARDMM_ENTRIES(T, x)                                                       \
  template <>                                                                       \
  struct Entries<T> {                                                               \
    static Pgemm scalapack() { return reinterpret_cast<Pgemm>(&p##x##gemm_); }      \
    static Pgemm shardmm() { return reinterpret_cast<Pgemm>(&shardmm_p##x##gemm); } \
  };
SHARDMM_ENTRIES(float, s)
SHARDMM_ENTRIES(double, d)
SHARDMM_ENTRIES(std::complex<float>, c)
SHARDMM_ENTRIES(std::complex<double>, z)
#undef SHARDMM_ENTRIES

std::string library_of(Pgemm f) {
  Dl_info info;
  return dladdr(reinterpret_cast<void*>(f), &info) && info.dli_fname ? info.dli_fname : "?";
}

// One matrix of the product: descriptor and this process's local array.
template <class T>
struct Local {
  int desc[9] = {};
  std::vector<T> data;
};

template <class T>
Local<T> make(int ctxt, int M, int N, int mb, int nb, int rsrc, int csrc, int seed) {
  int p = 0, q = 0, r = 0, c = 0, info = 0;
  Cblacs_gridinfo(ctxt, &p, &q, &r, &c);
  const auto lr = static_cast<int>(numroc(M, mb, r, rsrc, p));
  const auto lc = static_cast<int>(numroc(N, nb, c, csrc, q));
  const int lld = std::max(1, lr) + 1;
  Local<T> x;
  descinit_(x.desc, &M, &N, &mb, &nb, &rsrc, &csrc, &ctxt, &lld, &info);
  x.data.resize(static_cast<std::size_t>(lld) * std::max(1, lc));
  const DimMap rows{M, p, mb, rsrc}, cols{N, q, nb, csrc};
  for (int j = 0; j < lc; ++j)
    for (int i = 0; i < lr; ++i)
      x.data[i + std::size_t(j) * lld] = entry<T>(rows.to_global(i, r), cols.to_global(j, c), seed);
  return x;
}

template <class T>
class Coexist : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(Coexist, Types);

TYPED_TEST(Coexist, ScaLapackAndPrefixedShardmmAgree) {
  using T = TypeParam;
  EXPECT_NE(library_of(Entries<T>::scalapack()).find("libscalapack"), std::string::npos);
  EXPECT_NE(library_of(Entries<T>::shardmm()).find("libshardmm_pxgemm"), std::string::npos);
  const int P = world_size(), p = P >= 4 ? 2 : 1, q = P / p;
  int ctxt = 0, row = -1, col = -1, pp = 0, qq = 0;
  Cblacs_get(-1, 0, &ctxt);
  Cblacs_gridinit(&ctxt, "Col", p, q);
  Cblacs_gridinfo(ctxt, &pp, &qq, &row, &col);
  if (row < 0) return;  // outside the p x q grid
  const int m = 29, n = 23, k = 31, ia = 4, ja = 2, ib = 3, jb = 6, ic = 2, jc = 5;
  Local<T> A = make<T>(ctxt, k + 5, m + 4, 5, 3, 0, q - 1, 1);  // op(A) = A^T or A^H
  Local<T> B = make<T>(ctxt, k + 2, n + 7, 4, 6, p - 1, 0, 2);
  Local<T> C = make<T>(ctxt, m + 3, n + 6, 3, 4, 0, 0, 3);
  Local<T> C2 = C;
  const T alpha = T(2), beta = T(-1);
  const char* ta = is_complex_v<T> ? "C" : "T";
  for (auto [f, X] :
       {std::pair{Entries<T>::scalapack(), &C}, std::pair{Entries<T>::shardmm(), &C2}})
    f(ta, "N", &m, &n, &k, &alpha, A.data.data(), &ia, &ja, A.desc, B.data.data(), &ib, &jb, B.desc,
      &beta, X->data.data(), &ic, &jc, X->desc);
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < C.data.size(); ++i) {
    diff = std::max(diff, double(std::abs(C.data[i] - C2.data[i])));
    norm = std::max(norm, double(std::abs(C.data[i])));
  }
  EXPECT_LE(diff, 8 * k * std::numeric_limits<real_t<T>>::epsilon() * norm);
  Cblacs_gridexit(ctxt);
}

}  // namespace
}  // namespace shardmm::testing
