// The streamed schedule. The result is computed as D, column-major: D = C when the output is
// in Fortran order, D = C^T (= op(B)^T op(A)^T) in C order, so a D block is exactly the
// output's sub-block in file order. D = alpha opL(L) opR(R) + beta C0 with L, R the files of A
// and B (swapped for C^T). D's blocks are dealt round-robin (block_claims.hpp): with MPI-IO's
// collective reads every rank runs the same number of steps (block slots x k-panels, empty
// where it has no block) so the reads match; otherwise a rank that is done with its blocks
// takes the others' not yet started ones. Three things move at once: step s reads panel s+1 (the
// other read slot) while panel s multiplies, and the previous block is being written from the other
// D buffer.
#include <algorithm>
#include <chrono>
#include <vector>

#include "blas/blas.hpp"
#include "comm/agree.hpp"
#include "comm/mpi_check.hpp"
#include "core/instantiate.hpp"
#include "io/file_transfer.hpp"
#include "ooc/block_claims.hpp"
#include "ooc/buffer.hpp"
#include "ooc/output.hpp"
#include "ooc/panel_op.hpp"
#include "ooc/panel_slots.hpp"
#include "ooc/stream.hpp"
#include "shardmm/error.hpp"
#include "trace/trace.hpp"

namespace shardmm::ooc {
namespace {

index_t ceil_div(index_t a, index_t b) { return (a + b - 1) / b; }

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string first_of(const std::string& a, const std::string& b) { return a.empty() ? b : a; }

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
    ranks_ = comm::comm_size(job.comm);
    split_tail();
    slots_ = ceil_div(items_, ranks_);
    staging_ = job.with_c0 && job.C0.fortran_order != job.out.fortran_order;
    alpha_ = convert(job.alpha), beta_ = convert(job.beta);
  }

  void run() {
    auto t = Clock::now();
    allocate();
    auto lr = make_reader(job_.settings.io, *L_.file, job_.comm);
    auto rr = make_reader(job_.settings.io, *R_.file, job_.comm);
    if (job_.with_c0) cr_ = make_reader(job_.settings.io, job_.C0, job_.comm);
    BlockClaims claims(job_.comm, items_, !collective() && job_.settings.balance);
    OutputFile out(job_.comm, job_.out, job_.settings.direct_writes);
    rep_.open_seconds += since(t);
    lr_ = lr.get(), rr_ = rr.get(), out_ = &out, claims_ = &claims;
    const std::string err = stream();
    if (!err.empty()) throw IoError("out-of-core gemm: " + err);  // readers, out: closed
    rep_.bytes_read = read_bytes();
    rep_.bytes_written = out.bytes();
    rep_.bytes_written_direct = out.direct_bytes();
    t = Clock::now();
    rep_.sync_seconds = out.publish();
    rep_.rename_seconds = since(t) - rep_.sync_seconds;
    lr_ = rr_ = nullptr, out_ = nullptr, claims_ = nullptr;  // this function's locals
  }

 private:
  static T convert(std::complex<double> v) {
    if constexpr (is_complex_v<T>)
      return T(static_cast<real_t<T>>(v.real()), static_cast<real_t<T>>(v.imag()));
    else return static_cast<T>(v.real());
  }

  // The work items the ranks claim: D's blocks in order, the last P of them (one per rank)
  // cut into plan.tail_strips strips of columns each (the planner's choice, ooc_cost.cpp:
  // only when there are at least P blocks, each at least a column per strip wide). The ranks
  // end at most one item apart, so the wait at the end is a strip's GEMM, not a block's (in
  // core, 8192 x 2048 blocks left a rank waiting 0.5-2.1 s). A strip needs its block's panel of
  // L, which a rank computing the block's strips in a row keeps when k is one panel
  // (PanelSlots), and its columns of R. Item t0 + j is strip j / P of block t0 + j % P, so in
  // the round-robin deal each tail block's strips go to the block's owner, in order.
  void split_tail() {
    strips_ = std::max<index_t>(1, job_.plan.tail_strips);
    const index_t cut = strips_ > 1 ? ranks_ : 0;  // the blocks cut into strips
    tail0_ = tm_ * tn_ - cut;
    items_ = tm_ * tn_ + (strips_ - 1) * cut;
  }

