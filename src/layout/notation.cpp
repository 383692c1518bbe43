// Parser and printer of the layout notation (docs/ARCHITECTURE.md, "Layout notation"):
//   spec  := [name] '[' dim ',' dim ']' ['{' 'U_' axes {',' 'U_' axes} '}']
//          | 'bc(' mb ',' nb [',' rsrc ',' csrc [',' imb ',' inb]] ')'   (2D block-cyclic, first
//                                                                  two axes; imb x inb: first
//                                                                  block)
//   dim   := label ['_' axes [':' dist]]        label: letters/digits starting with a letter
//   axes  := one letter per axis (XY = X major, Y minor) | '{' name {',' name} '}'
//   dist  := 'b' (block, default) | 'c' (cyclic)
//          | 'bc' nb ['f' first] ['+' src]      (block-cyclic; first: size of the first block)
#include <cctype>
#include <limits>

#include "shardmm/error.hpp"
#include "shardmm/layout.hpp"

namespace shardmm {
namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : t_(text) {}

  ShardingSpec spec() {
    ShardingSpec s;
    skip_ws();
    if (t_.substr(pos_, 3) == "bc(") return bc_shorthand();
    if (pos_ < t_.size() && std::isalpha(uc(t_[pos_]))) s.name = ident();
    skip_ws();
    expect('[');
    s.dims[0] = dim();
    expect(',');
    s.dims[1] = dim();
    expect(']');
    skip_ws();
    if (peek('{')) {
      ++pos_;
      do {
        skip_ws();
        if (t_.substr(pos_, 2) != "U_") fail("expected U_<axes> in the unreduced set");
        pos_ += 2;
        for (auto& a : axes()) s.unreduced.push_back(a);
        skip_ws();
      } while (peek(',') && ++pos_);
      expect('}');
    }
    skip_ws();
    if (pos_ != t_.size()) fail("unexpected character after the layout");
    return s;
  }

 private:
  static unsigned char uc(char c) { return static_cast<unsigned char>(c); }
  [[noreturn]] void fail(const std::string& why) const {
    throw ParseError("bad layout '" + std::string(t_) + "': " + why, std::string(t_), pos_);
  }
  void skip_ws() {
    while (pos_ < t_.size() && std::isspace(uc(t_[pos_]))) ++pos_;
  }
  bool peek(char c) const { return pos_ < t_.size() && t_[pos_] == c; }
  void expect(char c) {
    skip_ws();
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
    skip_ws();
  }
  std::string ident() {
    const std::size_t b = pos_;
    if (pos_ >= t_.size() || !std::isalpha(uc(t_[pos_]))) fail("expected a name");
    while (pos_ < t_.size() && std::isalnum(uc(t_[pos_]))) ++pos_;
    return std::string(t_.substr(b, pos_ - b));
  }
  index_t integer(index_t max = std::numeric_limits<index_t>::max()) {
    const std::size_t b = pos_;
    while (pos_ < t_.size() && std::isdigit(uc(t_[pos_]))) ++pos_;
    if (b == pos_) fail("expected a number");
    const bool too_long = pos_ - b > 12;
    if (too_long || std::stoll(std::string(t_.substr(b, pos_ - b))) > max) {
      pos_ = b;
      fail("number too large");
    }
    return std::stoll(std::string(t_.substr(b, pos_ - b)));
  }
  std::vector<std::string> axes() {
    std::vector<std::string> out;
    if (peek('{')) {
      ++pos_;
      do {
        skip_ws();
        const std::size_t at = pos_;
        out.push_back(ident());
        claim(out.back(), at);
        skip_ws();
      } while (peek(',') && ++pos_);
      if (!peek('}')) fail("expected '}' closing the axis group");
      ++pos_;
      return out;
    }
    if (pos_ >= t_.size() || !std::isalpha(uc(t_[pos_]))) fail("expected mesh axis letters");
    while (pos_ < t_.size() && std::isalpha(uc(t_[pos_]))) {
      claim(std::string(1, t_[pos_]), pos_);
      out.emplace_back(1, t_[pos_++]);
    }
    return out;
  }
  DimSpec dim() {
    DimSpec d;
    const std::size_t b = pos_;
    if (pos_ >= t_.size() || !std::isalpha(uc(t_[pos_]))) fail("expected a dimension letter");
    while (pos_ < t_.size() && std::isalnum(uc(t_[pos_]))) ++pos_;
    d.label = std::string(t_.substr(b, pos_ - b));
    if (!peek('_')) return d;
    ++pos_;
    d.kind = DimSpec::Kind::Block;
    d.axes = axes();
    if (peek(':')) {
      ++pos_;
      if (t_.substr(pos_, 2) == "bc") {
        pos_ += 2;
        d.kind = DimSpec::Kind::BlockCyclic;
        const std::size_t at = pos_;
        d.nb = integer();
        if (d.nb < 1) {
          pos_ = at;
          fail("block size must be >= 1");
        }
        if (peek('f')) {
          ++pos_;
          const std::size_t first_at = pos_;
          d.first = integer();
          if (d.first < 1) {
            pos_ = first_at;
            fail("first block size must be >= 1");
          }
        }
        if (peek('+')) {
          ++pos_;
          d.src = static_cast<int>(integer(std::numeric_limits<int>::max()));
        }
      } else if (peek('c')) {
        ++pos_;
        d.kind = DimSpec::Kind::Cyclic;
      } else if (peek('b')) {
        ++pos_;
      } else {
        fail("expected b, c or bc<nb> after ':'");
      }
    }
    skip_ws();
    return d;
  }
  ShardingSpec bc_shorthand() {
    pos_ += 3;
    index_t v[6] = {0, 0, 0, 0, 0, 0};
    int count = 0;
    do {
      skip_ws();
      if (count == 6) fail("bc() takes 2, 4 or 6 numbers");
      const std::size_t at = pos_;
      const bool size = count < 2 || count >= 4;  // mb, nb, imb, inb (rsrc, csrc: coordinates)
      v[count] = size ? integer() : integer(std::numeric_limits<int>::max());
      if (size && v[count] < 1) {
        pos_ = at;
        fail("block size must be >= 1");
      }
      ++count;
      skip_ws();
    } while (peek(',') && ++pos_);
    if (count % 2 != 0) fail("bc() takes 2, 4 or 6 numbers");
    if (!peek(')')) fail("expected ')'");
    ++pos_;
    skip_ws();
    if (pos_ != t_.size()) fail("unexpected character after the layout");
    ShardingSpec s;
    s.dims[0] = {"I", DimSpec::Kind::BlockCyclic, {"#0"}, v[0], static_cast<int>(v[2]), v[4]};
    s.dims[1] = {"J", DimSpec::Kind::BlockCyclic, {"#1"}, v[1], static_cast<int>(v[3]), v[5]};
    return s;
  }

