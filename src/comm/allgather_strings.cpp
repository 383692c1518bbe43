// allgather_strings (include/shardmm/collective.hpp): what moves is one int per rank (the
// lengths, MPI_Allgather) and then the strings (MPI_Allgatherv), inside a trace::Call.
#include <climits>
#include <cstddef>

#include "comm/mpi_check.hpp"
#include "shardmm/collective.hpp"
#include "shardmm/error.hpp"
#include "trace/call.hpp"

namespace shardmm {

std::vector<std::string> allgather_strings(const Mesh& mesh, const std::string& mine,
                                           const char* name) {
  if (!mesh.active()) return {mine};
  if (mine.size() > static_cast<std::size_t>(INT_MAX))
    throw InvalidArgument(std::string(name) + ": " + std::to_string(mine.size()) +
                          " bytes to agree on; at most 2^31 - 1");
  const MPI_Comm comm = mesh.comm();
  trace::Call call(comm, name);
  const int P = comm::comm_size(comm);
  std::vector<int> sizes(static_cast<std::size_t>(P)), displs(static_cast<std::size_t>(P));
  const int len = static_cast<int>(mine.size());
  std::string all;
  {
    trace::Span span("agree", trace::Cat::Wait);  // where a missing rank leaves the others
    if (span.seen()) span.blocked("MPI_Allgather", "agree '" + std::string(name) + "'", comm);
    SHARDMM_MPI(MPI_Allgather(&len, 1, MPI_INT, sizes.data(), 1, MPI_INT, comm));
    long long total = 0;
    for (int r = 0; r < P; ++r) {
      displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
      total += sizes[static_cast<std::size_t>(r)];
    }
    if (total > INT_MAX)  // every rank sees the same sizes: every rank throws
      throw InvalidArgument(std::string(name) + ": " + std::to_string(total) +
                            " bytes to agree on in all; at most 2^31 - 1");
    all.resize(static_cast<std::size_t>(total));
    SHARDMM_MPI(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), sizes.data(), displs.data(),
                               MPI_CHAR, comm));
  }
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r)
    out.push_back(all.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]),
                             static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)])));
  call.done();
  return out;
}

}  // namespace shardmm
