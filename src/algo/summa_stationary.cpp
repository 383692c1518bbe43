// SUMMA, A- and B-stationary variants (Elemental's SUMMA_NNA / SUMMA_NNB), on the same p x q
// grid and layouts as the C-stationary SUMMA (summa.cpp).
//
// A-stationary (wins when n is small next to m and k), streamed in chunks of C's columns:
// chunk [b, e) takes local columns [b, e) of op(B) and C on every process column that owns
// more than b of them (a block-cyclic split of its own: e - b columns on each such owner,
// from the map's source coordinate on; every chunk takes the same columns on every owner but
// the one with fewer, whose extent is itself a cut). Per chunk:
//   1. B's chunk moves: one redistribution (alltoallv on the mesh) to [K over Q with A's k map,
//      J replicated], so rank (r, q) holds op(B)[k rows of its A tile, the chunk's columns].
//   2. D = alpha * op(A_loc) * op(B_chunk): an m_loc x chunk partial sum over the process row.
//   3. A reduce-scatter along the process row (axis_comm(Q); comm::reduce_scatter, a ring of
//      isend/irecv on workspace buffers): process column c receives the sum of its columns of
//      the chunk and adds it onto C_loc's columns [b, e) (C_loc was scaled by beta first).
//   Words per rank, summed over the chunks: B's k_q x n slice (less what it held) + (q-1) x
//   its C tile, as gathered whole; the buffers hold one chunk (SummaSetup::chunk columns per
//   owner; blocking::stationary_chunk_width keeps them within half of the rank's A + B + C).
// B-stationary is the mirror image: A's chunks of rows move to [I replicated, K over R with
// B's k map], the chunk x n_loc partial is reduce-scattered along the process column onto C's
// rows [b, e).
// Overlap: where messages cross a network, chunk i + 1's alignment (step 1) runs while chunk
// i multiplies on a worker thread (the calling thread alone calls MPI), in a second Realigned
// buffer; the reduce-scatter (step 3) needs the chunk's product and does not overlap.
#include <algorithm>
#include <exception>
#include <functional>
#include <optional>
#include <thread>

#include "algo/algo.hpp"
#include "algo/pack.hpp"
#include "blas/blas.hpp"
#include "comm/collectives.hpp"
#include "comm/wire.hpp"
#include "core/blocking.hpp"
#include "core/instantiate.hpp"
#include "matrix/pooled.hpp"
#include "memory/workspace.hpp"
#include "shardmm/redistribute.hpp"
#include "trace/trace.hpp"

namespace shardmm::algo {
namespace {

// The moving operand M redistributed so its k dim follows the stationary operand's k map,
// into workspace slot `slot` (allocated on every rank before anything moves).
template <Scalar T>
DistMatrix<T> align_k(const DistMatrix<T>& M, int km, const Layout& S, int ks, memory::Slot slot) {
  ShardingSpec spec;
  spec.dims[km] = S.spec().dims[ks];
  spec.dims[km].label = "K";
  spec.dims[1 - km] = DimSpec{km == 0 ? "J" : "I", DimSpec::Kind::Replicated, {}, 0, 0};
  const Layout L(M.layout().mesh(), M.rows(), M.cols(), spec);
  std::optional<DistMatrix<T>> out;
  prologue(M.mesh().comm(), [&] { out.emplace(matrix::pooled<T>(M.mesh(), L, slot)); });
  {
    const comm::OperandMoves operand;  // M is A or B: it may travel in a 16-bit wire format
    redistribute(M, *out);
  }
  return std::move(*out);
}

// Elements of D (rows x cols) each coordinate along `dim` of the chunk's map owns.
std::vector<std::int64_t> owner_counts(index_t rows, index_t cols, const DimMap& map, int dim) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(map.nprocs));
  for (int c = 0; c < map.nprocs; ++c) counts[c] = map.local_extent(c) * (dim == 1 ? rows : cols);
  return counts;
}

