// Per-candidate formulas (elements received by the busiest rank; docs/ALGORITHMS.md derives
// them). Block sizes are rounded up, so uneven splits cost what their largest tile costs;
// SUMMA C-stationary on the caller's grid takes the caller's actual tiles' count instead
// (Request::current_summa_words).
#include "plan/cost_model.hpp"

#include "core/blocking.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace shardmm::plan {
namespace {

struct Costs {
  double words = 0, messages = 0, memory = 0;  // memory in elements
  // Of `memory`, the tiles of A, B and C in the algorithm's layouts (what the caller holds when
  // they are already there); the rest is the algorithm's buffers.
  Tiles tiles;
  bool overlapped = true;
  double streamed = 0;  // of a blocking algorithm's words, those that travel during the GEMM
  // Time only, not traffic: the chain broadcasts' pipeline fill (elements) and the hops a
  // broadcast's last chunk waits for beyond the first (latencies).
  double fill_words = 0, fill_hops = 0;
};

// `count` panel broadcasts of `elems` elements each over `ranks` ranks as comm::ibcast does
// them: a chain root -> root+1 -> ... in chunks, so the last rank has a panel one message time
// plus ranks - 2 chunk times and hops after the root starts (a panel under two chunks, or
// 2 ranks: one MPI_Ibcast, priced by its words and one message). SUMMA and 2.5D keep the next
// panel in flight while they wait for this one; when the GEMM polls the relays
// (PlanRequest::relays_in_gemm) each panel's fill overlaps its successor's transfer, and only
// the stream's first fill stays exposed.
void add_chain_fill(Costs& x, const Request& r, double count, double elems, double ranks) {
  // comm::ibcast sends a message of at least two chunks down a pipelined chain on 3 or more
  // ranks (comm/chain_bcast.cpp), in chunks of blocking::bcast_chunk_bytes() (0: no chains).
  const double elem = double(dtype_size(r.dtype));
  const double chunk_bytes = double(blocking::bcast_chunk_bytes());
  const double chunk = std::max(1.0, std::floor(chunk_bytes / elem));
  if (chunk_bytes <= 0 || ranks < 3 || elems < 2 * chunk) return;
  const double exposed = r.relays_in_gemm ? 1.0 : count;
  x.fill_words += exposed * (ranks - 2) * chunk;
  x.fill_hops += exposed * (ranks - 2);
}

// The candidate's pm x pn is the grid the caller's block-cyclic operands are already on.
bool on_caller_grid(const Request& r, const Candidate& c) {
  return c.pm == r.current_pm && c.pn == r.current_pn;
}

// Words to move the inputs into the candidate's layouts and the result back: nothing when
// the candidate runs on the caller's grid with its block-cyclic operands, and for a ring on
// the caller's line only the operands not already in the form's layouts.
double redistribution(const Request& r, const Candidate& c, double a_loc, double b_loc,
                      double c_loc) {
  if (r.redistribution_words) {  // exact, from the caller's layouts
    const double w = r.redistribution_words(c);
    if (w >= 0) return w;
  }
  const bool in_place =
      (c.algorithm == Algorithm::Summa || c.algorithm == Algorithm::Cannon) && on_caller_grid(r, c);
  if (in_place || r.ranks == 1) return 0;
  if (c.algorithm == Algorithm::Ring && c.ring_form != RingForm::Auto) {
    const auto& fits = r.ring_in_place[static_cast<int>(c.ring_form) - 1];
    return ((fits[0] ? 0 : a_loc) + (fits[1] ? 0 : b_loc) + (fits[2] ? 0 : c_loc)) *
           (1 - 1.0 / r.ranks);
  }
  return (a_loc + b_loc + c_loc) * (1 - 1.0 / r.ranks);
}

// SUMMA A/B-stationary's chunk per owner (Options::stationary_chunk, else the algorithm's rule), at
// most the owner's extent `widest`.
double stationary_width(const Request& r, double kl, double stay, double owners, double widest,
                        double abc) {
  const double w = r.stationary_chunk > 0
                       ? double(r.stationary_chunk)
                       : double(blocking::stationary_chunk_width(kl, stay, owners, widest, abc));
  return std::max(1.0, std::min(w, widest));
}

// The packed send buffer of a stationary form's chunk alignment (an all-gather packs none):
// none when every piece a rank sends is one run of its tile, else the chunk's tile (`tile`) once
// per destination
// (`copies`: the ranks that share the stationary operand's k block). Pieces are runs when k
// runs down the stored columns (`k_down`) and the rank's k goes to one owner (not `split`),
// or when k runs along the rows and the chunk spans the tile's rows (not `narrow`).
double chunk_send(bool k_down, bool split, bool narrow, double tile, double copies) {
  const bool runs = k_down ? !split : !narrow;
  return runs ? 0.0 : tile * copies;
}

// SUMMA A/B-stationary's chunks (summa_stationary.cpp): each one's alignment, then its GEMM,
// then its reduce-scatter, none overlapped; where messages cross a network
// (PlanRequest::relays_in_gemm) and there are several chunks, the next chunk's alignment
// travels during this chunk's GEMM (`aligned` words in all), into a second aligned buffer
// (`buffer` elements).
void pipeline(const Request& r, double chunks, double aligned, double buffer, Costs& x) {
  x.overlapped = false;
  if (!r.relays_in_gemm || chunks <= 1) return;
  x.streamed = aligned * (chunks - 1) / chunks;  // the first chunk's alignment waits
  x.memory += buffer;
}

Costs summa(const Request& r, const Candidate& c) {
  const double m = double(r.m), n = double(r.n), k = double(r.k), p = c.pm, q = c.pn;
  const double ml = up(m, p), nl = up(n, q), kq = up(k, q), kp = up(k, p);
  Costs x;
  x.tiles = {ml * kq, kp * nl, ml * nl};
  switch (c.stationary) {
    // The moving operand goes to the stationary one's k split with its other dimension whole:
    // a rank needs kq x n of B and already holds about 1/(p q) of that (exactly so at p = 1,
    // where B's k is not split at all). It streams in chunks of w of each owner's columns of
    // C (rows when B stays), so every buffer holds one chunk (summa_stationary.cpp, block
    // layouts): the aligned moving operand, the partial product and its packed copy, the
    // owner's block of the sums (or, when larger, the alignment's receive buffer where its
    // pieces do not land in place), the reduce-scatter's two running sums, and an
    // all-gather's receive buffer when the alignment is one.
    case Stationary::A: {  // B to A's k split, C partials reduce-scattered along rows
      const double w = stationary_width(r, kq, ml, q, nl, x.tiles.sum()), nj = std::min(n, q * w);
      x.words = kq * n * (1 - 1 / (p * q)) + ml * n * (1 - 1 / q);
      const double unpack = std::max(ml * w, p > 1 && p != q ? kq * nj : 0.0);
      const double pieces = q == 1 && p > 1 ? kq * nj : 0.0;
      const double pack = std::max(
          ml * nj,
          pieces > 0 ? 0.0 : chunk_send(r.opB == Op::N, std::fmod(p, q) != 0, w < nl, kp * w, p));
      x.memory = x.tiles.sum() + kq * nj + ml * nj + pack + unpack + 2 * ml * w + pieces;
      x.messages = 2 * (p + q) * up(nl, w);
      pipeline(r, up(nl, w), kq * n * (1 - 1 / (p * q)), kq * nj, x);
      break;
    }
    case Stationary::B: {
      const double w = stationary_width(r, kp, nl, p, ml, x.tiles.sum()), mj = std::min(m, p * w);
      x.words = kp * m * (1 - 1 / (p * q)) + nl * m * (1 - 1 / p);
      const double unpack = std::max(nl * w, p > 1 ? mj * kp : 0.0);
      const double pieces = p == 1 && q > 1 ? mj * kp : 0.0;
      const double pack = std::max(
          mj * nl,
          pieces > 0 ? 0.0 : chunk_send(r.opA != Op::N, std::fmod(q, p) != 0, w < ml, kq * w, q));
      x.memory = x.tiles.sum() + mj * kp + mj * nl + pack + unpack + 2 * nl * w + pieces;
      x.messages = 2 * (p + q) * up(ml, w);
      pipeline(r, up(ml, w), kp * m * (1 - 1 / (p * q)), mj * kp, x);
      break;
    }
    default: {
      // Panel buffers: two per operand (an operand that does not move may still be packed).
      const double w =
          double(blocking::summa_panel_width(ml, nl, kq, kp, q > 1 ? 2 : 0, p > 1 ? 2 : 0));
      const bool in_place = r.current_summa_words > 0 && on_caller_grid(r, c);
      x.words = in_place ? r.current_summa_words : ml * k * (1 - 1 / q) + nl * k * (1 - 1 / p);
      // summa.cpp: one buffer per side, two for a side that is broadcast, each as wide as the
      // widest panel (at most k).
      x.memory = ml * kq + kp * nl + ml * nl +
                 std::min({w, kq, kp}) * ((q > 1 ? 2 : 1) * ml + (p > 1 ? 2 : 1) * nl);
      const double width = std::min(w, std::max(1.0, std::min(kq, kp))), panels = up(k, width);
      x.messages = 2 * panels;
      // op(A)'s panels along the rows of q ranks, op(B)'s along the columns of p ranks.
      add_chain_fill(x, r, panels, ml * width, q);
      add_chain_fill(x, r, panels, nl * width, p);
    }
  }
  return x;
}

Costs cannon(const Request& r, const Candidate& c) {
  const double q = c.pm, ml = up(double(r.m), q), nl = up(double(r.n), q), kl = up(double(r.k), q);
  Costs x;
  x.words = q * (ml * kl + kl * nl), x.messages = 4 * q,
  x.memory = 3 * (ml * kl + kl * nl) + ml * nl;
  x.tiles = {ml * kl, kl * nl, ml * nl};
  return x;
}

// The ring's chunk or pass: Options::ring_chunk when given, else the algorithm's own `rule`.
double ring_width(const Request& r, std::int64_t rule) {
  return double(r.ring_chunk > 0 ? r.ring_chunk : rule);
}

Costs ring(const Request& r, const Candidate& c) {
  const double m = double(r.m), n = double(r.n), k = double(r.k), p = c.pm;
  const double f = 1 - 1 / p, share = (m * k + k * n + m * n) / p;
  Costs x;
  x.messages = p - 1;
  if (c.ring_form == RingForm::ReduceScatter) {
    x.tiles = {m * up(k, p), up(k, p) * n, up(m, p) * n};
    // C's tile (rows split), then at p = 2 two outgoing and one incoming chunk of w rows and
    // a chunk's packed slice of op(A), one message per chunk; at p > 2, per pass of v of C's
    // columns, two outgoing sums, one incoming and a block's packed slice, p - 1 messages.
    const double kl = up(k, p);
    const double w = ring_width(r, blocking::rs_chunk_width(n, kl, share));
    const double v = ring_width(r, blocking::rs_pass_width(up(m, p), n, share));
    x.words = m * n * f;
    // At p = 2 (ring_reduce_scatter.cpp, block layouts): one incoming chunk of C's rows, one
    // outgoing, two when there are several chunks.
    const double rows = std::min(w, up(m, p)), chunks = up(up(m, p), w);
    x.memory = x.tiles.sum() + (p == 2  ? rows * n * (chunks > 1 ? 3 : 2)
                                : p > 2 ? up(m, p) * (3 * std::min(v, n) + kl)
                                        : 0.0);
    if (p == 2) x.messages = up(up(m, p), w);
    if (p > 2) x.messages = (p - 1) * up(n, v);
    return x;
  }
  // AllGather forms (ring.cpp): the operands plus, at p = 2, the swap's k-chunks of width w
  // (one message each; at most 6 tiles' worth of buffers: two arriving, two packed, the
  // whole operand's chunk); at p > 2, per pass of u of k, two arriving tiles and p - 1
  // messages, and a cyclic block's product. A streamed other operand (p = 2, split along k)
  // adds the peer's half of its k for this rank's C columns (AG-A) or rows (AG-B), one more
  // message and 2.5 x `other` per chunk.
  const bool ag_a = c.ring_form == RingForm::AllGatherA;
  x.tiles = {up(m, p) * k, k * up(n, p), ag_a ? m * up(n, p) : up(m, p) * n};
  const bool streamed = p == 2 && r.ring_streamed[static_cast<int>(c.ring_form) - 1];
  const double tile = ag_a ? up(m, p) : up(n, p), other = ag_a ? up(n, p) : up(m, p);
  const double w =
      ring_width(r, blocking::ring_chunk_width(tile, share, streamed ? 2.5 * other : 0.0));
  const double u = ring_width(r, blocking::ag_pass_width(tile, k, share));
  if (p == 2) x.messages = (streamed ? 2 : 1) * up(k, w);
  if (p > 2) x.messages = (p - 1) * std::max(1.0, up(k, u));
  x.words = (ag_a ? m : n) * k * f + (streamed ? up(k, p) * other : 0.0);
  // At p = 2 (ring_swap.cpp, block layouts): one incoming chunk, two when there are several,
  // each with a packed outgoing one unless the circulating operand's k runs along its stored
  // columns or goes whole.
  const double chunks = up(k, w), wmax = std::min(w, k);
  const bool k_is_col = ag_a ? r.opA == Op::N : r.opB != Op::N;
  const double swap = std::min(chunks, 2.0) * tile * wmax * (k_is_col || chunks <= 1 ? 1 : 2);
  x.memory = x.tiles.sum() + (p == 2  ? swap + (streamed ? 2.5 * other * w : 0.0)
                              : p > 2 ? 2 * tile * std::min(u, k) + tile * other
                                      : 0.0);
  return x;
}

Costs gemm25d(const Request& r, const Candidate& c) {
  const double m = double(r.m), n = double(r.n), k = double(r.k);
  const double pm = c.pm, pn = c.pn, pk = c.pk;
  const double ml = up(m, pm), nl = up(n, pn), ks = up(k, pk);
  Costs x;
  x.tiles = {ml * up(ks, pn), up(ks, pm) * nl, ml * up(nl, pk)};
  x.words = ml * ks * (1 - 1 / pn) + nl * ks * (1 - 1 / pm) + ml * nl * (1 - 1 / pk);
  const double w = double(
      blocking::summa_panel_width(ml, nl, up(ks, pn), up(ks, pm), pn > 1 ? 2 : 0, pm > 1 ? 2 : 0));
  x.messages = 2 * up(ks, w) + pk;
  add_chain_fill(x, r, up(ks, w), ml * w, pn);  // SUMMA per k-slice
  add_chain_fill(x, r, up(ks, w), nl * w, pm);
  // gemm25d.cpp: the slice's partial product, its SUMMA's panels, then the z reduction's
  // packed partial, C's summed block and the reduce-scatter's two running sums (C tiles).
  x.memory =
      x.tiles.sum() + 2 * ml * nl + 3 * ml * up(nl, pk) +
      std::min({w, up(ks, pn), up(ks, pm)}) * ((pn > 1 ? 2 : 1) * ml + (pm > 1 ? 2 : 1) * nl);
  return x;
}

// The sharding rules on the caller's mesh (algo/sharded_plan.cpp prices the plan exactly):
// blocking collectives, one gathered operand streamed past the product.
Costs sharded(const Request& r) {
  Costs x;
  x.words = r.sharded.words, x.messages = r.sharded.messages, x.memory = r.sharded.memory;
  x.overlapped = false, x.streamed = r.sharded.streamed;
  x.tiles = {resident(r), 0, 0};  // the caller's tiles, where the rules use them
  return x;
}

Costs local(const Request& r) {
  const double m = double(r.m), n = double(r.n), k = double(r.k);
  Costs x;
  x.memory = m * k + k * n + m * n;
  x.tiles = {m * k, k * n, m * n};
  return x;
}

// Which of A, B and C the front end copies into the candidate's layouts, balanced estimate:
// none on one rank, for the sharding rules (the caller's layouts) and on the caller's grid,
// a ring's operands not already in its form's layouts, else all three.
std::array<bool, 3> moved(const Request& r, const Candidate& c) {
  if (r.ranks == 1 || c.algorithm == Algorithm::Sharded) return {};
  const bool grid = c.algorithm == Algorithm::Summa || c.algorithm == Algorithm::Cannon ||
                    c.algorithm == Algorithm::Strassen;
  if (grid && on_caller_grid(r, c)) return {};
  if (c.algorithm == Algorithm::Ring && c.ring_form != RingForm::Auto) {
    const auto& fits = r.ring_in_place[static_cast<int>(c.ring_form) - 1];
    return {!fits[0], !fits[1], !fits[2]};
  }
  return {true, true, true};
}

// Elements the front end adds to run `c` in its layouts (tiles `t`): the copies of the operands
// that move, and the largest send and receive buffers of their redistributions (the caller's
// tile out and the copy in for A and B, the other way round for C).
double staged(const Request& r, const Candidate& c, const Tiles& t) {
  if (r.staged_elements) {  // exact, from the caller's layouts
    const double w = r.staged_elements(c);
    if (w >= 0) return w;
  }
  const auto mv = moved(r, c);
  const double P = r.ranks, m = double(r.m), n = double(r.n), k = double(r.k);
  const std::array<double, 3> caller = {m * k / P, k * n / P, m * n / P}, tile = {t.a, t.b, t.c};
  double copies = 0, send = 0, recv = 0;
  for (int i = 0; i < 3; ++i) {
    if (!mv[i]) continue;
    copies += tile[i];
    send = std::max(send, i < 2 ? caller[i] : tile[i]);
    recv = std::max(recv, i < 2 ? tile[i] : caller[i]);
  }
  return copies + send + recv;
}

// The pool rounds each slot's buffer up to 64 bytes (workspace.cpp; 2 MiB from 2 MiB up, which
// this allowance does not cover): at most this much per call beyond the buffers' sizes.
constexpr double kPoolRounding = 24 * 64;

// The workspace pool's high-water mark beyond the caller's operands, bytes.
std::int64_t added_bytes(const Request& r, const Candidate& c, const Tiles& t, bool moves_itself) {
  const double elem = double(dtype_size(r.dtype));
  if (moves_itself) {  // memory_bytes holds the caller's balanced share and every buffer
    const double share = double(r.m * r.k + r.k * r.n + r.m * r.n) / r.ranks;
    return static_cast<std::int64_t>(std::max(0.0, double(c.memory_bytes) - share * elem) +
                                     kPoolRounding);
  }
  const double buffers = std::max(0.0, double(c.memory_bytes) / elem - t.sum());
  return static_cast<std::int64_t>(elem * (buffers + staged(r, c, t)) + kPoolRounding);
}

}  // namespace