  void allocate() {
    comm::agreed(job_.comm, "out-of-core buffers", [&] {
      const auto block = static_cast<std::size_t>(bm_ * bn_);
      for (auto& d : dbuf_) d.resize(block);
      if (staging_) stage_.resize(block);
      for (auto& b : lbuf_) b.resize(static_cast<std::size_t>(bm_ * job_.plan.kb));
      for (auto& b : rbuf_) b.resize(static_cast<std::size_t>(bn_ * job_.plan.kb));
    });
  }

  [[nodiscard]] std::int64_t read_bytes() const {
    return lr_->bytes() + rr_->bytes() + (cr_ ? cr_->bytes() : 0);
  }

  [[nodiscard]] bool collective() const { return job_.settings.io == IoMethod::MpiIo; }

  // Whether this rank has a step s: in the round-robin deal, every rank runs every block
  // slot's steps (empty ones included: the collective reads match, and so do the calls of the
  // progress callback); balanced, while it has blocks. `ahead`: asked a step early, to read
  // ahead; a block of another rank is taken only when needed, not a block early.
  bool more(index_t s, bool ahead = false) {
    if (!claims_->dynamic()) return s < slots_ * panels_;
    return block_id(s / panels_, !ahead) >= 0;
  }

  // Every step of every block slot; returns the agreed error ("" when all went well). With
  // collective reads (MPI-IO) the ranks agree after every block, so all stop at the same
  // block; otherwise nothing in the stream is collective, a rank that failed stops its work
  // (in the round-robin deal it still calls the progress callback at every slot, as the others
  // do) and the ranks agree once at the end: a per-block agreement made every block wait for the
  // slowest rank's (2 s of a 16 s run).
  std::string stream() {
    const bool collective = this->collective();
    index_t read = -1;  // the last step whose reads were started
    if (more(0)) timed_read_start(read = 0);
    std::string local, err;  // this rank's first error; the agreed one
    for (index_t s = 0; more(s) && err.empty(); ++s) {
      const index_t slot = s / panels_, panel = s % panels_;
      if (!collective && !local.empty()) {  // failed here: no more work
        if (claims_->dynamic()) break;
        if (panel + 1 == panels_) report_progress(slot);  // as the others do
        continue;
      }
      if (panel == 0) {
        if (slot >= 2) local = first_of(local, timed_wait_write(static_cast<int>(slot % 2)));
        local = first_of(local, begin_block(slot));
      }
      if (read < s) timed_read_start(read = s);  // a block taken at need: not read ahead
      if (more(s + 1, true)) timed_read_start(read = s + 1);
      local = first_of(local, multiply(s));
      if (panel + 1 < panels_) continue;
      finish_block(slot);
      if (collective) {
        const auto t = Clock::now();
        err = io::first_error(job_.comm, local);  // every rank stops at the same block
        rep_.agree_seconds += since(t);
      }
      report_progress(slot);
    }
    if (!err.empty()) return err;
    for (int w = 0; w < 2; ++w) local = first_of(local, timed_wait_write(w));
    const auto t = Clock::now();
    err = io::first_error(job_.comm, local);
    rep_.agree_seconds += since(t);
    if (err.empty() && claims_->dynamic()) report_progress(-1);  // every block is done
    return err;
  }

