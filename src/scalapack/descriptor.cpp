// Descriptor checks (the order and codes of PBLAS' PB_Cchkmat on the type-2 form) and
// submatrix geometry.
#include "scalapack/descriptor.hpp"

#include <algorithm>
#include <climits>

namespace shardmm::scalapack {
namespace {

// Smallest code found so far (INT_MAX: none).
struct Codes {
  int code = INT_MAX;
  void add(int c) { code = std::min(code, c); }
  [[nodiscard]] int result() const { return code == INT_MAX ? 0 : code; }
};

// Rows (or columns) of a dimension held by `coord`: n with src == -1 (replicated).
index_t local_extent(index_t n, int first, int nb, int coord, int src, int nprocs) {
  if (src == -1) return n;
  return DimMap{n, nprocs, nb, src, first}.local_extent(coord);
}

// Entries after DTYPE/CTXT; `at` is the descriptor's position * 100.
void check_entries(const Grid& g, const MatrixArg& x, int at, Codes& c) {
  const Desc& d = x.desc;
  for (const int e : {kImb, kInb, kMb, kNb})
    if (d[e] < 1) c.add(at + e + 1);
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
  const index_t np = local_extent(d[kM], d[kImb], d[kMb], g.myrow, d[kRsrc], g.nprow);
  if (d[kLld] >= std::max<index_t>(1, np)) return;
  const index_t nq = local_extent(d[kN], d[kInb], d[kNb], g.mycol, d[kCsrc], g.npcol);
  if (d[kLld] < 1 || nq > 0) c.add(at + kLld + 1);
}

SubDim sub_dim(index_t extent, int first, int nb, int src, int nprocs, int begin, int size) {
  SubDim s;
  s.replicated = src == -1;
  s.full = s.replicated ? DimMap{extent, 1, nb, 0} : DimMap{extent, nprocs, nb, src};
  if (!s.replicated && first != nb && nprocs > 1) s.full.first = first;
  s.begin = begin - 1;
  s.size = size;
  return s;
}

}  // namespace

Desc normalized(const int* desc) {
  if (desc[kDtype] == kBlockCyclic2DInb) {
    Desc d{};
    std::copy(desc, desc + kDescLength, d.begin());
    return d;
  }
  if (desc[kDtype] == kBlockCyclic2D) {  // DTYPE CTXT M N MB NB RSRC CSRC LLD
    const int mb = desc[4], nb = desc[5];
    return {kBlockCyclic2DInb, desc[1], desc[2], desc[3], mb, nb, mb, nb,
            desc[6],           desc[7], desc[8]};
  }
  return {desc[kDtype], desc[kCtxt], 0, 0, 1, 1, 1, 1, 0, 0, 1};
}

int check_matrix(const Grid& g, const MatrixArg& x) {
  Codes c;
  if (x.rows < 0) c.add(x.rows_pos * 100);
  if (x.cols < 0) c.add(x.cols_pos * 100);
  if (x.i < 1) c.add((x.desc_pos - 2) * 100);
  if (x.j < 1) c.add((x.desc_pos - 1) * 100);
  const int at = x.desc_pos * 100;
  if (x.desc[kDtype] != kBlockCyclic2DInb) {
    c.add(at + kDtype + 1);
  } else if (x.desc[kCtxt] != g.ctxt) {
    c.add(at + kCtxt + 1);
  } else {
    check_entries(g, x, at, c);
  }
  return c.result();
}

DimSpec SubDim::spec(const std::string& label, const std::string& axis) const {
  if (replicated) return DimSpec{label, DimSpec::Kind::Replicated, {}, 0, 0};
  const DimMap m = full.sub(begin, size);
  return DimSpec{label, DimSpec::Kind::BlockCyclic, {axis}, m.nb, m.src, m.first};
}

index_t SubDim::local_begin(int coord) const {
  if (replicated) return begin;
  DimMap before = full;
  before.extent = begin;
  return before.local_extent(coord);
}

index_t SubDim::local_size(int coord) const {
  return replicated ? size : full.sub(begin, size).local_extent(coord);
}

SubMatrix sub_matrix(const MatrixArg& x, const Grid& g) {
  const Desc& d = x.desc;
  SubMatrix s;
  s.row = sub_dim(d[kM], d[kImb], d[kMb], d[kRsrc], g.nprow, x.i, x.rows);
  s.col = sub_dim(d[kN], d[kInb], d[kNb], d[kCsrc], g.npcol, x.j, x.cols);
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
