// How much of a file the kernel's page cache holds: the out-of-core planner prices reads of
// cached bytes as copies, the rest at the disk's rate.
#pragma once

#include <cstdint>
#include <string>

namespace shardmm::io {

/// Bytes of [offset, offset + bytes) of the file at `path` resident in the page cache
/// (mincore(2) over a mapping that reads nothing). 0 when the file cannot be opened or mapped
/// (a pipe, a file system without page-cache pages): the planner then assumes the disk.
std::int64_t cached_bytes(const std::string& path, std::int64_t offset, std::int64_t bytes);

/// Bytes of memory this node could give the page cache without swapping (MemAvailable of
/// /proc/meminfo); 0 when unknown.
std::int64_t available_memory();

}  // namespace shardmm::io