  // Blocks done as this rank sees them after its slot `slot` (-1: all): in the round-robin
  // deal every rank's slots so far; balanced, the blocks taken so far by all ranks.
  void report_progress(index_t slot) {
    if (!job_.settings.progress) return;
    FileGemmProgress p;
    p.blocks_total = items_;
    p.blocks_done = slot < 0             ? p.blocks_total
                    : claims_->dynamic() ? claims_->taken()
                                         : std::min((slot + 1) * ranks_, p.blocks_total);
    p.bytes_read = read_bytes();
    p.bytes_written = out_->bytes();
    p.seconds = since(job_.t0);
    job_.settings.progress(p, job_.settings.progress_user);
  }

  // The block (index into D's blocks, down the columns of blocks) this rank computes in slot
  // `slot`, or -1 (none; kLater: none of its own, ask again without `may_take`): claimed in
  // order, the first time a slot is asked for.
  index_t block_id(index_t slot, bool may_take = true) {
    while (static_cast<index_t>(blocks_.size()) <= slot) {
      const index_t b = claims_->next(may_take);
      if (b == BlockClaims::kLater) return b;
      blocks_.push_back(b);
    }
    return blocks_[static_cast<std::size_t>(slot)];
  }

  // This rank's D block (or tail strip, split_tail) in slot `slot`: [i0, i1) x [j0, j1), or
  // empty.
  Sub block_of(index_t slot) {
    const index_t item = block_id(slot);
    if (item < 0) return {};
    const bool strip = item >= tail0_;
    const index_t b = strip ? tail0_ + (item - tail0_) % ranks_ : item;
    const index_t bi = b % tm_, bj = b / tm_;
    Sub d{bi * bm_, std::min(md_, (bi + 1) * bm_), bj * bn_, std::min(nd_, (bj + 1) * bn_)};
    if (!strip) return d;
    const index_t part = (item - tail0_) / ranks_, width = d.c1 - d.c0;
    return {d.r0, d.r1, d.c0 + width * part / strips_, d.c0 + width * (part + 1) / strips_};
  }
  // D's block as a sub-block of the stored m x n result (transposed for C order).
  [[nodiscard]] Sub out_sub(const Sub& d) const {
    if (d.elems() == 0) return {};
    return trans_ ? Sub{d.c0, d.c1, d.r0, d.r1} : d;
  }
  // The buffer of slot `slot`'s D block: column-major, leading dimension its rows.
  [[nodiscard]] T* d_buffer(index_t slot) const { return dbuf_[slot % 2].data(); }
  [[nodiscard]] index_t k_end(index_t panel) const {
    return std::min(job_.plan.k, (panel + 1) * job_.plan.kb);
  }

  void timed_read_start(index_t s) {
    const auto t = Clock::now();
    start(s);
    rep_.read_wait_seconds += since(t);
  }

  // Starts step s's reads: the L panel (D rows x k range) and the R panel (k range x D cols).
  void start(index_t s) {
    const Sub d = block_of(s / panels_);
    const index_t k0 = (s % panels_) * job_.plan.kb, k1 = k_end(s % panels_);
    Sub l, r;
    if (d.elems() > 0) {
      l = L_.stored_transposed() ? Sub{k0, k1, d.r0, d.r1} : Sub{d.r0, d.r1, k0, k1};
      r = R_.stored_transposed() ? Sub{d.c0, d.c1, k0, k1} : Sub{k0, k1, d.c0, d.c1};
    }
    const int slot = static_cast<int>(s % 2);
    const bool read_l = lslots_.pick(s, l), read_r = rslots_.pick(s, r);
    lr_->start(slot, read_l ? l : Sub{}, lbuf_[lslots_.buffer(s)].data());  // empty: joins
    rr_->start(slot, read_r ? r : Sub{}, rbuf_[rslots_.buffer(s)].data());
  }

