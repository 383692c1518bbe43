#include "memory/workspace.hpp"

#include <array>
#include <cstdlib>
#include <new>

#include "shardmm/error.hpp"

namespace shardmm::memory {
namespace {

struct Block {
  void* ptr = nullptr;
  std::size_t size = 0;
};

std::array<Block, static_cast<std::size_t>(Slot::Count)>& slots() {
  static std::array<Block, static_cast<std::size_t>(Slot::Count)> s;
  return s;
}

}  // namespace

void* get_bytes(Slot slot, std::size_t bytes) {
  Block& b = slots()[static_cast<std::size_t>(slot)];
  if (b.size >= bytes) return b.ptr;
  std::free(b.ptr);
  b = {};
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p)
    throw OutOfMemory("workspace: cannot allocate " + std::to_string(rounded) + " bytes");
  b = {p, rounded};
  return p;
}

std::size_t held_bytes() {
  std::size_t total = 0;
  for (const auto& b : slots()) total += b.size;
  return total;
}

void release() {
  for (auto& b : slots()) {
    std::free(b.ptr);
    b = {};
  }
}

}  // namespace shardmm::memory
