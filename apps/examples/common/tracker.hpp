// Per-operation accounting of one step of an example program: wall time, time spent in
// communication, words received by this rank (from GemmReport / RedistStats) beside the words
// the guide's formula predicts, averaged over the timed repetitions.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/util.hpp"

namespace shardmm::examples {

/// One operation of a step: what it computes, the collectives it needs, and the words a rank
/// receives according to the guide's formula (docs/EXAMPLES.md).
struct Step {
  std::string name;
  std::string collectives = "none";
  double formula_words = 0;
};

class Tracker {
 public:
  explicit Tracker(std::size_t element_size) : elem_(element_size) {}

  /// shardmm::gemm, recorded under `s`: communication = comm wait + redistribution time.
  template <Scalar T>
  GemmReport gemm(const Step& s, Op opA, Op opB, T alpha, const DistMatrix<T>& A,
                  const DistMatrix<T>& B, T beta, DistMatrix<T>& C, const Options& o) {
    GemmReport r = shardmm::gemm(opA, opB, alpha, A, B, beta, C, o);
    record(s, r.seconds_total, r.seconds_comm + r.seconds_redist, r.bytes_received);
    return r;
  }
  /// dst <- src through shardmm::redistribute (an AllGather, ReduceScatter, ... by layouts).
  template <Scalar T>
  RedistStats move(const Step& s, const DistMatrix<T>& src, DistMatrix<T>& dst) {
    const double t0 = now_seconds();
    const RedistStats r = redistribute(src, dst);
    const double dt = now_seconds() - t0;
    record(s, dt, dt, r.bytes_received);
    return r;
  }
  /// A local (elementwise) operation: timed, moves nothing.
  template <class F>
  void local(const Step& s, F&& f) {
    const double t0 = now_seconds();
    f();
    record(s, now_seconds() - t0, 0, 0);
  }
  /// Adds to the entry named s.name (created on first use; the first Step's formula stays).
  void record(const Step& s, double seconds, double comm_seconds, std::int64_t bytes_received);
  void next_rep() { ++reps_; }
  void reset();

  [[nodiscard]] double seconds_per_rep() const;
  [[nodiscard]] double comm_seconds_per_rep() const;
  [[nodiscard]] double words_per_rep() const;
  /// "operation: words vs formula" for every operation whose words received per step differ
  /// from its formula by more than `tol` (empty: all match).
  [[nodiscard]] std::string words_mismatch(double tol) const;
  /// The per-operation table and totals (call on one rank; these are that rank's numbers).
  void print(const std::string& title) const;
  [[nodiscard]] nlohmann::json to_json() const;

 private:
  struct Entry {
    Step step;
    double seconds = 0, comm = 0, words = 0;
  };
  [[nodiscard]] double reps() const { return reps_ > 0 ? reps_ : 1; }
  std::vector<Entry> entries_;  // in first-seen order
  std::size_t elem_;
  int reps_ = 0;
};

/// Collective: whether every rank's words equal the formulas (Tracker::words_mismatch, half a
/// word of slack for integer byte counts); rank 0 prints the verdict and the first mismatch
/// seen on any rank under `tag` ("verify" / "check").
bool words_match(const Tracker& tr, const Mesh& mesh, const std::string& tag);

}  // namespace shardmm::examples
