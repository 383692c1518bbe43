// shardmm::gemm (SUMMA's C-, A- and B-stationary variants, and Auto) against Debian's
// ScaLAPACK p?gemm_ on identical memory: each operand is one set of local block-cyclic arrays
// (LLD padded) that ScaLAPACK sees through an array descriptor and shardmm through
// DistMatrix::view with Layout::block_cyclic. Every case checks both results against the
// serial normwise oracle (gemm_check.hpp) and each other, that neither library wrote into C's
// LLD padding, and that SUMMA runs ScaLAPACK layouts that fit it without redistributing.
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>

#include "mpi/gemm_check.hpp"

using namespace shardmm;
using namespace shardmm::testing;

// ScaLAPACK / BLACS (C interface of BLACS, Fortran interface of PBLAS).
template <class T>
using Pgemm = void(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                   const T* alpha, const T* a, const int* ia, const int* ja, const int* desca,
                   const T* b, const int* ib, const int* jb, const int* descb, const T* beta, T* c,
                   const int* ic, const int* jc, const int* descc);
extern "C" {
void Cblacs_get(int, int, int*);
void Cblacs_gridinit(int*, const char*, int, int);
void Cblacs_gridinfo(int, int*, int*, int*, int*);
void Cblacs_gridexit(int);
void descinit_(int*, const int*, const int*, const int*, const int*, const int*, const int*,
               const int*, const int*, int*);
Pgemm<float> psgemm_;
Pgemm<double> pdgemm_;
Pgemm<std::complex<float>> pcgemm_;
Pgemm<std::complex<double>> pzgemm_;
}

namespace {

template <Scalar T>
Pgemm<T>* pgemm() {
  if constexpr (std::is_same_v<T, float>) return psgemm_;
  else if constexpr (std::is_same_v<T, double>) return pdgemm_;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return pcgemm_;
  else return pzgemm_;
}

// A row-major p x q BLACS grid and the shardmm mesh with the same rank <-> cell map.
class Grid {
 public:
  Grid(int p, int q) : mesh_(MPI_COMM_WORLD, MeshShape({"x", "y"}, {p, q})) {
    Cblacs_get(-1, 0, &ctxt_);
    Cblacs_gridinit(&ctxt_, "Row", p, q);
    int gp = 0, gq = 0;
    Cblacs_gridinfo(ctxt_, &gp, &gq, &row_, &col_);
    EXPECT_EQ(gp, p);
    EXPECT_EQ(gq, q);
    EXPECT_EQ(row_, mesh_.coords()[0]) << "BLACS and shardmm disagree on the rank order";
    EXPECT_EQ(col_, mesh_.coords()[1]) << "BLACS and shardmm disagree on the rank order";
  }
  ~Grid() { Cblacs_gridexit(ctxt_); }
  Grid(const Grid&) = delete;
  Grid& operator=(const Grid&) = delete;
  Grid(Grid&&) = delete;
  Grid& operator=(Grid&&) = delete;
  [[nodiscard]] const Mesh& mesh() const { return mesh_; }
  [[nodiscard]] int ctxt() const { return ctxt_; }
  [[nodiscard]] std::string name() const {
    return std::to_string(mesh_.shape().sizes[0]) + "x" + std::to_string(mesh_.shape().sizes[1]);
  }

 private:
  Mesh mesh_;
  int ctxt_ = -1, row_ = -1, col_ = -1;
};

// ScaLAPACK's MB_, NB_, RSRC_, CSRC_ of one stored matrix.
struct Blocking {
  int mb = 1, nb = 1, rsrc = 0, csrc = 0;
};

template <class T>
constexpr T kPadding = T(-777);  // sentinel in the LLD padding

// One stored matrix: its local array (LLD = local rows + pad) and both libraries' views of it.
template <Scalar T>
struct Operand {
  Mesh mesh;
  Layout layout;
  int desc[9] = {};
  index_t ld = 1;
  std::vector<T> data;

