// copy_in / copy_out: one comm::alltoallv on the grid mesh's communicator.
//
// Each side of the copy is described per dimension by a block-cyclic map and the index where
// the submatrix starts in it (the caller's full matrix: map of M with offset IX-1; the
// aligned DistMatrix: its own map with offset 0). The elements one process sends another are
// rows(s, d) x cols(s, d), each list built from the sender's (or receiver's) own local indices
// in increasing global order, so both ends agree on the order without exchanging indices.
// Replicated dimensions stay replicated: each process copies its own replica.
#include "scalapack/realign.hpp"

#include <algorithm>

#include "comm/exchange.hpp"
#include "core/instantiate.hpp"
#include "shardmm/error.hpp"

namespace shardmm::scalapack {
namespace {

struct DimSide {
  DimMap map;
  index_t offset = 0;  // map index of the submatrix's first element
  bool replicated = false;
};

template <class T>
struct Side {
  DimSide dims[2];
  T* data = nullptr;
  index_t ld = 0;
};

using Buckets = std::vector<std::vector<index_t>>;  // per coordinate of the other side

// My local indices of the submatrix's range [0, len) along one dimension, grouped by the
// coordinate that holds each index on the other side.
Buckets bucket(const DimSide& mine, int my_coord, const DimSide& other, index_t len,
               int axis_size) {
  Buckets out(static_cast<std::size_t>(axis_size));
  if (mine.replicated != other.replicated)
    throw InvalidArgument("internal: copy between replicated and distributed dimensions");
  if (mine.replicated) {
    for (index_t g = 0; g < len; ++g) out[my_coord].push_back(g + mine.offset);
    return out;
  }
  for (const auto& [b, e] : mine.map.owned_ranges(my_coord)) {
    const index_t lo = std::max(b, mine.offset), hi = std::min(e, mine.offset + len);
    for (index_t G = lo; G < hi; ++G)
      out[other.map.owner(G - mine.offset + other.offset)].push_back(mine.map.to_local(G));
  }
  return out;
}

// Per-peer counts and displacements, peers in mesh rank order.
struct Plan {
  std::vector<std::int64_t> counts, displs;
  std::int64_t total = 0;
};

Plan plan(const MeshShape& shape, const Buckets& rows, const Buckets& cols) {
  const int P = shape.size();
  Plan p{std::vector<std::int64_t>(P), std::vector<std::int64_t>(P), 0};
  for (int r = 0; r < P; ++r) {
    const auto c = shape.coords_of(r);
    p.counts[r] = std::int64_t(rows[c[0]].size() * cols[c[1]].size());
  }
  for (int r = 0; r < P; ++r) {
    p.displs[r] = p.total;
    p.total += p.counts[r];
  }
  return p;
}

template <Scalar T>
void transfer(const Mesh& mesh, const Side<const T>& from, const Side<T>& to, index_t rows,
              index_t cols) {
  const MeshShape& shape = mesh.shape();
  const auto& me = mesh.coords();
  const index_t len[2] = {rows, cols};
  Buckets send[2], recv[2];
  for (int d = 0; d < 2; ++d) {
    send[d] = bucket(from.dims[d], me[d], to.dims[d], len[d], shape.sizes[d]);
    recv[d] = bucket(to.dims[d], me[d], from.dims[d], len[d], shape.sizes[d]);
  }
  const Plan sp = plan(shape, send[0], send[1]), rp = plan(shape, recv[0], recv[1]);
  std::vector<T> sbuf(static_cast<std::size_t>(sp.total)), rbuf(static_cast<std::size_t>(rp.total));
  for (int r = 0; r < shape.size(); ++r) {
    const auto c = shape.coords_of(r);
    T* out = sbuf.data() + sp.displs[r];
    for (index_t j : send[1][c[1]])
      for (index_t i : send[0][c[0]]) *out++ = from.data[i + j * from.ld];
  }
  comm::alltoallv(mesh.comm(), sbuf.data(), sp.counts, sp.displs, rbuf.data(), rp.counts,
                  rp.displs);
  for (int r = 0; r < shape.size(); ++r) {
    const auto c = shape.coords_of(r);
    const T* in = rbuf.data() + rp.displs[r];
    for (index_t j : recv[1][c[1]])
      for (index_t i : recv[0][c[0]]) to.data[i + j * to.ld] = *in++;
  }
}

DimSide sub_side(const SubDim& s) { return DimSide{s.full, s.begin, s.replicated}; }

DimSide matrix_side(const Layout& L, int d) {
  return DimSide{L.map(d), 0, L.spec().dims[d].kind == DimSpec::Kind::Replicated};
}

}  // namespace

template <Scalar T>
void copy_in(const SubMatrix& s, const T* data, DistMatrix<T>& dst) {
  const Side<const T> from{{sub_side(s.row), sub_side(s.col)}, data, s.lld};
  const Side<T> to{
      {matrix_side(dst.layout(), 0), matrix_side(dst.layout(), 1)}, dst.data(), dst.ld()};
  transfer(dst.mesh(), from, to, s.row.size, s.col.size);
}

template <Scalar T>
void copy_out(const DistMatrix<T>& src, const SubMatrix& s, T* data) {
  const Side<const T> from{
      {matrix_side(src.layout(), 0), matrix_side(src.layout(), 1)}, src.data(), src.ld()};
  const Side<T> to{{sub_side(s.row), sub_side(s.col)}, data, s.lld};
  transfer(src.mesh(), from, to, s.row.size, s.col.size);
}

#define SHARDMM_INSTANTIATE(T)                                          \
  template void copy_in<T>(const SubMatrix&, const T*, DistMatrix<T>&); \
  template void copy_out<T>(const DistMatrix<T>&, const SubMatrix&, T*);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::scalapack
