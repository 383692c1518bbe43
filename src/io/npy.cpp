// .npy headers: the preamble (magic, version, header length) and the Python dict literal
// {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }, scanned by a small tolerant
// parser (keys in any order, any whitespace, trailing commas). No MPI.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <vector>

#include "shardmm/error.hpp"
#include "shardmm/io.hpp"

namespace shardmm {
namespace {

static_assert(
    std::endian::native == std::endian::little,
    ".npy headers and data are read as little-endian: big-endian hosts are not supported");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::int64_t kMaxHeaderBytes = std::int64_t{1} << 20;  // sanity cap (NumPy: 10 kB)
constexpr int kAlign = 64;

[[noreturn]] void fail(const std::string& message) { throw IoError(message); }

// A little-endian unsigned integer of `n` bytes (2 or 4) at the start of `bytes`.
std::uint32_t read_le(std::string_view bytes, std::size_t n) {
  if (n == 2) {
    std::uint16_t v = 0;
    std::memcpy(&v, bytes.data(), 2);
    return v;
  }
  std::uint32_t v = 0;
  std::memcpy(&v, bytes.data(), 4);
  return v;
}

Dtype dtype_from_descr(const std::string& descr) {
  const std::string code = descr.empty() ? "" : descr.substr(1);
  std::optional<Dtype> d;
  for (Dtype t : {Dtype::F32, Dtype::F64, Dtype::C64, Dtype::C128, Dtype::F16})
    if (npy_descr(t).substr(1) == code) d = t;
  if (!d)
    fail("unsupported dtype '" + descr +
         "' (shardmm reads '<f4', '<f8', '<c8', '<c16' and '<f2'; bf16 lives in raw files)");
  switch (descr[0]) {
    case '<':
    case '=': return *d;  // '=' is native, and the host is little-endian
    case '>': fail("big-endian data is not supported (dtype '" + descr + "')");
    case '|':
      fail("dtype '" + descr +
           "' has byte order '|' (not applicable), which is invalid for multi-byte types");
    default: fail("unsupported dtype '" + descr + "' (unknown byte order '" + descr[0] + "')");
  }
}

// Scanner of the header dict. Positions in messages are offsets into the dict text.
class DictScanner {
 public:
  explicit DictScanner(std::string_view text) : t_(text) {}

  void parse(NpyHeader& h) {
    bool seen[3] = {false, false, false};
    std::vector<index_t> shape;
    expect('{', "the header dict to start with '{'");
    while (!at('}')) {
      const std::string key = string_literal("a key");
      expect(':', "':' after key '" + key + "'");
      const int k = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
      if (k < 0)
        error("unexpected key '" + key + "' (a .npy header has descr, fortran_order, shape)");
      if (seen[k]) error("duplicate key '" + key + "'");
      seen[k] = true;
      if (k == 0) h.dtype = descr();
      if (k == 1) h.fortran_order = boolean();
      if (k == 2) shape = tuple();
      if (!at('}')) expect(',', "',' or '}' after the value of '" + key + "'");
    }
    ++pos_;
    skip_ws();
    if (pos_ != t_.size()) error("unexpected text after the header dict");
    const char* names[3] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; ++k)
      if (!seen[k])
        fail("malformed .npy header: key '" + std::string(names[k]) + "' is missing in " +
             quoted());
    set_shape(h, shape);
  }