  Operand(const Grid& g, int rows, int cols, Blocking b, int pad, int seed)
      : mesh(g.mesh()),
        layout(Layout::block_cyclic(mesh.shape(), rows, cols, b.mb, b.nb, b.rsrc, b.csrc)) {
    const index_t lr = layout.local_rows(mesh.coords()), lc = layout.local_cols(mesh.coords());
    ld = std::max<index_t>(lr, 1) + pad;
    data.assign(static_cast<std::size_t>(ld * lc), kPadding<T>);
    const int lld = static_cast<int>(ld), ctxt = g.ctxt();
    int info = 0;
    descinit_(desc, &rows, &cols, &b.mb, &b.nb, &b.rsrc, &b.csrc, &ctxt, &lld, &info);
    EXPECT_EQ(info, 0) << "descinit_ rejected " << layout.to_string();
    view().fill([seed](index_t i, index_t j) { return entry<T>(i, j, seed); });
  }
  [[nodiscard]] DistMatrix<T> view() { return DistMatrix<T>::view(mesh, layout, data.data(), ld); }
  [[nodiscard]] bool padding_intact() const {
    const index_t lr = layout.local_rows(mesh.coords());
    for (std::size_t e = 0; e < data.size(); ++e)
      if (static_cast<index_t>(e) % ld >= lr && data[e] != kPadding<T>) return false;
    return true;
  }
};

struct Shape {
  int m, n, k;
};
// 1s, primes, m = 1, n = 1, n >> m, k = 0, k larger than everything else.
const Shape kShapes[] = {{1, 1, 1},   {7, 5, 3},    {13, 1, 17}, {1, 11, 6}, {2, 41, 3},
                         {11, 13, 0}, {17, 19, 23}, {5, 3, 37},  {3, 64, 5}};
constexpr int kBlocks[] = {1, 2, 3, 5};
constexpr Op kOps[] = {Op::N, Op::T, Op::C};

// One sampled combination.
struct Case {
  Op opA = Op::N, opB = Op::N;
  Shape s{};
  Blocking a, b, c;
  int alpha = 0, beta = 0;  // index into scalars<T>()
  int pad = 0;
  bool aligned = false;  // op N N with A and B in C's row / column maps: SUMMA's own layouts
  [[nodiscard]] std::string describe(const std::string& grid) const {
    std::ostringstream o;
    auto blk = [&](const Blocking& x) {
      o << "(" << x.mb << "," << x.nb << "," << x.rsrc << "," << x.csrc << ")";
    };
    o << "grid " << grid << " op " << to_string(opA) << to_string(opB) << " m=" << s.m
      << " n=" << s.n << " k=" << s.k << " alpha#" << alpha << " beta#" << beta << " pad " << pad
      << " blocking A";
    blk(a);
    o << " B";
    blk(b);
    o << " C";
    blk(c);
    return o.str();
  }
};

// alpha / beta values: 0, 1, 2.5 and a complex one (a negative real for real types).
template <Scalar T>
T scalar(int i) {
  if (i == 0) return T(0);
  if (i == 1) return T(1);
  if (i == 2) return T(real_t<T>(2.5));
  if constexpr (is_complex_v<T>) return T(real_t<T>(0.75), real_t<T>(-1.25));
  else return T(-0.75);
}

// Deterministic pseudo-random sampler (identical on every rank).
class Sampler {
 public:
  explicit Sampler(std::uint32_t seed) : s_(seed) {}
  int below(int n) {
    s_ = s_ * 1664525u + 1013904223u;
    return static_cast<int>((s_ >> 8) % static_cast<std::uint32_t>(n));
  }
  Blocking blocking(int p, int q) {
    return {kBlocks[below(4)], kBlocks[below(4)], below(p), below(q)};
  }

