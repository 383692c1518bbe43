// Calls ScaLAPACK (psgemm_/pdgemm_/pcgemm_/pzgemm_) through a BLACS grid built on the mesh's
// communicator; descriptors describe the DistMatrix local arrays directly. In a build without
// ScaLAPACK (SHARDMM_HAVE_SCALAPACK 0) making the grid throws, so `--algo scalapack` reports
// that in its row.
#include "scalapack_ref.hpp"

#include "shardmm/error.hpp"

#include <complex>
#include <string>

#if SHARDMM_HAVE_SCALAPACK
extern "C" {
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void Cblacs_gridinit(int* context, const char* order, int nprow, int npcol);
void Cblacs_gridexit(int context);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb,
               const int* irsrc, const int* icsrc, const int* ictxt, const int* lld, int* info);
#define SHARDMM_PGEMM(name, T)                                                               \
  void name(const char* ta, const char* tb, const int* m, const int* n, const int* k,        \
            const T* alpha, const T* a, const int* ia, const int* ja, const int* desca,      \
            const T* b, const int* ib, const int* jb, const int* descb, const T* beta, T* c, \
            const int* ic, const int* jc, const int* descc);
SHARDMM_PGEMM(psgemm_, float)
SHARDMM_PGEMM(pdgemm_, double)
SHARDMM_PGEMM(pcgemm_, std::complex<float>)
SHARDMM_PGEMM(pzgemm_, std::complex<double>)
#undef SHARDMM_PGEMM
}

#endif

namespace shardmm::cli {

#if SHARDMM_HAVE_SCALAPACK
BlacsGrid::BlacsGrid(MPI_Comm comm, int p, int q) {
  handle_ = Csys2blacs_handle(comm);
  ctxt_ = handle_;
  Cblacs_gridinit(&ctxt_, "Row", p, q);
}

BlacsGrid::~BlacsGrid() {
  Cblacs_gridexit(ctxt_);
  Cfree_blacs_system_handle(handle_);
}
#else
BlacsGrid::BlacsGrid(MPI_Comm /*comm*/, int /*p*/, int /*q*/) {
  throw InvalidArgument(
      "this shardmm was built without ScaLAPACK (SHARDMM_SCALAPACK=OFF, or none was found): "
      "no --algo scalapack");
}

BlacsGrid::~BlacsGrid() = default;
#endif

bool scalapack_compatible(const Layout& L) {
  const auto& s = L.spec();
  const auto bc = [](const DimSpec& d) { return d.kind == DimSpec::Kind::BlockCyclic; };
  return L.mesh().ndims() == 2 && L.mesh().order == MeshShape::Order::RowMajor && bc(s.dims[0]) &&
         bc(s.dims[1]) && L.dim_axes(0) == std::vector<int>{0} &&
         L.dim_axes(1) == std::vector<int>{1};
}

#if SHARDMM_HAVE_SCALAPACK
ScalapackDesc scalapack_desc(const Layout& L, index_t ld, int ctxt) {
  if (!scalapack_compatible(L))
    throw InvalidArgument("ScaLAPACK needs bc(mb,nb) layouts on a row-major 2D mesh, got " +
                          L.to_string());
  ScalapackDesc x{};
  const int m = static_cast<int>(L.rows()), n = static_cast<int>(L.cols());
  const int mb = static_cast<int>(L.row_map().nb), nb = static_cast<int>(L.col_map().nb);
  const int rs = L.row_map().src, cs = L.col_map().src,
            lld = static_cast<int>(std::max<index_t>(ld, 1));
  int info = 0;
  descinit_(x.d, &m, &n, &mb, &nb, &rs, &cs, &ctxt, &lld, &info);
  if (info != 0) throw InvalidArgument("descinit_ failed with info " + std::to_string(info));
  if (!L.regular()) {  // BLOCK_CYCLIC_2D_INB: DTYPE CTXT M N IMB INB MB NB RSRC CSRC LLD
    const int imb = static_cast<int>(L.row_map().first_block()),
              inb = static_cast<int>(L.col_map().first_block());
    x = ScalapackDesc{{2, ctxt, m, n, imb, inb, mb, nb, rs, cs, lld}};
  }
  return x;
}

namespace {

template <class T>
void pgemm(const char* ta, const char* tb, const int* m, const int* n, const int* k, const T* al,
           const T* a, const int* da, const T* b, const int* db, const T* be, T* c, const int* dc) {
  const int one = 1;
  if constexpr (std::is_same_v<T, float>)
    psgemm_(ta, tb, m, n, k, al, a, &one, &one, da, b, &one, &one, db, be, c, &one, &one, dc);
  else if constexpr (std::is_same_v<T, double>)
    pdgemm_(ta, tb, m, n, k, al, a, &one, &one, da, b, &one, &one, db, be, c, &one, &one, dc);
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    pcgemm_(ta, tb, m, n, k, al, a, &one, &one, da, b, &one, &one, db, be, c, &one, &one, dc);
  else pzgemm_(ta, tb, m, n, k, al, a, &one, &one, da, b, &one, &one, db, be, c, &one, &one, dc);
}

}  // namespace

template <Scalar T>
void scalapack_gemm(const BlacsGrid& grid, Op opA, Op opB, T alpha, const DistMatrix<T>& A,
                    const DistMatrix<T>& B, T beta, DistMatrix<T>& C) {
  const ScalapackDesc da = scalapack_desc(A.layout(), A.ld(), grid.context());
  const ScalapackDesc db = scalapack_desc(B.layout(), B.ld(), grid.context());
  const ScalapackDesc dc = scalapack_desc(C.layout(), C.ld(), grid.context());
  const int m = static_cast<int>(C.rows()), n = static_cast<int>(C.cols());
  const int k = static_cast<int>(opA == Op::N ? A.cols() : A.rows());
  const std::string ta = to_string(opA), tb = to_string(opB);
  pgemm<T>(ta.c_str(), tb.c_str(), &m, &n, &k, &alpha, A.data(), da.d, B.data(), db.d, &beta,
           C.data(), dc.d);
}
#else
template <Scalar T>
void scalapack_gemm(const BlacsGrid& /*grid*/, Op /*opA*/, Op /*opB*/, T /*alpha*/,
                    const DistMatrix<T>& /*A*/, const DistMatrix<T>& /*B*/, T /*beta*/,
                    DistMatrix<T>& /*C*/) {}  // unreachable: no BlacsGrid can be made
#endif

template void scalapack_gemm<float>(const BlacsGrid&, Op, Op, float, const DistMatrix<float>&,
                                    const DistMatrix<float>&, float, DistMatrix<float>&);
template void scalapack_gemm<double>(const BlacsGrid&, Op, Op, double, const DistMatrix<double>&,
                                     const DistMatrix<double>&, double, DistMatrix<double>&);
template void scalapack_gemm<std::complex<float>>(const BlacsGrid&, Op, Op, std::complex<float>,
                                                  const DistMatrix<std::complex<float>>&,
                                                  const DistMatrix<std::complex<float>>&,
                                                  std::complex<float>,
                                                  DistMatrix<std::complex<float>>&);
template void scalapack_gemm<std::complex<double>>(const BlacsGrid&, Op, Op, std::complex<double>,
                                                   const DistMatrix<std::complex<double>>&,
                                                   const DistMatrix<std::complex<double>>&,
                                                   std::complex<double>,
                                                   DistMatrix<std::complex<double>>&);

}  // namespace shardmm::cli
