// A streamed product's block and panel buffers: anonymous mappings that ask for transparent
// huge pages (madvise). Their first touch then faults once per 2 MiB instead of once per
// 4 KiB: on a virtual machine whose page faults trap to the hypervisor, 620 MiB of 4 KiB
// buffers took 1.8 s to touch. Buffers under 2 MiB keep 4 KiB pages. Zero-filled, like
// std::vector's.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>

namespace shardmm::ooc {

template <class T>
class Buffer {
 public:
  Buffer() = default;
  ~Buffer() { release(); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&&) = delete;
  Buffer& operator=(Buffer&&) = delete;

  /// n elements (zero), dropping what was held; throws std::bad_alloc when the map fails.
  void resize(std::size_t n) {
    release();
    if (n == 0) return;
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    const bool huge = n * sizeof(T) >= kHuge;  // a small buffer keeps 4 KiB pages
    const std::size_t unit = huge ? kHuge : 4096;
    bytes_ = (n * sizeof(T) + unit - 1) / unit * unit;
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      bytes_ = 0;
      throw std::bad_alloc();
    }
#ifdef MADV_HUGEPAGE
    if (huge) (void)::madvise(p, bytes_, MADV_HUGEPAGE);  // a hint: without THP, 4 KiB pages
#endif
    data_ = static_cast<T*>(p), size_ = n;
  }
  [[nodiscard]] T* data() const { return data_; }
  [[nodiscard]] std::size_t size() const { return size_; }
  T& operator[](std::size_t i) const { return data_[i]; }

 private:
  void release() {
    if (data_) ::munmap(data_, bytes_);
    data_ = nullptr, size_ = 0, bytes_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0, bytes_ = 0;
};

}  // namespace shardmm::ooc