// Packs D (rows x cols, ld = rows) by destination coordinate along `dim` of the chunk's map
// into `out`: the pieces come out in destination order, each in C's local column-major order.
template <Scalar T>
void pack_by_owner(const T* D, index_t rows, index_t cols, const DimMap& map, int dim, T* out) {
  for (int c = 0; c < map.nprocs; ++c) {
    const Runs ranges = map.owned_ranges(c);
    out = dim == 1 ? pack_col_runs(D, rows, ranges, rows, out)
                   : pack_row_runs(D, rows, ranges, cols, out);
  }
}

// Local indices [begin, begin + width) along the streamed dimension on the first `owners`
// coordinates from the map's source (the others own none of the chunk).
struct StreamChunk {
  index_t begin = 0, width = 0;
  int owners = 0;
};

// The chunks of `map` (regular block-cyclic) at `w` per owner: cut at multiples of w and at
// every owner's extent, so each chunk is the same width on each owner it touches; largest
// first (the pool's slots reach their size on the first chunk). Empty when the owners'
// extents do not fall from the source coordinate on (an irregular map): stream it whole.
std::vector<StreamChunk> stream_chunks(const DimMap& map, index_t w) {
  std::vector<index_t> extent(static_cast<std::size_t>(map.nprocs)), cuts{0};
  for (int d = 0; d < map.nprocs; ++d) extent[d] = map.local_extent((map.src + d) % map.nprocs);
  if (!std::is_sorted(extent.rbegin(), extent.rend())) return {};
  for (index_t b = w; b < extent[0]; b += w) cuts.push_back(b);
  cuts.insert(cuts.end(), extent.begin(), extent.end());
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<StreamChunk> out;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const auto owners =
        std::count_if(extent.begin(), extent.end(), [&](index_t e) { return e >= cuts[i + 1]; });
    out.push_back({cuts[i], cuts[i + 1] - cuts[i], static_cast<int>(owners)});
  }
  std::stable_sort(out.begin(), out.end(), [](const StreamChunk& a, const StreamChunk& b) {
    return a.width * a.owners > b.width * b.owners;
  });
  return out;
}

// M's layout with stored dim `sd` cut down to chunk `c`: a block-cyclic split of c.width per
// owner from the map's source coordinate.
Layout chunk_layout(const Layout& L, int sd, const StreamChunk& c) {
  ShardingSpec spec = L.spec();
  DimSpec& d = spec.dims[sd];
  if (!d.axes.empty()) {  // a dimension on no mesh axis (one owner) stays as it is
    d.kind = DimSpec::Kind::BlockCyclic;
    d.nb = std::max<index_t>(c.width, 1), d.src = L.map(sd).src, d.first = 0;
  }
  const index_t extent = c.width * c.owners;
  return Layout(L.mesh(), sd == 0 ? extent : L.rows(), sd == 1 ? extent : L.cols(), spec);
}

// This rank's tile of M's chunk: a view of M's local tile from local index `begin` along `sd`
// (read only: redistribute takes its source as const).
template <Scalar T>
DistMatrix<T> chunk_view(const DistMatrix<T>& M, int sd, const Layout& part, index_t begin) {
  const Mesh& mesh = M.mesh();
  const bool mine =
      mesh.active() && part.local_rows(mesh.coords()) * part.local_cols(mesh.coords()) > 0;
  T* base = const_cast<T*>(M.data());  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  T* data = mine ? base + begin * (sd == 1 ? M.ld() : 1) : nullptr;
  return DistMatrix<T>::view(mesh, part, data, M.ld());
}

// What one run streams: the stationary operand S (its k stored dim ks), the moving one M (k
// stored dim km, streamed stored dim sd), and C's dimension `dim` the chunks cut.
template <Scalar T>
struct StationaryStream {
  const Operands<T>& x;
  bool a_stays;
  const DistMatrix<T>& S;
  const DistMatrix<T>& M;
  int ks, km, sd, dim;
  index_t kl;  // the stationary operand's local k
};

