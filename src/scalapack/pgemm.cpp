// p?gemm drop-in: ScaLAPACK's PSGEMM / PDGEMM / PCGEMM / PZGEMM on shardmm::gemm.
//
// Flow (front-end layer: no data movement beyond what is named here):
//   1. the grid of DESCA's context and its Mesh (built on the context's own communicator);
//   2. PBLAS' argument checks on the descriptors' type-2 form (a type-1 descriptor is one
//      whose first block is MB x NB); the codes are agreed over the grid with one
//      MPI_Allreduce (LLD is checked against each process's own local rows), so every
//      process calls PB_Cabort with the same INFO and returns (first each process prints
//      PBLAS' own message, with PB_Cwarn, for every error it found, as PBLAS does): nobody waits in
//      a collective the others skipped, nothing is written;
//   3. quick returns: M = 0 or N = 0 do nothing; K = 0 or alpha = 0 scale sub(C) by beta
//      locally (beta = 0 writes zeros, beta = 1 nothing);
//   4. each operand is a DistMatrix view of the caller's local array (no copy): its layout
//      is sub(X)'s own block-cyclic map, whose first block runs from IX (JX) to the end of
//      the block holding it (the descriptor's IMB x INB block when IX = JX = 1);
//   5. shardmm::gemm, which keeps regular block-cyclic layouts when its plan can and
//      redistributes otherwise (a first block of another size always moves once); C moved
//      comes back with beta folded in, written only where sub(C) is.
// No exception leaves the entry points: errors other than illegal arguments are printed and
// end the program with Cblacs_abort, as ScaLAPACK's own fatal errors do.
#include <cctype>
#include <climits>
#include <complex>
#include <string>
#include <vector>

#include "scalapack/pblas.hpp"
#include "shardmm/c/scalapack.h"
#include "shardmm/gemm.hpp"

namespace shardmm::scalapack {
namespace {

constexpr int kDescA = 10, kDescB = 14, kDescC = 19;  // argument positions
constexpr int kPosM = 3, kPosN = 4, kPosK = 5;

struct Call {
  char ta = 'N', tb = 'N';
  int m = 0, n = 0, k = 0;
  MatrixArg A, B, C;
};

Call parse(SHARDMM_PXGEMM_PARAMS(void)) {
  (void)alpha, (void)a, (void)b, (void)beta, (void)c;
  Call x;
  x.ta = upper(transa);
  x.tb = upper(transb);
  x.m = *m, x.n = *n, x.k = *k;
  const bool nota = x.ta == 'N', notb = x.tb == 'N';
  x.A = MatrixArg{
      normalized(desca),    *ia,   *ja, nota ? x.m : x.k, nota ? x.k : x.m, nota ? kPosM : kPosK,
      nota ? kPosK : kPosM, kDescA};
  x.B = MatrixArg{
      normalized(descb),    *ib,   *jb, notb ? x.k : x.n, notb ? x.n : x.k, notb ? kPosK : kPosN,
      notb ? kPosN : kPosK, kDescB};
  x.C = MatrixArg{normalized(descc), *ic, *jc, x.m, x.n, kPosM, kPosN, kDescC};
  x.A.name = "A", x.B.name = "B", x.C.name = "C";
  return x;
}

bool legal_op(char t) { return t == 'N' || t == 'T' || t == 'C'; }

template <Scalar T>
Op to_op(char t) {
  if (t == 'N') return Op::N;
  return t == 'C' && is_complex_v<T> ? Op::C : Op::T;
}

// PBLAS' findings on this process: an illegal TRANSA or TRANSB alone, else every descriptor
// error.
Finding local_finding(const Grid& g, const Call& x) {
  Finding f;
  if (!legal_op(x.ta)) f.add(100, std::string("Illegal TRANSA = ") + x.ta);
  else if (!legal_op(x.tb)) f.add(200, std::string("Illegal TRANSB = ") + x.tb);
  else check_matrices(g, {&x.A, &x.B, &x.C}, f);
  return f;
}

template <Scalar T>
void multiply(const Grid& g, const Mesh& mesh, const Call& x, T alpha, const T* a, const T* b,
              T beta, T* c) {
  const DistMatrix<T> A = operand(mesh, sub_matrix(x.A, g), a);
  const DistMatrix<T> B = operand(mesh, sub_matrix(x.B, g), b);
  DistMatrix<T> C = operand(mesh, sub_matrix(x.C, g), static_cast<const T*>(c));
  gemm(to_op<T>(x.ta), to_op<T>(x.tb), alpha, A, B, beta, C);
}

template <Scalar T>
void run(const char* routine, const Grid& g, const Mesh& mesh, SHARDMM_PXGEMM_PARAMS(void)) {
  const Call x = parse(transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c,
                       ic, jc, descc);
  if (report_if_illegal(g, mesh, routine, local_finding(g, x))) return;
  if (x.m == 0 || x.n == 0) return;
  const T al = *static_cast<const T*>(alpha), be = *static_cast<const T*>(beta);
  T* const cc = static_cast<T*>(c);
  if (x.k == 0 || al == T(0)) {
    if (be != T(1)) scale_local(mesh, sub_matrix(x.C, g), be, cc);
    return;
  }
  multiply(g, mesh, x, al, static_cast<const T*>(a), static_cast<const T*>(b), be, cc);
}

// The one body behind every p?gemm entry point of this file.
template <Scalar T>
void pgemm(const char* routine, SHARDMM_PXGEMM_PARAMS(void)) noexcept {
  guarded(routine, desca[kCtxt], kDescA, [&](const Grid& g, const Mesh& mesh) {
    run<T>(routine, g, mesh, transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb,
           beta, c, ic, jc, descc);
  });
}

}  // namespace

}  // namespace shardmm::scalapack

// The prefixed entry points (ScaLAPACK's own spellings: dropin_entries.cpp).
#define SHARDMM_ARGS \
  transa, transb, m, n, k, alpha, a, ia, ja, desca, b, ib, jb, descb, beta, c, ic, jc, descc
#define SHARDMM_ENTRY(x, X, CT, T)                             \
  void shardmm_p##x##gemm(SHARDMM_PXGEMM_PARAMS(CT)) {         \
    shardmm::scalapack::pgemm<T>("P" #X "GEMM", SHARDMM_ARGS); \
  }

extern "C" {
SHARDMM_ENTRY(s, S, float, float)
SHARDMM_ENTRY(d, D, double, double)
SHARDMM_ENTRY(c, C, void, std::complex<float>)
SHARDMM_ENTRY(z, Z, void, std::complex<double>)
}
