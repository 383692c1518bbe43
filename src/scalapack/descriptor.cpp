// Descriptor checks (the order and codes of PBLAS' PB_Cchkmat, with ScaLAPACK's nine-entry
// numbering) and submatrix geometry.
#include "scalapack/descriptor.hpp"

#include <algorithm>
#include <climits>

namespace shardmm::scalapack {
namespace {

constexpr int kBlockCyclic2D = 1;  // DTYPE_ of a ScaLAPACK 2D block-cyclic descriptor

// Smallest code found so far (INT_MAX: none).
struct Codes {
  int code = INT_MAX;
  void add(int c) { code = std::min(code, c); }
  [[nodiscard]] int result() const { return code == INT_MAX ? 0 : code; }
};

index_t local_extent(index_t n, int nb, int coord, int src, int nprocs) {
  if (src == -1) return n;  // replicated
  return numroc(n, nb, coord, src, nprocs);
}

// Entries after DTYPE/CTXT; `d` is the descriptor, `at` its position * 100.
void check_entries(const Grid& g, const MatrixArg& x, int at, Codes& c) {
  const int* d = x.desc;
  if (d[kMB] < 1) c.add(at + kMB + 1);
  if (d[kNB] < 1) c.add(at + kNB + 1);
  if (d[kRsrc] < -1 || d[kRsrc] >= g.nprow) c.add(at + kRsrc + 1);
  if (d[kCsrc] < -1 || d[kCsrc] >= g.npcol) c.add(at + kCsrc + 1);
  if (x.rows == 0 || x.cols == 0) {  // empty submatrix: relaxed checks
    if (d[kM] < 0) c.add(at + kM + 1);
    if (d[kN] < 0) c.add(at + kN + 1);
    if (d[kLld] < 1) c.add(at + kLld + 1);
    return;
  }
  if (d[kM] < 1) c.add(at + kM + 1);
  if (d[kN] < 1) c.add(at + kN + 1);
  if (d[kM] >= 1 && d[kN] >= 1) {
    if (index_t(x.i) - 1 + x.rows > d[kM]) c.add((x.desc_pos - 2) * 100);
    if (index_t(x.j) - 1 + x.cols > d[kN]) c.add((x.desc_pos - 1) * 100);
  }
  if (c.code != INT_MAX) return;
  // LLD >= max(1, local rows) wherever this process holds columns of the matrix.
  const index_t np = local_extent(d[kM], d[kMB], g.myrow, d[kRsrc], g.nprow);
  if (d[kLld] >= std::max<index_t>(1, np)) return;
  const index_t nq = local_extent(d[kN], d[kNB], g.mycol, d[kCsrc], g.npcol);
  if (d[kLld] < 1 || nq > 0) c.add(at + kLld + 1);
}

SubDim sub_dim(index_t extent, int nb, int src, int nprocs, int first, int size) {
  SubDim s;
  s.replicated = src == -1;
  s.full = s.replicated ? DimMap{extent, 1, nb, 0} : DimMap{extent, nprocs, nb, src};
  s.begin = first - 1;
  s.size = size;
  return s;
}

}  // namespace

int check_matrix(const Grid& g, const MatrixArg& x) {
  Codes c;
  if (x.rows < 0) c.add(x.rows_pos * 100);
  if (x.cols < 0) c.add(x.cols_pos * 100);
  if (x.i < 1) c.add((x.desc_pos - 2) * 100);
  if (x.j < 1) c.add((x.desc_pos - 1) * 100);
  const int at = x.desc_pos * 100;
  if (x.desc[kDtype] != kBlockCyclic2D) {
    c.add(at + kDtype + 1);
  } else if (x.desc[kCtxt] != g.ctxt) {
    c.add(at + kCtxt + 1);
  } else {
    check_entries(g, x, at, c);
  }
  return c.result();
}

bool SubDim::aligned() const {
  return full.nprocs == 1 || begin % full.nb == 0 || begin % full.nb + size <= full.nb;
}

DimSpec SubDim::spec(const std::string& label, const std::string& axis) const {
  if (replicated) return DimSpec{label, DimSpec::Kind::Replicated, {}, 0, 0};
  return DimSpec{label, DimSpec::Kind::BlockCyclic, {axis}, full.nb, full.owner(begin)};
}

index_t SubDim::local_begin(int coord) const {
  // Elements before `begin` held by `coord` (whole blocks aligned from index 0).
  return replicated ? begin : numroc(begin, full.nb, coord, full.src, full.nprocs);
}

index_t SubDim::local_size(int coord) const {
  if (replicated) return size;
  return numroc(begin + size, full.nb, coord, full.src, full.nprocs) -
         numroc(begin, full.nb, coord, full.src, full.nprocs);
}

SubMatrix sub_matrix(const MatrixArg& x, const Grid& g) {
  const int* d = x.desc;
  SubMatrix s;
  s.row = sub_dim(d[kM], d[kMB], d[kRsrc], g.nprow, x.i, x.rows);
  s.col = sub_dim(d[kN], d[kNB], d[kCsrc], g.npcol, x.j, x.cols);
  s.lld = d[kLld];
  return s;
}

Layout sub_layout(const MeshShape& mesh, const SubMatrix& s) {
  ShardingSpec spec;
  spec.dims[0] = s.row.spec("I", mesh.names[0]);
  spec.dims[1] = s.col.spec("J", mesh.names[1]);
  return Layout(mesh, s.row.size, s.col.size, spec);
}

}  // namespace shardmm::scalapack
