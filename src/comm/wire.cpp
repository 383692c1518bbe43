#include "comm/wire.hpp"

#include <algorithm>
#include <cstring>

#include "shardmm/half.hpp"

namespace shardmm::comm {
namespace {
thread_local Wire g_wire = Wire::F32;
thread_local bool g_operand_moves = false;
// Staging buffers not lent out, largest last.
thread_local std::vector<std::unique_ptr<std::vector<std::uint16_t>>> g_free;

template <class H>
void narrow_as(const float* in, std::uint16_t* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = H(in[i]).bits;
}
template <class H>
void widen_as(const std::uint16_t* in, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = float(H::from_bits(in[i]));
}
}  // namespace

Wire wire() { return g_wire; }
WireScope::WireScope(Wire w) : saved_(g_wire) { g_wire = w; }
WireScope::~WireScope() { g_wire = saved_; }

OperandMoves::OperandMoves() : saved_(g_operand_moves) { g_operand_moves = true; }
OperandMoves::~OperandMoves() { g_operand_moves = saved_; }
bool OperandMoves::open() { return g_operand_moves; }

Staging::Staging(std::int64_t count) {
  const auto n = static_cast<std::size_t>(std::max<std::int64_t>(count, 1));
  auto fits = std::find_if(g_free.begin(), g_free.end(), [&](auto& b) { return b->size() >= n; });
  if (fits == g_free.end() && !g_free.empty()) fits = g_free.end() - 1;  // grow the largest
  if (fits != g_free.end()) {
    buf_ = std::move(*fits);
    g_free.erase(fits);
  } else {
    buf_ = std::make_unique<std::vector<std::uint16_t>>();
  }
  if (buf_->size() < n) buf_->resize(n);
}

Staging::~Staging() {
  if (!buf_) return;
  const auto at = std::find_if(g_free.begin(), g_free.end(),
                               [&](auto& b) { return b->size() >= buf_->size(); });
  g_free.insert(at, std::move(buf_));
}

void narrow(Wire w, const float* in, std::uint16_t* out, std::int64_t n) {
  if (w == Wire::BF16) narrow_as<bf16>(in, out, n);
  else narrow_as<f16>(in, out, n);
}

void widen(Wire w, const std::uint16_t* in, float* out, std::int64_t n) {
  if (w == Wire::BF16) widen_as<bf16>(in, out, n);
  else widen_as<f16>(in, out, n);
}

void widen_in_place(Wire w, float* buf, std::int64_t n) {
  // Element i's 16 bits sit at byte 2i, its float goes to byte 4i: walking down, the float
  // written at 4i only covers 16-bit elements 2i and 2i + 1, already widened (or i itself).
  auto* bytes = reinterpret_cast<unsigned char*>(buf);
  for (std::int64_t i = n - 1; i >= 0; --i) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, bytes + 2 * i, sizeof bits);
    const float value =
        w == Wire::BF16 ? float(bf16::from_bits(bits)) : float(f16::from_bits(bits));
    std::memcpy(bytes + 4 * i, &value, sizeof value);
  }
}

}  // namespace shardmm::comm
