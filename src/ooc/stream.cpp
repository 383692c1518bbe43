// The streamed schedule. The result is computed as D, column-major: D = C when the output is
// in Fortran order, D = C^T (= op(B)^T op(A)^T) in C order, so a D block is exactly the
// output's sub-block in file order. D = alpha opL(L) opR(R) + beta C0 with L, R the files of A
// and B (swapped for C^T). D's blocks are dealt round-robin; every rank runs the same number
// of steps (block slots x k-panels, empty where it has no block) so the collective reads and
// writes match. Step s reads panel s+1 (the other slot) while panel s multiplies.
#include <algorithm>
#include <chrono>
#include <vector>

#include "blas/blas.hpp"
#include "comm/agree.hpp"
#include "comm/mpi_check.hpp"
#include "core/instantiate.hpp"
#include "io/file_transfer.hpp"
#include "ooc/output.hpp"
#include "ooc/stream.hpp"
#include "shardmm/error.hpp"
#include "trace/trace.hpp"

namespace shardmm::ooc {
namespace {

// op on a column-major buffer: BLAS's three and a conjugate without transpose.
enum class Eff { N, T, C, Conj };

Eff flip(Eff e) {  // op(X^T) in terms of X
  switch (e) {
    case Eff::N: return Eff::T;
    case Eff::T: return Eff::N;
    case Eff::C: return Eff::Conj;
    case Eff::Conj: return Eff::C;
  }
  return e;
}

Eff eff(Op op) { return op == Op::N ? Eff::N : op == Op::T ? Eff::T : Eff::C; }

struct Side {
  const MatrixFile* file = nullptr;
  Eff op = Eff::N;  // applied to the stored matrix
  [[nodiscard]] bool stored_transposed() const { return op == Eff::T || op == Eff::C; }
};

index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

template <Scalar T>
class Streamer {
 public:
  Streamer(const Job& job, FileGemmReport& rep) : job_(job), rep_(rep) {
    const OocPlan& p = job.plan;
    trans_ = !job.out.fortran_order;
    L_ = trans_ ? Side{&job.B, flip(eff(job.opB))} : Side{&job.A, eff(job.opA)};
    R_ = trans_ ? Side{&job.A, flip(eff(job.opA))} : Side{&job.B, eff(job.opB)};
    md_ = trans_ ? p.n : p.m, nd_ = trans_ ? p.m : p.n;
    bm_ = trans_ ? p.bn : p.bm, bn_ = trans_ ? p.bm : p.bn;
    tm_ = ceil_div(md_, bm_), tn_ = ceil_div(nd_, bn_);
    panels_ = ceil_div(p.k, p.kb);
    ranks_ = comm::comm_size(job.comm), me_ = comm::comm_rank(job.comm);
    slots_ = ceil_div(tm_ * tn_, ranks_);
    staging_ = job.with_c0 && job.C0.fortran_order != job.out.fortran_order;
    alpha_ = convert(job.alpha), beta_ = convert(job.beta);
  }

  void run() {
    comm::agreed(job_.comm, "out-of-core buffers", [&] {
      d_.resize(static_cast<std::size_t>(bm_ * bn_));
      if (staging_) stage_.resize(d_.size());
      for (auto& b : lbuf_) b.resize(static_cast<std::size_t>(bm_ * job_.plan.kb));
      for (auto& b : rbuf_) b.resize(static_cast<std::size_t>(bn_ * job_.plan.kb));
    });
    auto lr = make_reader(job_.settings.io, *L_.file, job_.comm);
    auto rr = make_reader(job_.settings.io, *R_.file, job_.comm);
    std::unique_ptr<PanelReader> cr;
    if (job_.with_c0) cr = make_reader(job_.settings.io, job_.C0, job_.comm);
    OutputFile out(job_.comm, job_.out);
    const index_t steps = slots_ * panels_;
    if (steps > 0) start(0, *lr, *rr);
    std::string local, err;  // this rank's first error; the agreed one
    for (index_t s = 0; s < steps && err.empty(); ++s) {
      const index_t slot = s / panels_, panel = s % panels_;
      if (panel == 0) local = first_of(local, load_c0(slot, cr.get()));
      if (s + 1 < steps) start(s + 1, *lr, *rr);
      local = first_of(local, multiply(s, *lr, *rr));
      if (panel + 1 < panels_) continue;
      const auto t = Clock::now();
      local = first_of(local, out.write(out_sub(block_of(slot)), d_.data()));
      rep_.io_wait_seconds += since(t);
      err = io::first_error(job_.comm, local);  // every rank stops at the same block
      if (job_.settings.progress)
        job_.settings.progress(std::min((slot + 1) * ranks_, tm_ * tn_), tm_ * tn_,
                               job_.settings.progress_user);
    }
    if (!err.empty()) throw IoError("out-of-core gemm: " + err);  // readers, out: closed
    rep_.bytes_read = lr->bytes() + rr->bytes() + (cr ? cr->bytes() : 0);
    rep_.bytes_written = out.bytes();
    out.publish();
  }

 private:
  static T convert(std::complex<double> v) {
    if constexpr (is_complex_v<T>)
      return T(static_cast<real_t<T>>(v.real()), static_cast<real_t<T>>(v.imag()));
    else return static_cast<T>(v.real());
  }
  static std::string first_of(const std::string& a, const std::string& b) {
    return a.empty() ? b : a;
  }

