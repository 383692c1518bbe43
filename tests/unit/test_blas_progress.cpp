// blas::Progress: a GEMM run while messages are in flight goes in blocks with a poll between
// them, gives the same C as one call, and stops polling once everything has arrived.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "blas/blas.hpp"
#include "shardmm/error.hpp"

namespace shardmm {
namespace {

template <class T>
T entry(index_t i, index_t j, int which) {  // from global indices: any blocking gives the same
  const double v = std::sin(0.37 * double(i) + 1.3 * double(j) + which);
  if constexpr (std::is_floating_point_v<T>) return T(v);
  else return T(typename T::value_type(v), typename T::value_type(std::cos(0.11 * double(i + j))));
}

template <class T>
std::vector<T> filled(index_t rows, index_t cols, index_t ld, int which) {
  std::vector<T> out(static_cast<std::size_t>(ld * cols));
  for (index_t j = 0; j < cols; ++j)
    for (index_t i = 0; i < rows; ++i)
      out[static_cast<std::size_t>(i + j * ld)] = entry<T>(i, j, which);
  return out;
}

struct Shape {
  index_t m, n, k;
};

// op(A) op(B) over the shape, once plainly and once under a Progress whose poll answers
// `arrived_after` polls (never when negative); returns the polls made and checks C agrees.
template <class T>
std::int64_t run(Op opA, Op opB, Shape s, int arrived_after) {
  const index_t lda = (opA == Op::N ? s.m : s.k) + 3, ldb = (opB == Op::N ? s.k : s.n) + 1,
                ldc = s.m + 2;
  const auto A = filled<T>(opA == Op::N ? s.m : s.k, opA == Op::N ? s.k : s.m, lda, 1);
  const auto B = filled<T>(opB == Op::N ? s.k : s.n, opB == Op::N ? s.n : s.k, ldb, 2);
  auto C = filled<T>(s.m, s.n, ldc, 3), ref = C;
  const T alpha(0.75), beta(-1.25);
  blas::gemm(opA, opB, s.m, s.n, s.k, alpha, A.data(), lda, B.data(), ldb, beta, ref.data(), ldc);
  int calls = 0;
  const std::int64_t before = blas::progress_polls();
  {
    blas::Progress progress([&] { return arrived_after >= 0 && ++calls > arrived_after; });
    blas::gemm(opA, opB, s.m, s.n, s.k, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
  }
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < C.size(); ++i) {
    err = std::max(err, double(std::abs(C[i] - ref[i])));
    norm = std::max(norm, double(std::abs(ref[i])));
  }
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  EXPECT_LE(err, 4.0 * double(s.k) * eps * std::max(norm, 1.0));
  return blas::progress_polls() - before;
}

// Blocks along the longer side of C: one poll before the first block and one between blocks.
index_t blocks(Shape s, bool complex) {
  const index_t across = std::min(s.m, s.n), len = std::max(s.m, s.n);
  const double per = (complex ? 8.0 : 2.0) * double(across) * double(s.k);
  const blas::Blocking b = blas::blocking();
  const index_t w = std::max(b.min_width, static_cast<index_t>(double(b.flops) / per));
  return (len + w - 1) / w;
}

template <class T>
void every_op_pair(Shape s) {
  constexpr bool complex = !std::is_floating_point_v<T>;
  const Op ops[] = {Op::N, Op::T, Op::C};
  for (Op a : ops)
    for (Op b : ops) {
      SCOPED_TRACE(::testing::Message()
                   << "op " << int(a) << int(b) << " " << s.m << "x" << s.n << "x" << s.k);
      EXPECT_EQ(run<T>(a, b, s, -1), blocks(s, complex));  // never arrives
      EXPECT_EQ(run<T>(a, b, s, 1), 2);  // arrives after the first block: the rest at once
    }
}

TEST(BlasProgress, BlocksAgreeWithOneCallEveryTypeAndOp) {
  const blas::Blocking saved = blas::blocking();
  blas::set_blocking({1 << 16, 16});     // small blocks: small products are cut
  every_op_pair<double>({40, 130, 50});  // wide: blocks of columns
  every_op_pair<double>({130, 40, 50});  // tall: blocks of rows
  every_op_pair<float>({130, 40, 50});
  every_op_pair<std::complex<float>>({30, 90, 20});
  every_op_pair<std::complex<double>>({90, 30, 20});
  blas::set_blocking(saved);
  every_op_pair<double>({300, 1000, 600});  // the default blocks
}

TEST(BlasProgress, SmallProductsAndArrivedMessagesMakeOneCall) {
  EXPECT_EQ(run<double>(Op::N, Op::N, {64, 64, 64}, -1), 0);      // too small to cut
  EXPECT_EQ(run<double>(Op::N, Op::N, {100, 128, 8192}, -1), 0);  // no side past one block
  EXPECT_EQ(run<double>(Op::N, Op::N, {512, 512, 512}, 0), 1);    // arrived at the first poll
}

TEST(BlasProgress, BlockingIsSetAndEmptyBlocksAreRefused) {
  const blas::Blocking saved = blas::blocking();
  blas::set_blocking({1 << 12, 8});
  EXPECT_EQ(run<double>(Op::N, Op::T, {40, 30, 20}, -1), blocks({40, 30, 20}, false));
  EXPECT_THROW(blas::set_blocking({0, 8}), InvalidArgument);
  EXPECT_THROW(blas::set_blocking({1 << 12, 0}), InvalidArgument);
  blas::set_blocking(saved);
  EXPECT_EQ(blas::blocking().flops, saved.flops);
}

TEST(BlasProgress, ScopesNestAndAnOffScopeDoesNothing) {
  EXPECT_EQ(blas::Progress::current(), nullptr);
  {
    blas::Progress outer([] { return false; });
    EXPECT_EQ(blas::Progress::current(), &outer);
    {
      blas::Progress off([] { return false; }, false);
      EXPECT_EQ(blas::Progress::current(), &outer);
      EXPECT_TRUE(off.poll());  // off: nothing is awaited
    }
    {
      int inner_polls = 0;
      blas::Progress inner([&] { return ++inner_polls >= 2; });
      EXPECT_EQ(blas::Progress::current(), &inner);
      EXPECT_FALSE(inner.poll());
      EXPECT_TRUE(inner.poll());
      EXPECT_TRUE(inner.poll());  // arrived: not asked again
      EXPECT_EQ(inner_polls, 2);
    }
    EXPECT_EQ(blas::Progress::current(), &outer);
  }
  EXPECT_EQ(blas::Progress::current(), nullptr);
}

}  // namespace
}  // namespace shardmm