// Chunk `part` of M (from local index `begin`) aligned to S's k split, into `slot`.
template <Scalar T>
DistMatrix<T> align_chunk(const StationaryStream<T>& s, const Layout& part, index_t begin,
                          std::int64_t step, memory::Slot slot, Timers& t) {
  const DistMatrix<T> view = chunk_view(s.M, s.sd, part, begin);
  return t.timed(&Timers::comm, "align", step,
                 [&] { return align_k(view, s.km, s.S.layout(), s.ks, slot); });
}

// Runs `f` (a GEMM: no MPI, no trace spans) on a worker thread while this thread runs
// `beside` (the next chunk's alignment: its messages), then waits for `f`; the wait is GEMM
// time. Only this thread calls MPI.
void beside_gemm(const std::function<void()>& f, const std::function<void()>& beside,
                 std::int64_t step, Timers& t) {
  std::exception_ptr failed;
  std::thread worker([&] {
    const trace::Muted muted;
    try {
      f();
    } catch (...) {
      failed = std::current_exception();
    }
  });
  try {
    beside();
  } catch (...) {
    worker.join();
    throw;
  }
  t.timed(&Timers::gemm, "gemm", step, [&] { worker.join(); });
  if (failed) std::rethrow_exception(failed);
}

// One chunk, `part` of M from local index `begin`, aligned as Mc: multiply (beside `beside`,
// when given, on a worker thread), reduce-scatter the partial sums along C's `dim` axes and add
// this rank's share onto C from `begin` on. `beside` aligns the next chunk through the Pack and
// Unpack slots, which may grow (and move) there: the reduction takes them after it.
template <Scalar T>
void run_chunk(const StationaryStream<T>& s, const Layout& part, index_t begin, std::int64_t step,
               const DistMatrix<T>& Mc, const std::function<void()>& beside, Timers& t) {
  const Operands<T>& x = s.x;
  const Mesh& mesh = x.C.mesh();
  const DistMatrix<T>& A = s.a_stays ? x.A : Mc;
  const DistMatrix<T>& B = s.a_stays ? Mc : x.B;
  const DimMap& map = part.map(s.sd);
  const index_t rows = s.a_stays ? x.C.local_rows() : map.extent;
  const index_t cols = s.a_stays ? map.extent : x.C.local_cols();
  const index_t mine_w = part.map(s.sd).local_extent(x.C.layout().dim_coord(s.dim, mesh.coords()));
  const std::vector<std::int64_t> counts = owner_counts(rows, cols, map, s.dim);
  T *D = nullptr, *send = nullptr, *mine = nullptr;  // partial sums, packed by owner, my block
  const auto take_sums = [&] {
    send = memory::get<T>(memory::Slot::Pack, rows * cols);
    mine = memory::get<T>(memory::Slot::Unpack, *std::max_element(counts.begin(), counts.end()));
  };
  prologue(mesh.comm(), [&] {
    D = memory::get<T>(memory::Slot::Partial, rows * cols);
    if (!beside) take_sums();
  });
  const auto multiply = [&] {
    blas::gemm(x.opA, x.opB, rows, cols, s.kl, x.alpha, A.data(), A.ld(), B.data(), B.ld(), T(0), D,
               std::max<index_t>(rows, 1));
  };
  if (beside) {
    beside_gemm(multiply, beside, step, t);
    prologue(mesh.comm(), take_sums);
  } else {
    t.timed(&Timers::gemm, "gemm", step, multiply);
  }
  t.timed(&Timers::comm, "reduce", step, [&] {
    pack_by_owner(D, rows, cols, map, s.dim, send);
    const MPI_Comm comm = mesh.axis_comm(axis_names(mesh.shape(), x.C.layout().dim_axes(s.dim)));
    comm::reduce_scatter(send, mine, counts, comm);
  });
  t.timed(nullptr, "update", step, [&] {  // in the trace only: no counter holds this interval
    const index_t ld = x.C.ld();
    if (s.dim == 1) add_block(mine, rows, rows, mine_w, x.C.data() + begin * ld, ld);
    else add_block(mine, mine_w, mine_w, cols, x.C.data() + begin, ld);
  });
}

}  // namespace