 private:
  std::uint32_t s_;
};

// Case i: op pair and shape rotate so every shape meets several op pairs; the rest is sampled.
// Two cases in three align A and B with C the way SUMMA uses ScaLAPACK layouts as they are.
Case make_case(int i, int p, int q, Sampler& rng) {
  constexpr int S = sizeof(kShapes) / sizeof(kShapes[0]);
  Case c;
  c.s = kShapes[i % S];
  const int pair = (i + i / S) % 9;
  c.opA = kOps[pair / 3];
  c.opB = kOps[pair % 3];
  c.c = rng.blocking(p, q);
  c.a = rng.blocking(p, q);
  c.b = rng.blocking(p, q);
  if (i % 3 != 1) {
    if (c.opA == Op::N) c.a = {c.c.mb, c.a.nb, c.c.rsrc, c.a.csrc};
    if (c.opB == Op::N) c.b = {c.b.mb, c.c.nb, c.b.rsrc, c.c.csrc};
    c.aligned = c.opA == Op::N && c.opB == Op::N;
  }
  c.alpha = rng.below(4);
  c.beta = rng.below(4);
  c.pad = rng.below(3);
  return c;
}

// ||X - Y|| scaled like gemm_error (by eps (sqrt(k+2)|alpha| ||A|| ||B|| + 2|beta| ||C0||)).
template <Scalar T>
double scaled_difference(T alpha, T beta, int k, const std::vector<T>& a, const std::vector<T>& b,
                         const std::vector<T>& c0, const std::vector<T>& x,
                         const std::vector<T>& y) {
  double err = 0;
  if (world_rank() == 0) {
    std::vector<T> d(x.size());
    for (std::size_t e = 0; e < x.size(); ++e) d[e] = x[e] - y[e];
    const double denom =
        std::sqrt(double(k) + 2) * std::abs(alpha) * fro(a) * fro(b) + 2 * std::abs(beta) * fro(c0);
    const double num = fro(d), eps = std::numeric_limits<real_t<T>>::epsilon();
    err = num == 0 ? 0 : (denom == 0 || !std::isfinite(num) ? 1e300 : num / denom / eps);
  }
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return err;
}

char op_char(Op op) { return op == Op::N ? 'N' : (op == Op::T ? 'T' : 'C'); }

// shardmm configurations compared: SUMMA's three variants and Auto (the planner).
struct Variant {
  const char* name;
  Algorithm algorithm;
  Stationary stationary;
};
constexpr Variant kVariants[] = {{"summa C-stationary", Algorithm::Summa, Stationary::C},
                                 {"summa A-stationary", Algorithm::Summa, Stationary::A},
                                 {"summa B-stationary", Algorithm::Summa, Stationary::B},
                                 {"auto", Algorithm::Auto, Stationary::Auto}};

template <Scalar T>
void run_case(const Grid& g, const Case& c, const Variant& v) {
  const std::string what = c.describe(g.name()) + " shardmm " + v.name;
  const int ar = c.opA == Op::N ? c.s.m : c.s.k, ac = c.opA == Op::N ? c.s.k : c.s.m;
  const int br = c.opB == Op::N ? c.s.k : c.s.n, bc = c.opB == Op::N ? c.s.n : c.s.k;
  Operand<T> A(g, ar, ac, c.a, c.pad, 1), B(g, br, bc, c.b, c.pad, 2);
  Operand<T> Csh(g, c.s.m, c.s.n, c.c, c.pad, 3);
  Operand<T> Csl = Csh;  // each library gets its own C (same layout, same padding)
  const T alpha = scalar<T>(c.alpha), beta = scalar<T>(c.beta);
  const auto c0 = Csh.view().gather();

  Options o;
  o.algorithm = v.algorithm;
  o.stationary = v.stationary;
  auto Av = A.view(), Bv = B.view(), Cv = Csh.view();
  const GemmReport rep = gemm(c.opA, c.opB, alpha, Av, Bv, beta, Cv, o);
  if (c.aligned && v.algorithm == Algorithm::Summa) {  // ScaLAPACK layouts run as they are
    EXPECT_EQ(rep.redist_bytes_sent + rep.redist_bytes_received, 0) << what;
  }

  const char ta = op_char(c.opA), tb = op_char(c.opB);
  const int one = 1;
  pgemm<T>()(&ta, &tb, &c.s.m, &c.s.n, &c.s.k, &alpha, A.data.data(), &one, &one, A.desc,
             B.data.data(), &one, &one, B.desc, &beta, Csl.data.data(), &one, &one, Csl.desc);

  auto Lv = Csl.view();
  EXPECT_LE(gemm_error(c.opA, c.opB, alpha, Av, Bv, beta, c0, Cv), 10.0) << "shardmm: " << what;
  EXPECT_LE(gemm_error(c.opA, c.opB, alpha, Av, Bv, beta, c0, Lv), 10.0) << "ScaLAPACK: " << what;
  const double diff =
      scaled_difference(alpha, beta, c.s.k, Av.gather(), Bv.gather(), c0, Cv.gather(), Lv.gather());
  EXPECT_LE(diff, 20.0) << "shardmm and ScaLAPACK differ: " << what;
  EXPECT_TRUE(Csh.padding_intact()) << "shardmm wrote into C's LLD padding: " << what;
  EXPECT_TRUE(Csl.padding_intact()) << "ScaLAPACK wrote into C's LLD padding: " << what;
}

// Grids for this world size: the near-square one (more rows than columns), its transpose,
// and 1 x P when the near-square one is its own transpose.
std::vector<std::pair<int, int>> grids() {
  const int P = world_size();
  const auto f = factor_near_square(P, 2);
  std::vector<std::pair<int, int>> out{{f[0], f[1]}};
  if (f[0] != f[1]) out.emplace_back(f[1], f[0]);
  else if (P > 1) out.emplace_back(1, P);
  return out;
}

// Every (shape, op pair) combination once, spread over the grids; x 4 variants per type (on
// more than 2 ranks each variant of a case in one of the types: type_takes_case).
constexpr int kCases = 9 * 9;

template <Scalar T>
void sweep(std::uint32_t seed) {
  const auto gs = grids();
  for (std::size_t gi = 0; gi < gs.size(); ++gi) {
    const auto [p, q] = gs[gi];
    Grid g(p, q);
    Sampler rng(seed + static_cast<std::uint32_t>(p));
    for (int i = static_cast<int>(gi); i < kCases; i += static_cast<int>(gs.size())) {
      const Case c = make_case(i, p, q, rng);  // drawn in every type: the draws stay aligned
      for (std::size_t v = 0; v < std::size(kVariants); ++v)
        if (type_takes_case<T>(static_cast<std::size_t>(i) * std::size(kVariants) + v))
          run_case<T>(g, c, kVariants[v]);
    }
  }
}

TEST(GemmScalapack, Float) { sweep<float>(11); }
TEST(GemmScalapack, Double) { sweep<double>(23); }
TEST(GemmScalapack, ComplexFloat) { sweep<std::complex<float>>(37); }
TEST(GemmScalapack, ComplexDouble) { sweep<std::complex<double>>(53); }

// The sampler must actually reach the corners this test is for (checked once, no MPI needed).
TEST(GemmScalapack, SamplingCoversTheCorners) {
  constexpr int S = sizeof(kShapes) / sizeof(kShapes[0]);
  bool combo[S][9] = {}, blk[6] = {}, src = false, scal[4] = {};
  int aligned = 0;
  Sampler rng(1);
  for (int i = 0; i < kCases; ++i) {
    const Case c = make_case(i, 3, 2, rng);
    combo[i % S][int(c.opA) * 3 + int(c.opB)] = true;
    for (int v : {c.a.mb, c.a.nb, c.b.mb, c.c.nb}) blk[v] = true;
    src = src || c.c.rsrc != 0 || c.a.csrc != 0;
    scal[c.alpha] = scal[c.beta] = true;
    aligned += c.aligned ? 1 : 0;
  }
  EXPECT_GE(aligned, 4) << "too few cases in SUMMA's own layouts";
  for (auto& row : combo)
    for (bool b : row) EXPECT_TRUE(b) << "a (shape, op pair) combination is never sampled";
  for (int v : kBlocks) EXPECT_TRUE(blk[v]) << "block size " << v << " is never sampled";
  EXPECT_TRUE(src) << "no nonzero RSRC/CSRC sampled";
  for (bool b : scal) EXPECT_TRUE(b) << "a scalar is never sampled";
}

}  // namespace
