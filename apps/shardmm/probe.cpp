// Matrix-vector products on distributed matrices: each primary replica multiplies its local
// tile by the matching slice of the replicated vector (one BLAS call); the partial results
// are summed over the mesh with one MPI_Allreduce of the full result vector.
#include "probe.hpp"

#include <cmath>
#include <complex>
#include <limits>
#include <random>

#include "mpi_util.hpp"
#include "shardmm/runtime.hpp"

namespace shardmm::cli {
namespace {

template <Scalar T>
std::vector<T> matvec(const DistMatrix<T>& M, Op op, const std::vector<T>& x) {
  const bool n = op == Op::N;
  std::vector<T> y(static_cast<std::size_t>(n ? M.rows() : M.cols()), T(0));
  if (!M.mesh().active()) return y;
  if (M.layout().is_primary(M.mesh().coords())) {
    const index_t in_len = n ? M.local_cols() : M.local_rows();
    const index_t out_len = n ? M.local_rows() : M.local_cols();
    std::vector<T> xs(static_cast<std::size_t>(in_len)), ys(static_cast<std::size_t>(out_len));
    for (index_t i = 0; i < in_len; ++i) xs[i] = x[n ? M.global_col(i) : M.global_row(i)];
    local_gemm(op, Op::N, out_len, 1, in_len, T(1), M.data(), M.ld(), xs.data(),
               std::max<index_t>(in_len, 1), T(0), ys.data(), std::max<index_t>(out_len, 1));
    for (index_t i = 0; i < out_len; ++i) y[n ? M.global_row(i) : M.global_col(i)] += ys[i];
  }
  allreduce_sum(y.data(), static_cast<index_t>(y.size()), M.mesh().comm());
  return y;
}

template <Scalar T>
double fro(const DistMatrix<T>& M) {
  double s = 0;
  if (M.mesh().active() && M.layout().is_primary(M.mesh().coords()))
    for (index_t j = 0; j < M.local_cols(); ++j)
      for (index_t i = 0; i < M.local_rows(); ++i)
        s += std::norm(std::complex<double>(M.local(i, j)));
  double total = 0;
  SHARDMM_CLI_MPI(MPI_Allreduce(&s, &total, 1, MPI_DOUBLE, MPI_SUM, M.mesh().comm()));
  return std::sqrt(total);
}

template <class T>
double norm2(const std::vector<T>& v) {
  double s = 0;
  for (const T& e : v) s += std::norm(std::complex<double>(e));
  return std::sqrt(s);
}

}  // namespace

template <Scalar T>
double probe_error(Op opA, Op opB, T alpha, const DistMatrix<T>& A, const DistMatrix<T>& B, T beta,
                   const DistMatrix<T>& C0, const DistMatrix<T>& C) {
  // The same probe vector on every rank and in every run: a fixed seed on purpose.
  std::mt19937_64 gen(12345);  // NOLINT(cert-msc51-cpp,bugprone-random-generator-seed)
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> x(static_cast<std::size_t>(C.cols()));
  for (auto& e : x) e = T(static_cast<real_t<T>>(u(gen)));
  const std::vector<T> Cx = matvec(C, Op::N, x);
  const std::vector<T> Bx = matvec(B, opB, x);
  const std::vector<T> ABx = matvec(A, opA, Bx);
  const std::vector<T> C0x = beta == T(0) ? std::vector<T>(Cx.size(), T(0)) : matvec(C0, Op::N, x);
  std::vector<T> diff(Cx.size());
  for (std::size_t i = 0; i < Cx.size(); ++i) diff[i] = Cx[i] - (alpha * ABx[i] + beta * C0x[i]);
  const index_t k = opA == Op::N ? A.cols() : A.rows();
  const double scale = (std::sqrt(double(k) + 2) * std::abs(alpha) * fro(A) * fro(B) +
                        2 * std::abs(beta) * fro(C0)) *
                       norm2(x);
  const double eps = std::numeric_limits<real_t<T>>::epsilon();
  const double num = norm2(diff);
  if (!std::isfinite(num)) return std::numeric_limits<double>::infinity();
  return num == 0 ? 0 : num / (scale * eps);
}

#define SHARDMM_INSTANTIATE(T)                                                             \
  template double probe_error<T>(Op, Op, T, const DistMatrix<T>&, const DistMatrix<T>&, T, \
                                 const DistMatrix<T>&, const DistMatrix<T>&);
SHARDMM_FOR_EACH_ARITHMETIC(SHARDMM_INSTANTIATE)
#undef SHARDMM_INSTANTIATE

}  // namespace shardmm::cli