index_t stationary_chunk(const Problem& p, const Options& o, const Setup& s, Stationary stays) {
  if (o.stationary_chunk > 0) return o.stationary_chunk;
  const DimMap& ka = s.A.map(stored_dim(p.opA, 1));
  const DimMap& kb = s.B.map(stored_dim(p.opB, 0));
  const double ml = double(widest(s.C.row_map())), nl = double(widest(s.C.col_map()));
  const double abc = ml * double(widest(ka)) + double(widest(kb)) * nl + ml * nl;
  return stays == Stationary::A ? blocking::stationary_chunk_width(double(widest(ka)), ml,
                                                                   s.C.col_map().nprocs, nl, abc)
                                : blocking::stationary_chunk_width(double(widest(kb)), nl,
                                                                   s.C.row_map().nprocs, ml, abc);
}

template <Scalar T>
void summa_stationary_run(const Operands<T>& x, const Setup& setup, bool overlap, Timers& t) {
  const SummaSetup& own = setup.as<SummaSetup>();
  const bool a_stays = own.stationary == Stationary::A;
  const DistMatrix<T>& S = a_stays ? x.A : x.B;
  const DistMatrix<T>& M = a_stays ? x.B : x.A;
  const int ks = stored_dim(a_stays ? x.opA : x.opB, a_stays ? 1 : 0);
  const int km = stored_dim(a_stays ? x.opB : x.opA, a_stays ? 0 : 1);
  const index_t kl = a_stays ? (x.opA == Op::N ? S.local_cols() : S.local_rows())
                             : (x.opB == Op::N ? S.local_rows() : S.local_cols());
  const StationaryStream<T> s{x, a_stays, S, M, ks, km, 1 - km, a_stays ? 1 : 0, kl};
  const DimMap& map = M.layout().map(s.sd);
  const std::vector<StreamChunk> chunks = stream_chunks(map, std::max<index_t>(own.chunk, 1));
  index_t width = chunks.empty() ? widest(map) : 0;  // the widest piece a rank receives
  for (const StreamChunk& c : chunks) width = std::max(width, c.width);
  const index_t other = a_stays ? widest(x.C.layout().row_map()) : widest(x.C.layout().col_map());
  prologue(x.C.mesh().comm(), [&] { comm::reserve_reduce_scatter<T>(other * width); });
  blas::scale(x.C.local_rows(), x.C.local_cols(), x.beta, x.C.data(), x.C.ld());
  if (chunks.empty()) {
    if (map.extent == 0) return;
    const DistMatrix<T> Mc = align_chunk(s, M.layout(), 0, -1, memory::Slot::Realigned, t);
    return run_chunk(s, M.layout(), 0, -1, Mc, {}, t);
  }
  // Where messages cross a network (polls), chunk i + 1 aligns while chunk i multiplies, into
  // the other Realigned slot; else one chunk at a time.
  const bool pipelined = polls(x.C.mesh(), overlap) && chunks.size() > 1;
  const memory::Slot slots[2] = {memory::Slot::Realigned, memory::Slot::Realigned1};
  auto part = [&](std::size_t i) { return chunk_layout(M.layout(), s.sd, chunks[i]); };
  auto align = [&](std::size_t i) {
    const std::int64_t step = static_cast<std::int64_t>(i);
    return align_chunk(s, part(i), chunks[i].begin, step, slots[pipelined ? i % 2 : 0], t);
  };
  std::optional<DistMatrix<T>> next = align(0);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const DistMatrix<T> Mc = std::move(*next);
    next.reset();
    std::function<void()> beside;
    if (pipelined && i + 1 < chunks.size()) beside = [&] { next.emplace(align(i + 1)); };
    run_chunk(s, part(i), chunks[i].begin, static_cast<std::int64_t>(i), Mc, beside, t);
    if (!next && i + 1 < chunks.size()) next.emplace(align(i + 1));
  }
}

#define SHARDMM_INSTANTIATE(T) \
  template void summa_stationary_run<T>(const Operands<T>&, const Setup&, bool, Timers&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::algo