  // Waits for step s's panels and accumulates D += alpha opL opR (D <- alpha opL opR on the
  // block's first panel when no C0 was loaded: nothing to clear first).
  std::string multiply(index_t s) {
    const trace::Span step("panel", trace::Cat::Step, s);  // step s: this rank's block x k-panel
    const int slot = static_cast<int>(s % 2);
    auto t = Clock::now();
    std::string err = [&] {
      trace::Span reading("read wait", trace::Cat::Wait);
      if (reading.seen()) reading.blocked("MPI_Wait", "the panels' collective reads", job_.comm);
      std::string e = lr_->wait(slot);
      return first_of(e, rr_->wait(slot));
    }();
    rep_.read_wait_seconds += since(t);
    const Sub d = block_of(s / panels_);
    if (d.elems() == 0 || !err.empty()) return err;
    t = Clock::now();
    const index_t panel = s % panels_;
    const index_t mb = d.r1 - d.r0, nb = d.c1 - d.c0, kb = k_end(panel) - panel * job_.plan.kb;
    index_t ldl = 0, ldr = 0;
    T* const lb = lbuf_[lslots_.buffer(s)].data();
    T* const rb = rbuf_[rslots_.buffer(s)].data();
    const Op ol = buffer_op(L_, lb, mb, kb, ldl, lslots_.fresh(s));
    const Op orr = buffer_op(R_, rb, kb, nb, ldr, rslots_.fresh(s));
    const T beta = panel == 0 && !loaded_ ? T(0) : T(1);
    blas::gemm(ol, orr, mb, nb, kb, alpha_, lb, ldl, rb, ldr, beta, d_buffer(s / panels_),
               std::max<index_t>(mb, 1));
    rep_.compute_seconds += since(t);
    return "";
  }

  // Slot start: D's block goes to the free write buffer; with C0, D's block <- beta C0 (read
  // through cr_; every rank joins the collective read).
  std::string begin_block(index_t slot) {
    const Sub d = block_of(slot);
    const index_t mb = d.r1 - d.r0, nb = d.c1 - d.c0;
    T* const dst = d_buffer(slot);
    loaded_ = cr_ != nullptr;
    if (!cr_) return "";
    auto t = Clock::now();
    cr_->start(0, out_sub(d), staging_ ? stage_.data() : dst);
    std::string err = cr_->wait(0);
    rep_.read_wait_seconds += since(t);
    if (d.elems() == 0 || !err.empty()) return err;
    t = Clock::now();
    if (staging_)  // stage_ holds D's block row-major
      for (index_t j = 0; j < nb; ++j)
        for (index_t i = 0; i < mb; ++i) dst[i + j * mb] = stage_[i * nb + j];
    blas::scale(mb, nb, beta_, dst, std::max<index_t>(mb, 1));
    rep_.compute_seconds += since(t);
    return err;
  }

  // The block is final: hand it to the writer thread.
  void finish_block(index_t slot) {
    const Sub sub = out_sub(block_of(slot));
    const auto t = Clock::now();
    out_->start_write(static_cast<int>(slot % 2), sub, d_buffer(slot));
    rep_.write_wait_seconds += since(t);
  }

  std::string timed_wait_write(int w) {
    const auto t = Clock::now();
    std::string e = out_->wait_write(w);
    rep_.write_wait_seconds += since(t);
    return e;
  }

  const Job& job_;
  FileGemmReport& rep_;
  bool trans_ = false, staging_ = false, loaded_ = false;
  Side L_, R_;
  index_t md_ = 0, nd_ = 0, bm_ = 0, bn_ = 0, tm_ = 0, tn_ = 0, panels_ = 0, slots_ = 0;
  index_t tail0_ = 0, strips_ = 1, items_ = 0;  ///< split_tail
  int ranks_ = 1;
  T alpha_{}, beta_{};
  Buffer<T> dbuf_[2], stage_, lbuf_[2], rbuf_[2];
  PanelSlots lslots_, rslots_;
  PanelReader *lr_ = nullptr, *rr_ = nullptr;
  BlockClaims* claims_ = nullptr;
  std::vector<index_t> blocks_;  ///< block_id (work item) of each slot claimed so far
  std::unique_ptr<PanelReader> cr_;
  OutputFile* out_ = nullptr;
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
