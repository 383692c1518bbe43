// gtest main for MPI tests. Every rank runs every test; rank 0 prints gtest's output. After
// each test the failure messages of all ranks are gathered to rank 0 and printed as
// "[rank r/P] file:line: message". Every rank exits with the same code (failed anywhere -> 1).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

class GatherFailures : public ::testing::EmptyTestEventListener {
 public:
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    pending_ += std::string(r.file_name() ? r.file_name() : "?") + ":" +
                std::to_string(r.line_number()) + ": " + r.summary() + "\n";
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int len = static_cast<int>(pending_.size());
    std::vector<int> lens(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[static_cast<std::size_t>(r)] = total;
      total += lens[static_cast<std::size_t>(r)];
    }
    std::string all(static_cast<std::size_t>(rank == 0 ? total : 0), '\0');
    MPI_Gatherv(pending_.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    if (rank == 0) {
      for (int r = 0; r < size; ++r) {
        const auto n = static_cast<std::size_t>(lens[static_cast<std::size_t>(r)]);
        if (n == 0) continue;
        std::string text =
            all.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]), n);
        std::printf("[rank %d/%d] %s.%s failed:\n", r, size, info.test_suite_name(), info.name());
        std::size_t b = 0;
        while (b < text.size()) {
          const std::size_t e = text.find('\n', b);
          std::printf("[rank %d/%d]   %s\n", r, size, text.substr(b, e - b).c_str());
          b = e + 1;
        }
      }
      (void)std::fflush(stdout);
    }
    pending_.clear();
  }

 private:
  std::string pending_;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) delete listeners.Release(listeners.default_result_printer());
  auto* gather = new GatherFailures;
  listeners.Append(gather);
  const int local = RUN_ALL_TESTS();
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && global != 0) std::printf("MPI test FAILED on at least one of %d ranks\n", size);
  MPI_Finalize();
  return global != 0 ? 1 : 0;
}
