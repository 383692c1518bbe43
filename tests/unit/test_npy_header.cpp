// .npy header parsing and writing without MPI. Headers are real byte strings built here from
// the format definition (magic, version, little-endian length, dict, padding), never through
// make_npy_header, so the parser and the writer are checked against an independent image.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "shardmm/error.hpp"
#include "shardmm/io.hpp"

namespace shardmm {
namespace {

// A complete .npy header: magic, version major.0, length field (2 bytes for version 1, else 4,
// little-endian), `dict`, spaces and '\n' so the total is a multiple of `align`.
std::string npy(int major, const std::string& dict, std::size_t align = 64) {
  const std::size_t pre = major == 1 ? 10 : 12;
  const std::size_t unpadded = pre + dict.size() + 1;
  const std::string body = dict + std::string((align - unpadded % align) % align, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const auto len = static_cast<std::uint32_t>(body.size());
  for (std::size_t b = 0; b < pre - 8; ++b) out += static_cast<char>((len >> (8 * b)) & 0xFF);
  return out + body;
}

std::string dict(const std::string& descr, bool fortran, const std::string& shape) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

// Parsing `bytes` throws IoError whose message contains `part`.
void expect_io_error(const std::string& bytes, const std::string& part) {
  try {
    parse_npy_header(bytes);
    ADD_FAILURE() << "no IoError for header " << ::testing::PrintToString(bytes);
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
        << "message '" << e.what() << "' does not mention '" << part << "'";
  }
}

const std::vector<std::pair<std::string, Dtype>> kDtypes = {{"<f4", Dtype::F32},
                                                            {"<f8", Dtype::F64},
                                                            {"<c8", Dtype::C64},
                                                            {"<c16", Dtype::C128},
                                                            {"<f2", Dtype::F16}};

TEST(NpyHeader, EveryVersionDtypeAndOrder) {
  for (int version : {1, 2, 3})
    for (const auto& [descr, dtype] : kDtypes)
      for (bool fortran : {false, true}) {
        const std::string bytes = npy(version, dict(descr, fortran, "(3, 4)"));
        const NpyHeader h = parse_npy_header(bytes);
        SCOPED_TRACE("version " + std::to_string(version) + " " + descr);
        EXPECT_EQ(h.version, version);
        EXPECT_EQ(h.dtype, dtype);
        EXPECT_EQ(h.fortran_order, fortran);
        EXPECT_EQ(h.rows, 3);
        EXPECT_EQ(h.cols, 4);
        EXPECT_EQ(h.data_offset, static_cast<std::int64_t>(bytes.size()));
        EXPECT_EQ(h.data_offset % 64, 0);
      }
}

TEST(NpyHeader, Shapes) {
  const std::vector<std::tuple<std::string, index_t, index_t>> cases = {
      {"(5,)", 5, 1},         {"()", 1, 1},
      {"(2, 3,)", 2, 3},      {"(0, 7)", 0, 7},
      {"( 2 ,3 )", 2, 3},     {"(3L, 4L)", 3, 4},
      {"(0,)", 0, 1},         {"(7,0)", 7, 0},
      {"(\n 6,\t2\n)", 6, 2}, {"(123456789012, 1)", 123456789012, 1},
      {"( )", 1, 1}};
  for (const auto& [shape, r, c] : cases) {
    const NpyHeader h = parse_npy_header(npy(1, dict("<f8", false, shape)));
    EXPECT_EQ(h.rows, r) << shape;
    EXPECT_EQ(h.cols, c) << shape;
  }
}

TEST(NpyHeader, KeyOrderQuotesAndWhitespace) {
  const std::vector<std::string> dicts = {
      "{'shape': (2, 5), 'fortran_order': True, 'descr': '<c8'}",
      R"({"fortran_order":True,"shape":(2,5),"descr":"<c8"})",
      "{ 'descr' : '<c8' ,\n 'shape' : ( 2 , 5 , ) ,\t'fortran_order' : True , }",
      "{'fortran_order': True, 'descr': '=c8', 'shape': (2, 5),}",  // '=' is native = little
  };
  for (const auto& d : dicts) {
    const NpyHeader h = parse_npy_header(npy(1, d));
    EXPECT_EQ(h.dtype, Dtype::C64) << d;
    EXPECT_TRUE(h.fortran_order) << d;
    EXPECT_EQ(h.rows, 2) << d;
    EXPECT_EQ(h.cols, 5) << d;
  }
}

TEST(NpyHeader, AnyAlignmentAndTrailingData) {
  for (std::size_t align : {1, 16, 64}) {
    const std::string bytes = npy(1, dict("<f4", false, "(2, 2)"), align);
    const NpyHeader h = parse_npy_header(bytes + std::string(16, 'x'));  // data follows
    EXPECT_EQ(h.data_offset, static_cast<std::int64_t>(bytes.size())) << align;
    EXPECT_EQ(npy_header_size(bytes.substr(0, 10)), static_cast<std::int64_t>(bytes.size()));
  }
}

TEST(NpyHeader, MakeExactImage) {
  // NumPy's own layout: sorted keys, "(r, c)", trailing ", }", spaces, '\n', 64-byte total.
  const std::string dict_text = "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 4), }";
  // 10-byte preamble + 58-byte dict + 59 spaces + '\n' = 128; header length 118 = 0x76.
  const std::string want =
      std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict_text + std::string(59, ' ') + "\n";
  ASSERT_EQ(want.size(), 128u);
  EXPECT_EQ(npy(1, dict_text), want);  // the test's own builder agrees
  EXPECT_EQ(make_npy_header(Dtype::F64, 3, 4, true), want);
  EXPECT_EQ(make_npy_header(Dtype::C64, 10, 1, false),
            npy(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (10, 1), }"));
}

TEST(NpyHeader, MakeParseRoundTrip) {
  const std::vector<std::pair<index_t, index_t>> shapes = {
      {0, 0}, {1, 1}, {3, 4}, {1000, 1}, {123456789, 3}, {4611686018427387, 2}};
  for (const auto& [descr, dtype] : kDtypes)
    for (bool fortran : {false, true})
      for (const auto& [r, c] : shapes) {
        const std::string bytes = make_npy_header(dtype, r, c, fortran);
        EXPECT_EQ(bytes.size() % 64, 0u);
        EXPECT_EQ(bytes.back(), '\n');
        EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
        const NpyHeader h = parse_npy_header(bytes);
        EXPECT_EQ(h.dtype, dtype);
        EXPECT_EQ(h.fortran_order, fortran);
        EXPECT_EQ(h.rows, r);
        EXPECT_EQ(h.cols, c);
        EXPECT_EQ(h.version, 1);
        EXPECT_EQ(h.data_offset, static_cast<std::int64_t>(bytes.size()));
      }
  EXPECT_THROW(make_npy_header(Dtype::F64, -1, 2, false), InvalidArgument);
}

TEST(NpyHeader, BadPreamble) {
  const std::string good = npy(1, dict("<f8", false, "(3, 4)"));
  expect_io_error("\x93NUMPZ" + good.substr(6), "bad magic");
  expect_io_error("PK\x03\x04 zip file", "bad magic");
  expect_io_error("", "truncated");
  expect_io_error(good.substr(0, 9), "truncated");
  expect_io_error(npy(2, dict("<f8", false, "(3, 4)")).substr(0, 11), "truncated");
  expect_io_error(good.substr(0, good.size() - 5), "truncated .npy header");
  std::string v4 = good, v11 = good;
  v4[6] = 4;
  v11[7] = 1;
  expect_io_error(v4, "version 4.0");
  expect_io_error(v11, "version 1.1");
  std::string huge = npy(2, dict("<f8", false, "(3, 4)"));
  huge[11] = '\x7f';  // length 0x7fxxxxxx
  expect_io_error(huge, "implausible .npy header length");
}

TEST(NpyHeader, UnsupportedDtypes) {
  expect_io_error(npy(1, dict("<i4", false, "(3, 4)")), "unsupported dtype '<i4'");
  expect_io_error(npy(1, dict("|O", false, "(3, 4)")), "unsupported dtype '|O'");
  expect_io_error(npy(1, dict("<u2", false, "(3, 4)")), "unsupported dtype '<u2'");
  expect_io_error(npy(1, dict("", false, "(3, 4)")), "unsupported dtype ''");
  expect_io_error(npy(1, dict(">f8", false, "(3, 4)")), "big-endian data is not supported");
  expect_io_error(npy(3, dict(">c16", true, "(3, 4)")), "big-endian data is not supported");
  expect_io_error(npy(1, dict("|f8", false, "(3, 4)")), "byte order '|'");
  expect_io_error(npy(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }"),
                  "structured");
}

TEST(NpyHeader, MalformedDict) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }", "expected the header dict"},
      {"{'descr' '<f8', 'fortran_order': False, 'shape': (3, 4), }",
       "expected ':' after key 'descr'"},
      {"{'descr': '<f8', 'shape': (3, 4), }", "key 'fortran_order' is missing"},
      {"{'descr': '<f8', 'fortran_order': False, }", "key 'shape' is missing"},
      {"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)}",
       "duplicate key 'descr'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), 'extra': 1}",
       "unexpected key 'extra'"},
      {"{'descr': '<f8", "unterminated string"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4)", "expected ',' or '}'"},
      {"{'descr': '<f8', 'fortran_order': 1, 'shape': (3, 4), }", "expected True or False"},
      {"{'descr': '<f8', 'fortran_order': false, 'shape': (3, 4), }", "expected True or False"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': [3, 4], }", "expected a tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3), }", "trailing comma"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3 4), }", "expected ',' or ')'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, x), }", "expected an integer"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), } junk", "unexpected text after"},
      {"{descr: '<f8', 'fortran_order': False, 'shape': (3, 4), }", "expected a key"},
      {"{'descr': '<f8' 'fortran_order': False, 'shape': (3, 4), }", "expected ',' or '}'"},
  };
  for (const auto& [d, part] : cases) {
    SCOPED_TRACE(d);
    expect_io_error(npy(1, d), "malformed .npy header");
    expect_io_error(npy(1, d), part);
  }
}

TEST(NpyHeader, BadDimensions) {
  expect_io_error(npy(1, dict("<f8", false, "(-1, 3)")), "negative dimension -1");
  expect_io_error(npy(1, dict("<f8", false, "(3, -2)")), "negative dimension -2");
  expect_io_error(npy(1, dict("<f8", false, "(99999999999999999999, 2)")),
                  "dimension 99999999999999999999 in shape is too large");
  expect_io_error(npy(1, dict("<f8", false, "(4611686018427387904, 4)")), "too large");
  expect_io_error(npy(1, dict("<c16", false, "(1152921504606846976,)")), "too large");
  expect_io_error(npy(1, dict("<f8", false, "(2, 3, 4)")), "3-D shape (2, 3, 4)");
  expect_io_error(npy(1, dict("<f8", false, "(1, 1, 1, 1)")), "4-D shape");
}

TEST(NpyHeader, Descr) {
  for (const auto& [descr, dtype] : kDtypes) EXPECT_EQ(npy_descr(dtype), descr);
}

}  // namespace
}  // namespace shardmm
