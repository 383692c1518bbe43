#include "memory/workspace.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <new>

#include "shardmm/error.hpp"
#include "trace/trace.hpp"

namespace shardmm::memory {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::array<Bytes, static_cast<std::size_t>(Slot::Count)>& slots() {
  static std::array<Bytes, static_cast<std::size_t>(Slot::Count)> s;
  return s;
}

// Memory lent to a slot (Lend): not the pool's, so not counted in held_bytes().
std::array<Bytes, static_cast<std::size_t>(Slot::Count)>& lent() {
  static std::array<Bytes, static_cast<std::size_t>(Slot::Count)> s;
  return s;
}

}  // namespace

Lend::Lend(Slot slot, void* ptr, std::size_t bytes)
    : slot_(slot), before_(lent()[static_cast<std::size_t>(slot)]) {
  lent()[static_cast<std::size_t>(slot)] = {ptr, ptr ? bytes : 0};
}

Lend::~Lend() { lent()[static_cast<std::size_t>(slot_)] = before_; }

Bytes allocate(std::size_t bytes) {
  // Large buffers: 2 MiB aligned and marked for transparent huge pages, so first touch costs
  // one fault per 2 MiB instead of one per 4 KiB (about 14 us each on these VMs).
  const std::size_t align = bytes >= kHugePage ? kHugePage : 64;
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (!p)
    throw OutOfMemory("cannot allocate " + std::to_string(rounded) +
                      " bytes (a work buffer or a matrix tile)");
  if (align == kHugePage) (void)madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failure is fine
  return {p, rounded};
}

void* get_bytes(Slot slot, std::size_t bytes) {
  const Bytes& l = lent()[static_cast<std::size_t>(slot)];
  if (l.size > 0 && l.size >= bytes) return l.ptr;
  Bytes& b = slots()[static_cast<std::size_t>(slot)];
  if (b.size >= bytes) return b.ptr;
  std::free(b.ptr);
  b = {};
  b = allocate(bytes);
  trace::counter("workspace bytes", static_cast<double>(held_bytes()));  // the pool grew
  return b.ptr;
}

std::size_t held_bytes() {
  std::size_t total = 0;
  for (const auto& b : slots()) total += b.size;
  return total;
}

std::size_t held_bytes(Slot slot) { return slots()[static_cast<std::size_t>(slot)].size; }

void release() {
  for (auto& b : slots()) {
    std::free(b.ptr);
    b = {};
  }
}

}  // namespace shardmm::memory