double resident(const Request& r) {
  if (r.resident > 0) return r.resident;
  return (double(r.m) * double(r.k) + double(r.k) * double(r.n) + double(r.m) * double(r.n)) /
         r.ranks;
}

void evaluate(const Request& r, Candidate& c) {
  if (c.algorithm == Algorithm::Strassen) {
    bool moves_itself = false;
    const Tiles t = evaluate_strassen(r, c, moves_itself);
    c.added_bytes = added_bytes(r, c, t, moves_itself);
    return;
  }
  Costs x;
  switch (c.algorithm) {
    case Algorithm::Summa: x = summa(r, c); break;
    case Algorithm::Cannon: x = cannon(r, c); break;
    case Algorithm::Ring: x = ring(r, c); break;
    case Algorithm::Gemm25D: x = gemm25d(r, c); break;
    case Algorithm::Sharded: x = sharded(r); break;
    default: x = local(r); break;
  }
  const double P = r.ranks, m = double(r.m), n = double(r.n), k = double(r.k);
  const double elem = double(dtype_size(r.dtype));
  const bool cplx = r.dtype == Dtype::C64 || r.dtype == Dtype::C128;
  // The operands' share on this candidate's grid, for the cost of moving them there.
  double a_loc = m * k / P, b_loc = k * n / P, c_loc = m * n / P;
  if (c.algorithm == Algorithm::Local) a_loc = m * k, b_loc = k * n, c_loc = 0;
  c.redist_words = redistribution(r, c, a_loc, b_loc, c_loc);
  c.words = x.words;
  c.messages = x.messages + (c.redist_words > 0 ? 2 * (P - 1) : 0);
  c.flops = c.algorithm == Algorithm::Sharded ? (cplx ? 4 : 1) * r.sharded.flops
                                              : (cplx ? 8 : 2) * m * n * k / (c.pm * c.pn * c.pk);
  c.memory_bytes = static_cast<std::int64_t>(x.memory * elem);
  c.added_bytes = added_bytes(r, c, x.tiles, false);
  const double comm = r.profile.latency_s * (x.messages + x.fill_hops) +
                      (x.words + x.fill_words) * elem / r.profile.bytes_per_s;
  const double compute = c.flops / r.profile.flops_per_s(r.dtype);
  const double redist = c.redist_words * elem / r.profile.bytes_per_s +
                        (c.redist_words > 0 ? r.profile.latency_s * 2 * (P - 1) : 0);
  // Overlap is imperfect (progress, memory bandwidth and cores shared with the GEMM): a share
  // of the smaller part stays exposed (the profile's overlap_exposed, a quarter by default).
  const double hidden = x.streamed * elem / r.profile.bytes_per_s;  // travels during the GEMM
  const double e = r.profile.overlap_exposed;
  const double exposed =
      x.overlapped ? std::max(comm, compute) + e * std::min(comm, compute)
                   : comm - hidden + std::max(hidden, compute) + e * std::min(hidden, compute);
  c.seconds = exposed + redist;
}

}  // namespace shardmm::plan