  // A mesh axis may appear once per layout (JAX: a used axis is "spent").
  void claim(const std::string& axis, std::size_t at) {
    std::string key;
    for (char c : axis) key += static_cast<char>(std::tolower(uc(c)));
    for (const auto& u : used_)
      if (u == key) {
        pos_ = at;
        fail("mesh axis '" + axis + "' is used twice");
      }
    used_.push_back(key);
  }

  std::string_view t_;
  std::size_t pos_ = 0;
  std::vector<std::string> used_;
};

std::string axes_to_string(const std::vector<std::string>& axes) {
  bool single = true;
  for (const auto& a : axes) single = single && a.size() == 1;
  std::string s;
  if (single) {
    for (const auto& a : axes) s += a;
    return s;
  }
  for (std::size_t i = 0; i < axes.size(); ++i) s += (i ? "," : "") + axes[i];
  return "{" + s + "}";
}

std::string dim_to_string(const DimSpec& d) {
  std::string s = d.label;
  if (d.kind == DimSpec::Kind::Replicated) return s;
  s += "_" + axes_to_string(d.axes);
  if (d.kind == DimSpec::Kind::Cyclic) s += ":c";
  if (d.kind == DimSpec::Kind::BlockCyclic)
    s += ":bc" + std::to_string(d.nb) + (d.first ? "f" + std::to_string(d.first) : "") +
         (d.src ? "+" + std::to_string(d.src) : "");
  return s;
}

bool is_bc_shorthand(const ShardingSpec& s) {
  auto ok = [](const DimSpec& d, const char* ax) {
    return d.kind == DimSpec::Kind::BlockCyclic && d.axes.size() == 1 && d.axes[0] == ax;
  };
  return ok(s.dims[0], "#0") && ok(s.dims[1], "#1") && s.unreduced.empty();
}

}  // namespace

ShardingSpec ShardingSpec::parse(std::string_view text) { return Parser(text).spec(); }

std::string ShardingSpec::to_string() const {
  if (is_bc_shorthand(*this)) {
    std::string s = "bc(" + std::to_string(dims[0].nb) + "," + std::to_string(dims[1].nb);
    const bool firsts = dims[0].first || dims[1].first;
    if (dims[0].src || dims[1].src || firsts)
      s += "," + std::to_string(dims[0].src) + "," + std::to_string(dims[1].src);
    if (firsts) {  // bc() gives both or neither: an unset one is printed as its block size
      auto first = [](const DimSpec& d) { return d.first ? d.first : d.nb; };
      s += "," + std::to_string(first(dims[0])) + "," + std::to_string(first(dims[1]));
    }
    return s + ")";
  }
  std::string s = name + "[" + dim_to_string(dims[0]) + "," + dim_to_string(dims[1]) + "]";
  if (!unreduced.empty()) s += "{U_" + axes_to_string(unreduced) + "}";
  return s;
}

}  // namespace shardmm
