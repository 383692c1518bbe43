// Illegal arguments of the matrix additions: shardmm's p?tran / p?geadd / p?tradd report the
// INFO ScaLAPACK's own routines report on the same calls (p?tran has no ScaLAPACK tester to
// pin it). This program defines PBLAS' error handler PB_Cabort, as ScaLAPACK's testers do,
// so both libraries' reports come here instead of ending the program.
#include <functional>
#include <vector>

#include "scalapack/pblas_test_util.hpp"
#include "shardmm/c/scalapack.h"

extern "C" {
void pdtran_(SHARDMM_PXTRAN_PARAMS(double));
void pdgeadd_(SHARDMM_PXGEADD_PARAMS(double));
void pdtradd_(SHARDMM_PXTRADD_PARAMS(double));

int g_info = 0;  // the INFO of the last PB_Cabort call (0: none)
// NOLINTNEXTLINE(readability-non-const-parameter): PBLAS' signature
void PB_Cabort(int /*ctxt*/, char* /*routine*/, int info) { g_info = info; }
}

namespace shardmm::testing {
namespace {

// One call with every argument as a variable a case may spoil.
struct Args {
  char uplo[2] = "U", trans[2] = "N";
  int m = 5, n = 4, ia = 1, ja = 1, ic = 1, jc = 1;
  int desca[9] = {}, descc[9] = {};
  double alpha = 1, beta = 0;
};

// INFO from routine r (0 tran, 1 geadd, 2 tradd) of implementation impl (0 ScaLAPACK).
int info_of(int r, int impl, Args x, std::vector<double>& a, std::vector<double>& c) {
  g_info = 0;
  const auto tran = impl ? &shardmm_pdtran : &pdtran_;
  const auto geadd = impl ? &shardmm_pdgeadd : &pdgeadd_;
  const auto tradd = impl ? &shardmm_pdtradd : &pdtradd_;
  if (r == 0)
    tran(&x.m, &x.n, &x.alpha, a.data(), &x.ia, &x.ja, x.desca, &x.beta, c.data(), &x.ic, &x.jc,
         x.descc);
  if (r == 1)
    geadd(x.trans, &x.m, &x.n, &x.alpha, a.data(), &x.ia, &x.ja, x.desca, &x.beta, c.data(), &x.ic,
          &x.jc, x.descc);
  if (r == 2)
    tradd(x.uplo, x.trans, &x.m, &x.n, &x.alpha, a.data(), &x.ia, &x.ja, x.desca, &x.beta, c.data(),
          &x.ic, &x.jc, x.descc);
  return g_info;
}

TEST(PaddErrors, SameInfoAsScaLapack) {
  const int P = world_size(), q = P >= 2 ? 2 : 1;
  const BlacsGrid g(1, q);
  if (!g.member()) return;
  Args base;
  int info = 0, ctxt = g.ctxt, rsrc = 0, csrc = 0, nb = 2, M = 8, lld = 8;
  descinit_(base.desca, &M, &M, &nb, &nb, &rsrc, &csrc, &ctxt, &lld, &info);
  descinit_(base.descc, &M, &M, &nb, &nb, &rsrc, &csrc, &ctxt, &lld, &info);
  std::vector<double> a(64, 1.0), c(64, 2.0);
  const std::vector<std::function<void(Args&)>> spoil{
      [](Args&) {},                        // legal: INFO 0
      [](Args& x) { x.m = -1; },           // M
      [](Args& x) { x.n = -2; },           // N
      [](Args& x) { x.ia = 0; },           // IA
      [](Args& x) { x.jc = 0; },           // JC
      [](Args& x) { x.m = 8, x.ic = 3; },  // sub(C) out of bounds
      [](Args& x) { x.desca[4] = 0; },     // DESCA MB
      [](Args& x) { x.descc[6] = 5; },     // DESCC RSRC
      [](Args& x) { x.descc[8] = 0; },     // DESCC LLD
      [](Args& x) { x.desca[0] = 7; },     // DESCA DTYPE
      [](Args& x) { x.trans[0] = 'X'; },   // TRANS (geadd, tradd)
      [](Args& x) { x.uplo[0] = 'X'; },    // UPLO (tradd)
      [](Args& x) { x.trans[0] = 't'; },   // lower case is legal
  };
  int nonzero = 0;
  for (int r = 0; r < 3; ++r)
    for (std::size_t s = 0; s < spoil.size(); ++s) {
      Args x = base;
      spoil[s](x);
      const int want = info_of(r, 0, x, a, c), got = info_of(r, 1, x, a, c);
      EXPECT_EQ(got, want) << "routine " << r << " case " << s;
      nonzero += want != 0;
    }
  EXPECT_GE(nonzero, 25);  // the cases are illegal for ScaLAPACK too
}

}  // namespace
}  // namespace shardmm::testing