 private:
  [[noreturn]] void error(const std::string& why) const {
    fail("malformed .npy header: " + why + " at offset " + std::to_string(pos_) + " of " +
         quoted());
  }
  std::string quoted() const {
    std::string_view s = t_.substr(0, t_.find_last_not_of(" \t\r\n") + 1);
    return "\"" + std::string(s.substr(0, 200)) + (s.size() > 200 ? "...\"" : "\"");
  }
  void skip_ws() {
    while (pos_ < t_.size() && std::string_view(" \t\r\n").find(t_[pos_]) != std::string_view::npos)
      ++pos_;
  }
  bool at(char c) {
    skip_ws();
    return pos_ < t_.size() && t_[pos_] == c;
  }
  void expect(char c, const std::string& what) {
    if (!at(c)) error("expected " + what);
    ++pos_;
  }
  std::string string_literal(const std::string& what) {
    skip_ws();
    if (pos_ >= t_.size() || (t_[pos_] != '\'' && t_[pos_] != '"'))
      error("expected " + what + " (a quoted string)");
    const char quote = t_[pos_++];
    const std::size_t end = t_.find(quote, pos_);
    if (end == std::string_view::npos) error("unterminated string");
    std::string s(t_.substr(pos_, end - pos_));
    if (s.find('\\') != std::string::npos) error("escape sequences are not supported in strings");
    pos_ = end + 1;
    return s;
  }
  Dtype descr() {
    if (at('[')) fail("unsupported dtype: structured (record) dtypes are not supported");
    return dtype_from_descr(string_literal("the descr string"));
  }
  bool boolean() {
    skip_ws();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (t_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    error("expected True or False for fortran_order");
  }
  std::vector<index_t> tuple();
  static void set_shape(NpyHeader& h, const std::vector<index_t>& shape);

  std::string_view t_;
  std::size_t pos_ = 0;
};

// ( [int {, int}] [,] ): Python tuple of non-negative ints (an old 'L' suffix is accepted).
std::vector<index_t> DictScanner::tuple() {
  expect('(', "a tuple for shape");
  std::vector<index_t> dims;
  bool trailing_comma = false;
  while (!at(')')) {
    if (!dims.empty() && !trailing_comma) error("expected ',' or ')' in shape");
    const char* first = t_.data() + pos_;
    const char* last = t_.data() + t_.size();
    index_t v = 0;
    const auto [ptr, ec] = std::from_chars(first, last, v);
    const std::string token(
        first, static_cast<std::size_t>(
                   std::find_if(first, last, [](char c) { return c == ',' || c == ')'; }) - first));
    if (ec == std::errc::result_out_of_range) fail("dimension " + token + " in shape is too large");
    if (ec != std::errc()) error("expected an integer in shape");
    if (v < 0) fail("negative dimension " + std::to_string(v) + " in shape");
    pos_ += static_cast<std::size_t>(ptr - first);
    if (pos_ < t_.size() && t_[pos_] == 'L') ++pos_;
    dims.push_back(v);
    trailing_comma = at(',');
    if (trailing_comma) ++pos_;
  }
  if (dims.size() == 1 && !trailing_comma)
    error("shape (n) is not a tuple (a 1-tuple needs a trailing comma)");
  ++pos_;
  return dims;
}

void DictScanner::set_shape(NpyHeader& h, const std::vector<index_t>& shape) {
  if (shape.size() > 2) {
    std::string s;
    for (index_t d : shape) s += (s.empty() ? "" : ", ") + std::to_string(d);
    fail(std::to_string(shape.size()) + "-D shape (" + s +
         ") is not a matrix (need 0, 1 or 2 dimensions)");
  }
  h.rows = shape.empty() ? 1 : shape[0];
  h.cols = shape.size() < 2 ? 1 : shape[1];
  const auto max = std::numeric_limits<std::int64_t>::max();
  const auto elem = static_cast<std::int64_t>(dtype_size(h.dtype));
  if ((h.rows > 0 && h.cols > max / h.rows) || h.rows * h.cols > (max - h.data_offset) / elem)
    fail("shape " + std::to_string(h.rows) + "x" + std::to_string(h.cols) + " of " +
         npy_descr(h.dtype) + " is too large: the file size would overflow 64 bits");
}

}  // namespace

std::string npy_descr(Dtype dtype) {
  switch (dtype) {
    case Dtype::F32: return "<f4";
    case Dtype::F64: return "<f8";
    case Dtype::C64: return "<c8";
    case Dtype::C128: return "<c16";
    case Dtype::F16: return "<f2";
    case Dtype::BF16: return "bf16 (no .npy dtype)";  // NumPy has no bfloat16
  }
  return "?";
}

std::int64_t npy_header_size(std::string_view file_start) {
  if (file_start.substr(0, kMagic.size()) != kMagic.substr(0, file_start.size()))
    fail("not a .npy file (bad magic string, expected \\x93NUMPY)");
  if (file_start.size() < kMagic.size() + 2)
    fail("truncated .npy header: " + std::to_string(file_start.size()) +
         " bytes, the preamble needs at least 10");
  const int major = static_cast<unsigned char>(file_start[6]);
  const int minor = static_cast<unsigned char>(file_start[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
         " (shardmm reads 1.0, 2.0 and 3.0)");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (file_start.size() < 8 + len_bytes)
    fail("truncated .npy header: " + std::to_string(file_start.size()) + " bytes, the version " +
         std::to_string(major) + " preamble needs " + std::to_string(8 + len_bytes));
  const std::int64_t len = read_le(file_start.substr(8), len_bytes);
  if (len > kMaxHeaderBytes)
    fail("implausible .npy header length " + std::to_string(len) + " bytes (limit " +
         std::to_string(kMaxHeaderBytes) + ")");
  return static_cast<std::int64_t>(8 + len_bytes) + len;
}

NpyHeader parse_npy_header(std::string_view file_start) {
  NpyHeader h;
  h.data_offset = npy_header_size(file_start);
  h.version = static_cast<unsigned char>(file_start[6]);
  if (static_cast<std::int64_t>(file_start.size()) < h.data_offset)
    fail("truncated .npy header: it needs " + std::to_string(h.data_offset) + " bytes, only " +
         std::to_string(file_start.size()) + " available");
  const std::size_t dict_begin = h.version == 1 ? 10 : 12;
  DictScanner(file_start.substr(dict_begin, static_cast<std::size_t>(h.data_offset) - dict_begin))
      .parse(h);
  return h;
}

std::string make_npy_header(Dtype dtype, index_t rows, index_t cols, bool fortran_order) {
  if (rows < 0 || cols < 0)
    throw InvalidArgument("make_npy_header: negative shape " + std::to_string(rows) + "x" +
                          std::to_string(cols));
  const std::string dict = "{'descr': '" + npy_descr(dtype) +
                           "', 'fortran_order': " + (fortran_order ? "True" : "False") +
                           ", 'shape': (" + std::to_string(rows) + ", " + std::to_string(cols) +
                           "), }";
  // Preamble + dict + '\n', padded with spaces to a multiple of 64 bytes.
  auto padded = [&](std::size_t preamble) {
    const std::size_t unpadded = preamble + dict.size() + 1;
    return unpadded + (kAlign - unpadded % kAlign) % kAlign;
  };
  const bool v1 = padded(10) - 10 <= std::numeric_limits<std::uint16_t>::max();
  const std::size_t preamble = v1 ? 10 : 12, total = padded(preamble);
  std::string out(kMagic);
  out += static_cast<char>(v1 ? 1 : 2);
  out += '\0';
  const auto len = static_cast<std::uint32_t>(total - preamble);
  char len_bytes[4];
  std::memcpy(len_bytes, &len, 4);  // little-endian host (static_assert above)
  out.append(len_bytes, preamble - 8);
  out += dict;
  out.append(total - out.size() - 1, ' ');
  out += '\n';
  return out;
}

}  // namespace shardmm
