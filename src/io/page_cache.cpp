// Page-cache residency of a file range: mmap it (PROT_READ, no MAP_POPULATE: nothing is read),
// ask mincore(2) which pages are resident, a window of 1 GiB at a time so that the vector of
// page flags stays small, and unmap. And how much memory the cache could have (/proc/meminfo).
#include "io/page_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace shardmm::io {
namespace {

constexpr std::int64_t kWindow = std::int64_t{1} << 30;

// Resident bytes of [off, off + len) of fd, off a multiple of the page size.
std::int64_t resident(int fd, std::int64_t off, std::int64_t len, std::int64_t page) {
  void* map = mmap(nullptr, static_cast<std::size_t>(len), PROT_READ, MAP_SHARED, fd, off);
  if (map == MAP_FAILED) return 0;
  std::vector<unsigned char> flags(static_cast<std::size_t>((len + page - 1) / page));
  std::int64_t n = 0;
  if (mincore(map, static_cast<std::size_t>(len), flags.data()) == 0)
    n = static_cast<std::int64_t>(
        std::count_if(flags.begin(), flags.end(), [](unsigned char f) { return (f & 1) != 0; }));
  munmap(map, static_cast<std::size_t>(len));
  return n * page;
}

}  // namespace

std::int64_t cached_bytes(const std::string& path, std::int64_t offset, std::int64_t bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || bytes <= 0) {
    if (fd >= 0) close(fd);
    return 0;
  }
  const std::int64_t page = sysconf(_SC_PAGESIZE);
  const std::int64_t first = offset / page * page, end = offset + bytes;
  std::int64_t n = 0;
  for (std::int64_t at = first; at < end; at += kWindow)
    n += resident(fd, at, std::min(kWindow, end - at), page);
  close(fd);
  return std::min(n, bytes);  // the first and last pages count whole
}

std::int64_t available_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib) {
    std::getline(in, unit);  // " kB"
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

}  // namespace shardmm::io
