// How the width of a rank-w update and the way it is cut change one core's DGEMM rate:
// C (m x n) += A (m x k) * B (k x n) done as k/w rank-w updates, each in 1, 2 or 4 column
// chunks, against one whole-k call. SUMMA's panel width and its k pieces (src/algo/summa.cpp,
// kKBlock) come from this. Run one copy per core at once, as the ranks do:
//   for r in 1 2; do OPENBLAS_NUM_THREADS=1 build/bench_panel_width 2048 4096 4096 & done; wait
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Best of three: C += A B as rank-w updates, each cut into `chunks` column ranges.
double rate(int m, int n, int k, int w, int chunks, const std::vector<double>& A,
            const std::vector<double>& B, std::vector<double>& C) {
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const double t0 = seconds();
    for (int k0 = 0; k0 < k; k0 += w) {
      const int kw = std::min(w, k - k0), ch = (n + chunks - 1) / chunks;
      for (int j0 = 0; j0 < n; j0 += ch)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, std::min(ch, n - j0), kw, 1.0,
                    &A[std::size_t(k0) * m], m, &B[k0 + std::size_t(j0) * k], k, 1.0,
                    &C[std::size_t(j0) * m], m);
    }
    best = std::min(best, seconds() - t0);
  }
  return 2.0 * m * n * k / best * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s m n k\n", argv[0]);
    return 2;
  }
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  if (m <= 0 || n <= 0 || k <= 0) {
    std::fprintf(stderr, "m, n and k must be positive\n");
    return 2;
  }
  std::vector<double> A(std::size_t(m) * k), B(std::size_t(k) * n), C(std::size_t(m) * n, 0.0);
  for (std::size_t i = 0; i < A.size(); ++i) A[i] = double(i % 7) * 0.1;
  for (std::size_t i = 0; i < B.size(); ++i) B[i] = double(i % 5) * 0.1;
  rate(m, n, k, k, 1, A, B, C);  // warm-up
  std::printf("whole k          %6.1f GFLOP/s\n", rate(m, n, k, k, 1, A, B, C));
  for (int w : {128, 256, 384, 512, 768, 1024})
    for (int chunks : {1, 2, 4})
      std::printf("w = %4d, %d chunk%s %6.1f GFLOP/s\n", w, chunks, chunks > 1 ? "s" : " ",
                  rate(m, n, k, w, chunks, A, B, C));
  return 0;
}
