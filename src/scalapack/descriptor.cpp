// Descriptor checks (the order and codes of PBLAS' PB_Cchkmat on the type-2 form) and
// submatrix geometry.
#include "scalapack/descriptor.hpp"

#include <algorithm>
#include <climits>
#include <vector>

namespace shardmm::scalapack {
namespace {

// Every code found, in the order PBLAS checks (and warns), and the smallest (INT_MAX: none).
struct Codes {
  int code = INT_MAX;
  std::vector<int> all;
  void add(int c) {
    code = std::min(code, c);
    all.push_back(c);
  }
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

std::string str(index_t v) { return std::to_string(v); }

// "DESCA[MB_]" for entry `e` (0-based) of the type-2 form.
std::string entry(const MatrixArg& x, int e) {
  static const char* const names[kDescLength] = {
      "DTYPE_", "CTXT_", "M_", "N_", "IMB_", "INB_", "MB_", "NB_", "RSRC_", "CSRC_", "LLD_"};
  return std::string("DESC") + x.name + "[" + names[e] + "]";
}

// PB_Cchkmat's message for a descriptor entry's code (`e` 0-based).
std::string describe_entry(const Grid& g, const MatrixArg& x, int e) {
  const Desc& d = x.desc;
  const std::string is = entry(x, e) + " = " + str(d[e]);
  const bool empty = x.rows == 0 || x.cols == 0;
  switch (e) {
    case kDtype:
      return "Illegal descriptor type " + str(d[e]) + " for matrix " + x.name +
             ". PBLAS accepts: " + str(kBlockCyclic2D) + " or " + str(kBlockCyclic2DInb);
    case kCtxt: return is + " does not match other operand's context = " + str(g.ctxt);
    case kImb:
    case kInb:
    case kMb:
    case kNb: return "Illegal " + is + ", " + entry(x, e) + " must be at least 1";
    case kRsrc:
    case kCsrc:
      return "Illegal " + is + ", " + entry(x, e) + " must be either -1, or >= 0 and < " +
             str(e == kRsrc ? g.nprow : g.npcol);
    case kM:
    case kN:
      return empty ? is + ", it must be at least 0" : "Illegal " + is + ", it must be at least 1";
    default: {  // kLld
      const index_t np = local_extent(d[kM], d[kImb], d[kMb], g.myrow, d[kRsrc], g.nprow);
      return is + ", it must be at least " + str(empty ? 1 : std::max<index_t>(1, np));
    }
  }
}

// PB_Cchkmat's message for a scalar's code: sub(X)'s extent, IX or JX.
std::string describe_scalar(const MatrixArg& x, int position) {
  const std::string name = x.name;
  if (position == x.rows_pos && x.rows < 0)
    return "Illegal number of rows of sub( " + name + " ) = " + str(x.rows) +
           ", it must be at least 0";
  if (position == x.cols_pos && x.cols < 0)
    return "Illegal number of columns of sub( " + name + " ) = " + str(x.cols) +
           ", it must be at least 0";
  if (position == x.desc_pos - 2)
    return x.i < 1 ? "Illegal I" + name + " = " + str(x.i) + ", I" + name + " must be at least 1"
                   : "Operation out of bounds: M = " + str(x.rows) + ", I" + name + " = " +
                         str(x.i) + ", " + entry(x, kM) + " = " + str(x.desc[kM]);
  return x.j < 1 ? "Illegal J" + name + " = " + str(x.j) + ", J" + name + " must be at least 1"
                 : "Operation out of bounds: N = " + str(x.cols) + ", J" + name + " = " + str(x.j) +
                       ", " + entry(x, kN) + " = " + str(x.desc[kN]);
}

}  // namespace

std::string describe_illegal(const Grid& grid, const MatrixArg& x, int code) {
  if (code % 100 == 0) return describe_scalar(x, code / 100);
  return describe_entry(grid, x, code % 100 - 1);
}

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

namespace {

Codes checked(const Grid& g, const MatrixArg& x) {
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
  return c;
}

}  // namespace

int check_matrix(const Grid& g, const MatrixArg& x) { return checked(g, x).result(); }

std::vector<int> illegal_codes(const Grid& g, const MatrixArg& x) { return checked(g, x).all; }

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