  // This rank's D block in slot `slot`: [i0, i1) x [j0, j1), or empty.
  [[nodiscard]] Sub block_of(index_t slot) const {
    const index_t b = slot * ranks_ + me_;
    if (b >= tm_ * tn_) return {};
    const index_t bi = b % tm_, bj = b / tm_;
    return {bi * bm_, std::min(md_, (bi + 1) * bm_), bj * bn_, std::min(nd_, (bj + 1) * bn_)};
  }
  // D's block as a sub-block of the stored m x n result (transposed for C order).
  [[nodiscard]] Sub out_sub(const Sub& d) const {
    if (d.elems() == 0) return {};
    return trans_ ? Sub{d.c0, d.c1, d.r0, d.r1} : d;
  }
  [[nodiscard]] index_t k_end(index_t panel) const {
    return std::min(job_.plan.k, (panel + 1) * job_.plan.kb);
  }

  // Starts step s's reads: the L panel (D rows x k range) and the R panel (k range x D cols).
  void start(index_t s, PanelReader& lr, PanelReader& rr) {
    const Sub d = block_of(s / panels_);
    const index_t k0 = (s % panels_) * job_.plan.kb, k1 = k_end(s % panels_);
    Sub l, r;
    if (d.elems() > 0) {
      l = L_.stored_transposed() ? Sub{k0, k1, d.r0, d.r1} : Sub{d.r0, d.r1, k0, k1};
      r = R_.stored_transposed() ? Sub{d.c0, d.c1, k0, k1} : Sub{k0, k1, d.c0, d.c1};
    }
    const int slot = static_cast<int>(s % 2);
    lr.start(slot, l, lbuf_[slot].data());
    rr.start(slot, r, rbuf_[slot].data());
  }

  // Waits for step s's panels and accumulates D += alpha opL opR.
  std::string multiply(index_t s, PanelReader& lr, PanelReader& rr) {
    const trace::Span step("panel", trace::Cat::Step, s);  // step s: this rank's block x k-panel
    const int slot = static_cast<int>(s % 2);
    auto t = Clock::now();
    std::string err = [&] {
      trace::Span reading("read wait", trace::Cat::Wait);
      if (reading.seen()) reading.blocked("MPI_Wait", "the panels' collective reads", job_.comm);
      std::string e = lr.wait(slot);
      return first_of(e, rr.wait(slot));
    }();
    rep_.io_wait_seconds += since(t);
    const Sub d = block_of(s / panels_);
    if (d.elems() == 0 || !err.empty()) return err;
    t = Clock::now();
    const index_t mb = d.r1 - d.r0, nb = d.c1 - d.c0,
                  kb = k_end(s % panels_) - (s % panels_) * job_.plan.kb;
    index_t ldl = 0, ldr = 0;
    const Op ol = buffer_op(L_, lbuf_[slot], mb, kb, ldl);
    const Op orr = buffer_op(R_, rbuf_[slot], kb, nb, ldr);
    blas::gemm(ol, orr, mb, nb, kb, alpha_, lbuf_[slot].data(), ldl, rbuf_[slot].data(), ldr, T(1),
               d_.data(), std::max<index_t>(mb, 1));
    rep_.compute_seconds += since(t);
    return "";
  }

  // The BLAS op and leading dimension of a panel buffer holding the stored sub-block (in the
  // file's order) of a rows x cols panel; a conjugate without transpose is applied in place.
  static Op buffer_op(const Side& side, std::vector<T>& buf, index_t rows, index_t cols,
                      index_t& ld) {
    const bool st = side.stored_transposed();
    const index_t srows = st ? cols : rows, scols = st ? rows : cols;  // stored sub-block
    Eff e = side.file->fortran_order ? side.op : flip(side.op);
    ld = std::max<index_t>(side.file->fortran_order ? srows : scols, 1);
    if (e == Eff::Conj) {
      if constexpr (is_complex_v<T>)
        for (index_t i = 0; i < rows * cols; ++i) buf[i] = std::conj(buf[i]);
      e = Eff::N;
    }
    return e == Eff::N ? Op::N : e == Eff::T ? Op::T : Op::C;
  }

  // Slot start: D's block <- beta C0 (read through `cr`) or zero.
  std::string load_c0(index_t slot, PanelReader* cr) {
    const Sub d = block_of(slot);
    const index_t mb = d.r1 - d.r0, nb = d.c1 - d.c0;
    if (!cr) {
      std::fill(d_.begin(), d_.end(), T(0));
      return "";
    }
    const auto t = Clock::now();
    cr->start(0, out_sub(d), staging_ ? stage_.data() : d_.data());
    std::string err = cr->wait(0);
    rep_.io_wait_seconds += since(t);
    if (staging_)  // stage_ holds D's block row-major
      for (index_t j = 0; j < nb; ++j)
        for (index_t i = 0; i < mb; ++i) d_[i + j * mb] = stage_[i * nb + j];
    blas::scale(mb, nb, beta_, d_.data(), std::max<index_t>(mb, 1));
    return err;
  }

  const Job& job_;
  FileGemmReport& rep_;
  bool trans_ = false, staging_ = false;
  Side L_, R_;
  index_t md_ = 0, nd_ = 0, bm_ = 0, bn_ = 0, tm_ = 0, tn_ = 0, panels_ = 0, slots_ = 0;
  int ranks_ = 1, me_ = 0;
  T alpha_{}, beta_{};
  std::vector<T> d_, stage_, lbuf_[2], rbuf_[2];
};

}  // namespace

template <Scalar T>
void stream_gemm(const Job& job, FileGemmReport& report) {
  Streamer<T>(job, report).run();
}

#define SHARDMM_OOC_STREAM(T) template void stream_gemm<T>(const Job&, FileGemmReport&);
SHARDMM_FOR_EACH_SCALAR(SHARDMM_OOC_STREAM)
#undef SHARDMM_OOC_STREAM

}  // namespace shardmm::ooc
