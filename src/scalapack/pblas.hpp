// What every PBLAS drop-in entry shares: PBLAS' argument checks agreed over the grid, the
// caller's local arrays as DistMatrix views of the submatrices, and the guarded body (no
// exception leaves an entry point; errors other than illegal arguments end the program as
// ScaLAPACK's fatal errors do).
#pragma once

#include <algorithm>
#include <cctype>
#include <climits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blas/blas.hpp"
#include "comm/wait.hpp"
#include "scalapack/descriptor.hpp"
#include "shardmm/dist_matrix.hpp"
#include "trace/call.hpp"

namespace shardmm::scalapack {

/// The first character of a CHARACTER argument, upper case (PBLAS' Mupcase).
inline char upper(const char* flag) {
  return static_cast<char>(std::toupper(static_cast<unsigned char>(flag[0])));
}

/// PBLAS' smallest code on this process (INT_MAX: none) and PBLAS' messages for every error
/// found here (PBLAS warns about each, then reports the smallest code). A code is
/// position * 100 for a scalar argument, position * 100 + entry for a descriptor entry.
struct Finding {
  int code = INT_MAX;
  std::vector<std::string> details;
  void add(int c, std::string detail) {
    code = std::min(code, c);
    details.push_back(std::move(detail));
  }
};

/// PBLAS' check of one CHARACTER argument, in its order (the first illegal one is reported):
/// when `f` holds no finding yet and `value` is none of `legal`, adds "Illegal NAME = value"
/// with `code`. True while `f` holds no finding.
inline bool check_flag(Finding& f, int code, const char* name, char value, std::string_view legal) {
  if (!f.details.empty()) return false;
  if (legal.find(value) == std::string_view::npos)
    f.add(code, std::string("Illegal ") + name + " = " + value);
  return f.details.empty();
}

/// The caller's IX, JX and DESCX of one matrix argument.
struct MatrixRef {
  const int* i;
  const int* j;
  const int* desc;
};

/// sub(X) = X(IX:, JX:) of rows x cols, its extents given by the scalars at argument positions
/// rows_pos and cols_pos, DESCX at desc_pos; `name` ("A") in PBLAS' messages.
inline MatrixArg matrix_arg(const char* name, MatrixRef x, int rows, int cols, int rows_pos,
                            int cols_pos, int desc_pos) {
  MatrixArg arg{normalized(x.desc), *x.i, *x.j, rows, cols, rows_pos, cols_pos, desc_pos};
  arg.name = name;
  return arg;
}

/// The same for an operand used as op(sub(X)) of rows x cols: when `transposed`, sub(X) itself
/// is cols x rows (its extents from the scalars the other way round).
inline MatrixArg op_matrix_arg(bool transposed, const char* name, MatrixRef x, int rows, int cols,
                               int rows_pos, int cols_pos, int desc_pos) {
  if (transposed) std::swap(rows, cols), std::swap(rows_pos, cols_pos);
  return matrix_arg(name, x, rows, cols, rows_pos, cols_pos, desc_pos);
}

/// Adds PB_Cchkmat's findings for each matrix argument, in order.
void check_matrices(const Grid& g, const std::vector<const MatrixArg*>& args, Finding& f);

/// The smallest code over the grid (one MPI_Allreduce; 0: legal), the messages staying with
/// the processes that found them. When illegal, reports it (report_illegal: PB_Cwarn for each
/// local message, then PB_Cabort with INFO = -code on every process) and returns true.
bool report_if_illegal(const Grid& g, const Mesh& mesh, const char* routine, Finding f);

/// Offset of sub(X)'s first local element in the caller's array (null stays null).
template <class T>
T* local_start(T* data, const SubMatrix& s, const std::vector<int>& me) {
  if (data == nullptr || s.row.local_size(me[0]) == 0 || s.col.local_size(me[1]) == 0) return data;
  return data + s.row.local_begin(me[0]) + s.col.local_begin(me[1]) * s.lld;
}

/// sub(C) <- beta sub(C) on this process's elements (beta == 0 writes zeros).
template <Scalar T>
void scale_local(const Mesh& mesh, const SubMatrix& s, T beta, T* c) {
  const auto& me = mesh.coords();
  blas::scale(s.row.local_size(me[0]), s.col.local_size(me[1]), beta, local_start(c, s, me), s.lld);
}

/// sub(X) as a DistMatrix: a view of the caller's local array in sub(X)'s own layout.
template <Scalar T>
DistMatrix<T> operand(const Mesh& mesh, const SubMatrix& s, const T* data) {
  const Layout L = sub_layout(mesh.shape(), s);
  const auto& me = mesh.coords();
  const index_t ld = std::max<index_t>({s.lld, L.local_rows(me), 1});
  return DistMatrix<T>::view(mesh, L, const_cast<T*>(local_start(data, s, me)), ld);
}

/// The body of an entry point: `run(grid, mesh)` on the grid of context `ctxt` (the context
/// of the descriptor at argument position `desc_pos`; a process outside that grid reports
/// -(desc_pos * 100 + CTXT_) as PBLAS does), traced as `routine`, every exception ending the
/// program through fatal().
template <class Run>
void guarded(const char* routine, int ctxt, int desc_pos, Run&& run) noexcept {
  const Grid g = grid_info(ctxt);
  try {
    if (!g.member()) return report_illegal(g, routine, desc_pos * 100 + kCtxt + 1);
    const Mesh mesh = grid_mesh(g);
    const comm::WaitScope waiting;                   // SHARDMM_WAIT
    const trace::Call traced(mesh.comm(), routine);  // its checks and its work, when traced
    run(g, mesh);
  } catch (const std::exception& e) {
    fatal(g, routine, e.what());
  } catch (...) {
    fatal(g, routine, "unknown exception");
  }
}

}  // namespace shardmm::scalapack
