// gemm against a serial OpenBLAS reference: every algorithm x op pair x type x shape x
// alpha/beta, with operands in the algorithm's layouts and in foreign (block-cyclic) ones.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/instantiate.hpp"
#include "mpi/gemm_check.hpp"
#include "mpi/ref_layout.hpp"

using namespace shardmm;
using namespace shardmm::testing;

namespace {

struct Shape {
  index_t m, n, k;
};
const Shape kShapes[] = {{1, 1, 1},  {7, 5, 3},    {13, 1, 17}, {1, 11, 6},
                         {5, 29, 2}, {23, 19, 31}, {4, 6, 0}};

// What a case sets beyond the sweep: SUMMA's panel width and variant, "bc"'s block sizes, the
// ring's direction, form and overlap, and the mesh.
struct Knobs {
  index_t panel = 4;             // many panels even at small k (not the ring's: rejected there)
  index_t stationary_chunk = 4;  // SUMMA A/B-stationary: many chunks
  index_t ring_chunk = 4;        // the ring: many chunks (p = 2), many passes (p > 2)
  index_t mb = 3, nb = 2;
  Stationary stationary = Stationary::Auto;
  bool bidirectional = false;
  RingForm ring_form = RingForm::Auto;
  int line = 0;  // ring and Auto on a 2D grid that is a line: 1 = 1 x P, 2 = P x 1
  bool overlap = true;
};

template <Scalar T>
T value(double re, double im) {
  if constexpr (is_complex_v<T>) return T(static_cast<real_t<T>>(re), static_cast<real_t<T>>(im));
  else return static_cast<T>(re);
}

// Runs one case with stored operands in layouts lay[0..2] ("bc" = block-cyclic mb x nb,
// src 0,1).
template <Scalar T>
void run_case(Algorithm algo, Op opA, Op opB, Shape s, T alpha, T beta,
              const std::array<std::string, 3>& lay, const Knobs& kn) {
  Mesh mesh =
      mesh_for(algo, kn.line);  // Cannon leaves surplus ranks idle; they still join the oracle
  const index_t ar = opA == Op::N ? s.m : s.k, ac = opA == Op::N ? s.k : s.m;
  const index_t br = opB == Op::N ? s.k : s.n, bc = opB == Op::N ? s.n : s.k;
  auto layout = [&](index_t r, index_t c, const std::string& spec) {
    const int csrc = mesh.shape().ndims() > 1 ? 1 % mesh.shape().sizes[1] : 0;
    if (spec == "bc") return Layout::block_cyclic(mesh.shape(), r, c, kn.mb, kn.nb, 0, csrc);
    return Layout(mesh.shape(), r, c, spec);
  };
  DistMatrix<T> A(mesh, layout(ar, ac, lay[0])), B(mesh, layout(br, bc, lay[1])),
      C(mesh, layout(s.m, s.n, lay[2]));
  A.fill([](index_t i, index_t j) { return entry<T>(i, j, 1); });
  B.fill([](index_t i, index_t j) { return entry<T>(i, j, 2); });
  C.fill([](index_t i, index_t j) { return entry<T>(i, j, 3); });
  const auto C0 = C.gather();
  Options o;
  o.algorithm = algo;
  if (algo != Algorithm::Ring) o.panel = kn.panel;
  o.stationary_chunk = kn.stationary_chunk;
  o.ring_chunk = kn.ring_chunk;
  o.stationary = kn.stationary;
  o.bidirectional = kn.bidirectional;
  o.ring_form = kn.ring_form;
  o.overlap = kn.overlap;
  gemm(opA, opB, alpha, A, B, beta, C, o);
  const double err = gemm_error(opA, opB, alpha, A, B, beta, C0, C);
  EXPECT_LE(err, 10.0) << to_string(algo) << " " << to_string(opA) << to_string(opB) << " m=" << s.m
                       << " n=" << s.n << " k=" << s.k << " layouts " << lay[0] << " " << lay[1]
                       << " " << lay[2] << " panel " << kn.panel << " chunks "
                       << kn.stationary_chunk << " " << kn.ring_chunk;
}

// Whether a sweep of element type T runs its case number i at this rank count. Two ranks run
// every case of every type (in turns under SHARDMM_TEST_TYPES_IN_TURN). One, three, four and six
// ranks share the cases: case i runs on one of them (i % 4 picks it), in one of the four types
// on 3, 4 and 6 ranks (type_takes_case) and in every type on one (the 1 x 1 grid every algorithm
// degenerates to). So every case still runs on 2 ranks and on one of 1, 3, 4, 6, and every type
// at every rank count on cases spread over every algorithm, op pair, shape, layout and alpha/beta
// pair. SHARDMM_TEST_EVERY_CASE=1 runs every case of every type at every count.
template <Scalar T>
bool case_selected(std::size_t i) {
  static const int P = world_size();
  static const bool every = std::getenv("SHARDMM_TEST_EVERY_CASE") != nullptr;
  if (every) return true;
  if (P == 2) return type_takes_case<T>(i);  // every case (in turns under the sanitizers)
  const std::size_t share = P == 1   ? 0
                            : P == 3 ? 1
                            : P == 4 ? 2
                            : P == 6 ? 3
                                     : static_cast<std::size_t>(P % 4);
  return i % 4 == share && type_takes_case<T>(i / 4);
}

template <Scalar T>
void sweep(Algorithm algo, const std::vector<std::array<std::string, 3>>& layouts,
           const Knobs& kn = {}) {
  // Op::C is Op::T on real types (the same packing and BLAS calls): swept on complex ones only.
  const std::vector<Op> ops =
      is_complex_v<T> ? std::vector<Op>{Op::N, Op::T, Op::C} : std::vector<Op>{Op::N, Op::T};
  const T alphas[] = {T(1), value<T>(2.5, -0.5)};
  const T betas[] = {T(0), value<T>(-1.5, 0.25)};
  std::size_t i = 0;
  for (Op a : ops)
    for (Op b : ops)
      for (const Shape& s : kShapes)
        for (std::size_t v = 0; v < 2; ++v)
          for (const auto& lay : layouts)
            if (case_selected<T>(i++)) run_case<T>(algo, a, b, s, alphas[v], betas[1 - v], lay, kn);
}

template <class T>
class GemmTyped : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(GemmTyped, Types);

using L3 = std::array<std::string, 3>;
const L3 kBc = {"bc", "bc", "bc"};
const L3 kGrid = {"A[I_X,J_Y]", "B[I_X,J_Y]", "C[I_X,J_Y]"};

TYPED_TEST(GemmTyped, Summa) { sweep<TypeParam>(Algorithm::Summa, {kBc, kGrid}); }
TYPED_TEST(GemmTyped, SummaStationaryA) {
  Knobs kn;
  kn.stationary = Stationary::A;
  sweep<TypeParam>(Algorithm::Summa, {kBc, kGrid}, kn);
}
TYPED_TEST(GemmTyped, SummaStationaryB) {
  Knobs kn;
  kn.stationary = Stationary::B;
  sweep<TypeParam>(Algorithm::Summa, {kBc, kGrid}, kn);
}
// SUMMA's stationary forms streamed in chunks of C's columns (A stays) or rows (B stays): one
// column or row per owner, a ragged last chunk, the default rule and one chunk wider than any
// tile, on block-cyclic operands (owners with uneven extents, source coordinate 1) and block
// ones, for every op pair.
TYPED_TEST(GemmTyped, SummaStationaryChunks) {
  using T = TypeParam;
  const Shape shapes[] = {{37, 45, 23}, {45, 37, 9}};
  const Op ops[] = {Op::N, Op::T};
  Knobs kn;
  kn.mb = 4, kn.nb = 5;
  std::size_t i = 0;
  for (Stationary st : {Stationary::A, Stationary::B})
    for (index_t chunk : {index_t(0), index_t(1), index_t(3), index_t(100)}) {
      kn.stationary = st, kn.stationary_chunk = chunk;
      for (Op a : ops)
        for (Op b : ops)
          for (const Shape& s : shapes)
            for (const auto& lay : {kBc, kGrid})
              if (case_selected<T>(i++))
                run_case<T>(Algorithm::Summa, a, b, s, value<T>(1.5, 0.5), value<T>(-0.5, 0), lay,
                            kn);
    }
}

// SUMMA with panels wider than one BLAS k block (cut into k pieces, a ragged last piece),
// the default width, and owners reading their panels in place (block and block-cyclic
// operands whose local k indices form one run), for every op pair.
TYPED_TEST(GemmTyped, SummaWidePanels) {
  using T = TypeParam;
  // k spans several 64-wide blocks, so panels 385 and 1000 cut blocks and cover several; m and n
  // stay small (uneven: 130 = 64 + 64 + 2) since the reference costs every rank the whole product.
  const Shape shapes[] = {{40, 130, 1700}, {150, 45, 800}, {9, 130, 390}};
  const Op ops[] = {Op::N, Op::T};
  Knobs kn;
  kn.mb = kn.nb = 64;
  kn.stationary = Stationary::C;
  std::size_t i = 0;
  for (index_t panel : {index_t(0), index_t(1000), index_t(385)}) {
    kn.panel = panel;
    for (Op a : ops)
      for (Op b : ops)
        for (const Shape& s : shapes)
          for (const auto& lay : {kBc, kGrid})
            if (case_selected<T>(i++))
              run_case<T>(Algorithm::Summa, a, b, s, value<T>(1.5, 0.5), value<T>(-0.5, 0), lay,
                          kn);
  }
}

TYPED_TEST(GemmTyped, Cannon) { sweep<TypeParam>(Algorithm::Cannon, {kGrid, kBc}); }
TYPED_TEST(GemmTyped, Ring) {
  sweep<TypeParam>(Algorithm::Ring,
                   {{"A[I_X,J]", "B[I,J_X]", "C[I_X,J]"}, {"A[I,J_X]", "B[I_X,J]", "C[I,J_X]"}});
}
TYPED_TEST(GemmTyped, RingBidirectional) {
  Knobs kn;
  kn.bidirectional = true;
  sweep<TypeParam>(Algorithm::Ring,
                   {{"A[I_X,J]", "B[I,J_X]", "C[I_X,J]"}, {"A[I,J_X]", "B[I_X,J]", "C[I,J_X]"}},
                   kn);
}
// The ring with each of `forms` on 1 x P (line 1) and P x 1 (line 2) grids with block-cyclic
// operands, then Auto on the same layouts when asked; the other knobs from `base`.
template <Scalar T>
void ring_on_lines(std::initializer_list<int> lines, std::initializer_list<RingForm> forms,
                   bool and_auto, const Knobs& base = {}) {
  for (int line : lines) {
    Knobs kn = base;
    kn.line = line;
    for (RingForm f : forms) {
      kn.ring_form = f;
      sweep<T>(Algorithm::Ring, {kBc}, kn);
    }
    kn.ring_form = RingForm::Auto;
    if (and_auto) sweep<T>(Algorithm::Auto, {kBc}, kn);
  }
}
const auto kForms = {RingForm::AllGatherA, RingForm::AllGatherB, RingForm::ReduceScatter};

// The ring on a ScaLAPACK 1 x P or P x 1 layout: every form keeps what it can of the caller's
// block-cyclic splits, so scattered blocks (several runs of C's rows or columns) are
// multiplied into scratch and added into place; Auto on the same layouts.
TYPED_TEST(GemmTyped, RingOnBlockCyclicLine) { ring_on_lines<TypeParam>({1, 2}, kForms, true); }
// At p = 2 the ring swaps tiles (partial sums) in chunks Knobs::ring_chunk wide, each its own
// message; the same sweep with every message split into pieces of at most 5 elements.
TYPED_TEST(GemmTyped, RingChunksInSmallMessages) {
  const ref::ScopedMessageLimit limit(5);
  ring_on_lines<TypeParam>({1}, kForms, false);
}
// At p = 2, a cyclic split with k along the swapped operand's rows (op(A) = A^T for AG-A,
// op(B) = B for AG-B) and blocks of 32 x 256 chunks (64 KiB from f64 up) swaps its blocks as
// whole columns of the chunk of op(X), one message each: 4 blocks of 100 rows (the last 4
// long), 2 per rank, chunks 256, 256 and 88 of k = 600; once without overlap.
TYPED_TEST(GemmTyped, RingSwapsBlocksIntoPlace) {
  using T = TypeParam;
  Knobs kn;
  kn.line = 1, kn.mb = kn.nb = 32, kn.ring_chunk = 256;
  const struct {
    RingForm form;
    Op a, b;
    bool overlap;
  } cases[] = {{RingForm::AllGatherA, Op::T, Op::N, true},
               {RingForm::AllGatherA, Op::T, Op::T, true},
               {RingForm::AllGatherB, Op::N, Op::N, true},
               {RingForm::AllGatherB, Op::T, Op::N, true},
               {RingForm::AllGatherA, Op::T, Op::N, false}};
  for (const auto& c : cases) {
    kn.ring_form = c.form, kn.overlap = c.overlap;
    run_case<T>(Algorithm::Ring, c.a, c.b, {100, 100, 600}, value<T>(1.5, 0.5),
                value<T>(-0.5, 0.25), kBc, kn);
  }
}
// The same rings with Options::overlap off: every transfer completes before its GEMM.
TYPED_TEST(GemmTyped, RingWithoutOverlap) {
  Knobs kn;
  kn.overlap = false;
  ring_on_lines<TypeParam>({1, 2}, kForms, false, kn);
}
TYPED_TEST(GemmTyped, Gemm25D) { sweep<TypeParam>(Algorithm::Gemm25D, {kBc, kGrid}); }
TYPED_TEST(GemmTyped, Local) { sweep<TypeParam>(Algorithm::Local, {kBc}); }
TYPED_TEST(GemmTyped, Auto) { sweep<TypeParam>(Algorithm::Auto, {kBc}); }

// The JAX guide's cases on a 2D mesh (layouts are of the stored matrices).
TYPED_TEST(GemmTyped, Sharded) {
  sweep<TypeParam>(Algorithm::Sharded,
                   {{"A[I_X,J]", "B[J,K_Y]", "C[I_X,K_Y]"},  // case 1: no communication
                    {"A[I,J_X]", "B[J,K]", "C[I,K]"},        // case 2
                    {"A[I,J_X]", "B[J_X,K]", "C[I,K]"},      // case 3, AllReduce
                    {"A[I,J_X]", "B[J_X,K]", "C[I_X,K]"},    // case 3, ReduceScatter
                    {"A[I,J_X]", "B[J_X,K]", "C[I,K_X]"},
                    {"A[I,J_X]", "B[J_X,K]", "C[I,K]{U_X}"},  // left unreduced
                    {"A[I_X,J]", "B[J,K_X]", "C[I_X,K]"},     // case 4
                    {"A[I_X,J]", "B[J,K_X]", "C[I,K_X]"},
                    {"A[I,J_X]", "B[J_Y,K]", "C[I,K]"},  // k on different axes
                    {"A[I_XY,J]", "B[J,K]", "C[I_XY,K]"},
                    {"A[I_X,J_Y]", "B[J_Y,K]", "C[I_X,K]{U_Y}"},
                    {"A[I_X,J_Y]", "B[J_Y,K]", "C[I_XY,K]"},  // ReduceScatter onto a combined axis
                    {"A[I_X:c,J_Y:bc2]", "B[J_Y:bc3,K]", "C[I_X,K_Y]"}});
}

}  // namespace
