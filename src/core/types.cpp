#include "shardmm/types.hpp"

#include <algorithm>
#include <cctype>

#include "shardmm/error.hpp"
#include "shardmm/options.hpp"

namespace shardmm {
namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::string to_string(Op op) {
  switch (op) {
    case Op::N: return "N";
    case Op::T: return "T";
    case Op::C: return "C";
  }
  return "?";
}

Op parse_op(std::string_view text) {
  const std::string t = lower(text);
  if (t == "n") return Op::N;
  if (t == "t") return Op::T;
  if (t == "c") return Op::C;
  throw InvalidArgument("unknown transpose op '" + std::string(text) + "' (use N, T or C)");
}

std::string to_string(Dtype dtype) {
  switch (dtype) {
    case Dtype::F32: return "f32";
    case Dtype::F64: return "f64";
    case Dtype::C64: return "c64";
    case Dtype::C128: return "c128";
    case Dtype::F16: return "f16";
    case Dtype::BF16: return "bf16";
  }
  return "?";
}

Dtype parse_dtype(std::string_view text) {
  const std::string t = lower(text);
  if (t == "f32" || t == "float32" || t == "s") return Dtype::F32;
  if (t == "f64" || t == "float64" || t == "d") return Dtype::F64;
  if (t == "c64" || t == "complex64" || t == "c") return Dtype::C64;
  if (t == "c128" || t == "complex128" || t == "z") return Dtype::C128;
  if (t == "f16" || t == "float16" || t == "h") return Dtype::F16;
  if (t == "bf16" || t == "bfloat16") return Dtype::BF16;
  throw InvalidArgument("unknown dtype '" + std::string(text) +
                        "' (use f32, f64, c64, c128, f16 or bf16)");
}

std::size_t dtype_size(Dtype dtype) {
  switch (dtype) {
    case Dtype::F16:
    case Dtype::BF16: return 2;
    case Dtype::F32: return 4;
    case Dtype::F64:
    case Dtype::C64: return 8;
    case Dtype::C128: return 16;
  }
  return 0;
}

std::string to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Auto: return "auto";
    case Algorithm::Local: return "local";
    case Algorithm::Summa: return "summa";
    case Algorithm::Cannon: return "cannon";
    case Algorithm::Ring: return "ring";
    case Algorithm::Sharded: return "sharded";
    case Algorithm::Gemm25D: return "25d";
    case Algorithm::Strassen: return "strassen";
  }
  return "?";
}

Algorithm parse_algorithm(std::string_view text) {
  const std::string t = lower(text);
  for (Algorithm a : {Algorithm::Auto, Algorithm::Local, Algorithm::Summa, Algorithm::Cannon,
                      Algorithm::Ring, Algorithm::Sharded, Algorithm::Gemm25D, Algorithm::Strassen})
    if (to_string(a) == t) return a;
  throw InvalidArgument("unknown algorithm '" + std::string(text) +
                        "' (auto, local, summa, cannon, ring, sharded, 25d, strassen)");
}

std::string to_string(Wire w) {
  switch (w) {
    case Wire::F32: return "f32";
    case Wire::BF16: return "bf16";
    case Wire::F16: return "f16";
  }
  return "?";
}

Wire parse_wire(std::string_view text) {
  const std::string t = lower(text);
  if (t == "f32" || t == "none") return Wire::F32;
  if (t == "bf16") return Wire::BF16;
  if (t == "f16") return Wire::F16;
  throw InvalidArgument("unknown wire format '" + std::string(text) + "' (use f32, bf16 or f16)");
}

std::string to_string(StrassenStep s) {
  switch (s) {
    case StrassenStep::Auto: return "auto";
    case StrassenStep::BreadthFirst: return "breadth-first";
    case StrassenStep::DepthFirst: return "depth-first";
  }
  return "?";
}

StrassenStep parse_strassen_step(std::string_view text) {
  std::string t = lower(text);
  std::replace(t.begin(), t.end(), '_', '-');
  for (StrassenStep s : {StrassenStep::Auto, StrassenStep::BreadthFirst, StrassenStep::DepthFirst})
    if (to_string(s) == t) return s;
  throw InvalidArgument("unknown Strassen step '" + std::string(text) +
                        "' (auto, breadth-first, depth-first)");
}

std::string to_string(Wait w) {
  switch (w) {
    case Wait::Auto: return "auto";
    case Wait::Spin: return "spin";
    case Wait::Sleep: return "sleep";
  }
  return "?";
}

Wait parse_wait(std::string_view text) {
  const std::string t = lower(text);
  if (t == "auto") return Wait::Auto;
  if (t == "spin") return Wait::Spin;
  if (t == "sleep") return Wait::Sleep;
  throw InvalidArgument("unknown wait mode '" + std::string(text) + "' (use spin, sleep or auto)");
}

}  // namespace shardmm
