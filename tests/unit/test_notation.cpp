// Layout notation: parse -> expected ShardingSpec (written out by hand), to_string -> canonical
// text, canonical text -> same spec; malformed text -> ParseError at the offending character.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shardmm/error.hpp"
#include "shardmm/layout.hpp"

namespace {

using shardmm::DimSpec;
using shardmm::index_t;
using shardmm::ParseError;
using shardmm::ShardingSpec;
using Kind = DimSpec::Kind;

DimSpec rep(std::string label) { return {std::move(label), Kind::Replicated, {}, 0, 0}; }
DimSpec dist(std::string label, Kind kind, std::vector<std::string> axes, index_t nb = 0,
             int src = 0, index_t first = 0) {
  return {std::move(label), kind, std::move(axes), nb, src, first};
}
DimSpec blk(std::string label, std::vector<std::string> axes) {
  return dist(std::move(label), Kind::Block, std::move(axes));
}
ShardingSpec spec(std::string name, DimSpec r, DimSpec c, std::vector<std::string> u = {}) {
  return {std::move(name), {std::move(r), std::move(c)}, std::move(u)};
}
// bc(mb, nb, rsrc, csrc, imb, inb): placeholders "#0"/"#1" stand for the mesh's first two axes.
ShardingSpec bc(index_t mb, index_t nb, int rsrc = 0, int csrc = 0, index_t imb = 0,
                index_t inb = 0) {
  return spec("", dist("I", Kind::BlockCyclic, {"#0"}, mb, rsrc, imb),
              dist("J", Kind::BlockCyclic, {"#1"}, nb, csrc, inb));
}

struct RoundTrip {
  std::string text;       // as written by a user
  ShardingSpec want;      // what it means
  std::string canonical;  // what to_string prints
};

std::vector<RoundTrip> round_trips() {
  return {
      {"A[I_X,J]", spec("A", blk("I", {"X"}), rep("J")), "A[I_X,J]"},
      {"A[I_XY,J]", spec("A", blk("I", {"X", "Y"}), rep("J")), "A[I_XY,J]"},
      {"A[I,J_Y]", spec("A", rep("I"), blk("J", {"Y"})), "A[I,J_Y]"},
      {"A[I,J]", spec("A", rep("I"), rep("J")), "A[I,J]"},
      {"[I_X,J]", spec("", blk("I", {"X"}), rep("J")), "[I_X,J]"},
      {"C[I_X,K_Y]{U_Z}", spec("C", blk("I", {"X"}), blk("K", {"Y"}), {"Z"}), "C[I_X,K_Y]{U_Z}"},
      {"C[I_X,K]{U_YZ}", spec("C", blk("I", {"X"}), rep("K"), {"Y", "Z"}), "C[I_X,K]{U_YZ}"},
      {"C[I_X,K]{U_Y,U_Z}", spec("C", blk("I", {"X"}), rep("K"), {"Y", "Z"}), "C[I_X,K]{U_YZ}"},
      {"A[I_{data},J_{model}]", spec("A", blk("I", {"data"}), blk("J", {"model"})),
       "A[I_{data},J_{model}]"},
      {"A[I_{x, model}:bc3+2,J]",
       spec("A", dist("I", Kind::BlockCyclic, {"x", "model"}, 3, 2), rep("J")),
       "A[I_{x,model}:bc3+2,J]"},
      {"A[I_{X},J]", spec("A", blk("I", {"X"}), rep("J")), "A[I_X,J]"},
      {"C[I,J]{U_{pipe}}", spec("C", rep("I"), rep("J"), {"pipe"}), "C[I,J]{U_{pipe}}"},
      {"A[I_X:c,J]", spec("A", dist("I", Kind::Cyclic, {"X"}), rep("J")), "A[I_X:c,J]"},
      {"A[I_X:b,J]", spec("A", blk("I", {"X"}), rep("J")), "A[I_X,J]"},
      {"A[I_X:bc64,J]", spec("A", dist("I", Kind::BlockCyclic, {"X"}, 64), rep("J")),
       "A[I_X:bc64,J]"},
      {"A[I_X:bc64+1,J_Y:bc8]",
       spec("A", dist("I", Kind::BlockCyclic, {"X"}, 64, 1),
            dist("J", Kind::BlockCyclic, {"Y"}, 8)),
       "A[I_X:bc64+1,J_Y:bc8]"},
      {"A[I_X:bc64+0,J]", spec("A", dist("I", Kind::BlockCyclic, {"X"}, 64), rep("J")),
       "A[I_X:bc64,J]"},
      {"Mat1[Row_X,Col2_YZ:c]",
       spec("Mat1", blk("Row", {"X"}), dist("Col2", Kind::Cyclic, {"Y", "Z"})),
       "Mat1[Row_X,Col2_YZ:c]"},
      {"bc(64,64)", bc(64, 64), "bc(64,64)"},
      {"bc(4,5,1,2)", bc(4, 5, 1, 2), "bc(4,5,1,2)"},
      {"bc(4,5,0,0)", bc(4, 5), "bc(4,5)"},
      {"bc(4,5,0,3)", bc(4, 5, 0, 3), "bc(4,5,0,3)"},
      {"bc(4,5,1,0,2,7)", bc(4, 5, 1, 0, 2, 7), "bc(4,5,1,0,2,7)"},
      {"bc(4,5,0,0,4,5)", bc(4, 5, 0, 0, 4, 5), "bc(4,5,0,0,4,5)"},
      {"A[I_X:bc64f16+1,J_Y:bc8f1]",
       spec("A", dist("I", Kind::BlockCyclic, {"X"}, 64, 1, 16),
            dist("J", Kind::BlockCyclic, {"Y"}, 8, 0, 1)),
       "A[I_X:bc64f16+1,J_Y:bc8f1]"},
      {" bc( 4 , 5 ) ", bc(4, 5), "bc(4,5)"},
      {"  A [ I_X , J_Y:c ] { U_Z }  ",
       spec("A", blk("I", {"X"}), dist("J", Kind::Cyclic, {"Y"}), {"Z"}), "A[I_X,J_Y:c]{U_Z}"},
      {"\tC[ I_{ a , b } ,K ]\n", spec("C", blk("I", {"a", "b"}), rep("K")), "C[I_ab,K]"},
  };
}

TEST(Notation, ParsesToExpectedSpec) {
  for (const auto& rt : round_trips()) {
    SCOPED_TRACE(rt.text);
    EXPECT_EQ(ShardingSpec::parse(rt.text), rt.want);
  }
}

TEST(Notation, PrintsCanonicalTextThatParsesBack) {
  for (const auto& rt : round_trips()) {
    SCOPED_TRACE(rt.text);
    EXPECT_EQ(rt.want.to_string(), rt.canonical);
    EXPECT_EQ(ShardingSpec::parse(rt.canonical), rt.want);
    EXPECT_EQ(ShardingSpec::parse(rt.canonical).to_string(), rt.canonical);
  }
}

struct BadSpec {
  std::string text;
  std::size_t position;  // index of the offending character (text.size() = ran out of text)
};

std::vector<BadSpec> bad_specs() {
  return {
      {"", 0},
      {"   ", 3},
      {"A", 1},
      {"A[I_X,J_X]", 8},  // second X: axis spent
      {"A[I_X,J_x]", 8},  // axes are case-insensitive
      {"A[I_XX,J]", 5},
      {"C[I_X,K_Y]{U_X}", 13},
      {"A[I_{data},J_{DATA}]", 14},
      {"A[I_X J]", 6},   // missing comma
      {"A[I_X,J]x", 8},  // trailing junk
      {"A[I_X,J] ]", 9},
      {"A[I_X,J:bc0]", 7},     // a replicated dimension takes no distribution
      {"A[I_X,J_Y:bc0]", 12},  // block size 0
      {"A[I_X:bc,J]", 8},
      {"A[I_X:bc4+,J]", 10},
      {"A[I_X:q,J]", 6},
      {"A[I_X:,J]", 6},
      {"A[I_,J]", 4},
      {"A[I_1,J]", 4},
      {"A[,J]", 2},
      {"A[1,J]", 2},
      {"A[I_X,J", 7},
      {"A[I_X,J,K]", 7},
      {"A[I_{data,J]", 11},
      {"A[I_{},J]", 5},
      {"A[I_X,J]{V_Y}", 9},
      {"A[I_X,J]{}", 9},
      {"A[I_X,J]{U_Z", 12},
      {"A[I_X,J]{U_Z,}", 13},
      {"A(I_X,J)", 1},
      {"bc(0,4)", 3},
      {"bc(4,0)", 5},
      {"bc(4)", 4},
      {"bc(1,2,3)", 8},
      {"bc(1,2,3,4,5)", 12},
      {"bc(1,2,3,4,5,6,7)", 15},
      {"bc(1,2,3,4,0,6)", 11},  // first block size 0
      {"A[I_X:bc4f0,J]", 10},
      {"A[I_X:bc4f,J]", 10},
      {"A[I_X:bc4+1f2,J]", 11},  // f comes before +
      {"bc(4,4", 6},
      {"bc(4,4)x", 7},
      {"bc(4,-4)", 5},
      {"bc(,4)", 3},
  };
}

TEST(Notation, MalformedSpecsReportTheOffendingCharacter) {
  for (const auto& bad : bad_specs()) {
    SCOPED_TRACE("'" + bad.text + "'");
    try {
      (void)ShardingSpec::parse(bad.text);
      ADD_FAILURE() << "parsed without error";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.position(), bad.position) << e.what();
      EXPECT_EQ(e.text(), bad.text);
      EXPECT_NE(std::string(e.what()).find(bad.text), std::string::npos) << e.what();
    }
  }
}

TEST(Notation, ParseErrorIsAShardmmError) {
  EXPECT_THROW((void)ShardingSpec::parse("A[I_X,J_X]"), shardmm::Error);
}

// Numbers that do not fit: the parser must reject them rather than truncate. The source
// coordinate is stored as int, so 4294967297 must not silently become 1. (Fails on the current
// library: integer() accepts 12 digits and parse() narrows with static_cast<int>.)
TEST(Notation, RejectsNumbersOutOfRange) {
  for (const std::string text : {"A[I_X:bc4+4294967297,J]", "bc(4,4,4294967296,0)",
                                 "bc(4,4,0,2147483648)", "A[I_X:bc1234567890123,J]"}) {
    SCOPED_TRACE(text);
    EXPECT_THROW((void)ShardingSpec::parse(text), ParseError);
  }
}

// A too-long number should be reported where it starts, like a zero block size is. (Fails on
// the current library: integer() fails after consuming the digits.)
TEST(Notation, TooLongNumberPointsAtItsFirstDigit) {
  try {
    (void)ShardingSpec::parse("A[I_X:bc1234567890123,J]");
    ADD_FAILURE() << "parsed without error";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.position(), 8u);
  }
}

}  // namespace
