// libFuzzer target: the .npy header parser must either return a header that is consistent
// with its input or throw IoError; it must never crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "shardmm/error.hpp"
#include "shardmm/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const shardmm::NpyHeader h = shardmm::parse_npy_header(bytes);
    if (h.rows < 0 || h.cols < 0 || h.data_offset > static_cast<std::int64_t>(size))
      __builtin_trap();
    // What we write must parse back to the same header.
    const std::string again = shardmm::make_npy_header(h.dtype, h.rows, h.cols, h.fortran_order);
    const shardmm::NpyHeader r = shardmm::parse_npy_header(again);
    if (r.rows != h.rows || r.cols != h.cols || r.dtype != h.dtype ||
        r.fortran_order != h.fortran_order)
      __builtin_trap();
  } catch (const shardmm::IoError&) {
  }
  return 0;
}
