// `shardmm multiply` end to end: argv parsed by the launcher's parse(), then run_multiply on
// every rank (what main() does) on files rank 0 writes from the format definition; the output
// file is read back byte-wise and compared with a serial BLAS product. Bad inputs fail with the
// same error on every rank and leave the directory byte for byte. (plan, bench:
// test_plan_bench.cpp; calibrate: test_calibrate.cpp.)
#include <map>
#include <tuple>

#include "blas/blas.hpp"
#include "cli.hpp"
#include "core/instantiate.hpp"
#include "mpi/cli_test_util.hpp"
#include "mpi/gemm_check.hpp"
#include "mpi/npy_test_util.hpp"

namespace shardmm::testing {
namespace {

using namespace npy;
using Args = std::vector<std::string>;

std::string joined(const Args& args) {
  std::string s;
  for (const auto& a : args) s += " " + a;
  return s;
}

// Elements in file order -> column-major m x n.
template <class T>
std::vector<T> decode(const std::string& bytes, index_t m, index_t n, bool fortran) {
  std::vector<T> v(static_cast<std::size_t>(m * n));
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      const index_t at = fortran ? i + j * m : i * n + j;
      std::memcpy(&v[static_cast<std::size_t>(i + j * m)], bytes.data() + at * index_t(sizeof(T)),
                  sizeof(T));
    }
  return v;
}

// One multiply run: C (m x n) = alpha op(A) op(B) + beta C0, op(A) m x k, op(B) k x n.
struct Case {
  index_t m = 7, n = 5, k = 6;
  std::string transa = "N", transb = "N";
  bool in_fortran = true, out_fortran = true;
  bool with_c = false;
  double alpha = 1, beta = 0;
  bool raw = false;
  Args extra;  // --algo, --layout-*, --nb
  [[nodiscard]] std::string name() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " op " + transa +
           transb + " in " + order_name(in_fortran) + " out " + order_name(out_fortran) +
           (with_c ? " with C0" : "") + (raw ? " raw" : " npy") + joined(extra);
  }
};

struct Shape2 {
  index_t rows, cols;
};
Shape2 stored(index_t rows, index_t cols, const std::string& op) {
  return op == "N" ? Shape2{rows, cols} : Shape2{cols, rows};
}
std::string shape_text(Shape2 s) { return std::to_string(s.rows) + "x" + std::to_string(s.cols); }

// Rank 0 writes operand `name` (entry(., ., seed)) for case `c`; returns its path.
template <class T>
std::string put_operand(const Case& c, const std::string& name, Shape2 s, int seed) {
  std::string path = file(name + (c.raw ? ".bin" : ".npy"));
  const std::string head =
      c.raw ? "" : make_npy_header(dtype_of<T>(), s.rows, s.cols, c.in_fortran);
  put_file(path, head + data_bytes<T>(s.rows, s.cols, c.in_fortran, seed));
  return path;
}

// Writes the inputs of `c` and returns the multiply command line (output `out`).
template <class T>
Args write_inputs(const Case& c, const std::string& out) {
  const Shape2 sa = stored(c.m, c.k, c.transa), sb = stored(c.k, c.n, c.transb);
  Args args = {put_operand<T>(c, "a", sa, 1),
               put_operand<T>(c, "b", sb, 2),
               "-o",
               out,
               "--transa",
               c.transa,
               "--transb",
               c.transb,
               "--alpha",
               std::to_string(c.alpha)};
  if (c.with_c)
    args.insert(args.end(), {"--c-in", put_operand<T>(c, "c0", {c.m, c.n}, 3), "--beta",
                             std::to_string(c.beta)});
  if (c.raw) {
    args.insert(args.end(), {"--format", "raw", "--dtype", to_string(dtype_of<T>()), "--order",
                             c.in_fortran ? "F" : "C", "--shape-a", shape_text(sa), "--shape-b",
                             shape_text(sb)});
    if (c.with_c) args.insert(args.end(), {"--shape-c", shape_text({c.m, c.n})});
  } else if (!c.out_fortran) {
    args.emplace_back("--c-order");
  } else if (!c.in_fortran) {  // else the default: Fortran order
    args.emplace_back("--fortran-order");
  }
  args.insert(args.end(), c.extra.begin(), c.extra.end());
  return args;
}

// Rank 0: the output's data (column-major) after checking its header; empty on failure.
template <class T>
std::vector<T> read_output(const Case& c, const std::string& out) {
  const std::string bytes = get_file(out);
  std::int64_t offset = 0;
  bool fortran = c.in_fortran;  // raw output keeps --order
  if (!c.raw) {
    NpyHeader h;
    try {
      h = parse_npy_header(bytes);
    } catch (const Error& e) {
      ADD_FAILURE() << c.name() << ": output header: " << e.what();
      return {};
    }
    EXPECT_EQ(h.dtype, dtype_of<T>()) << c.name();
    EXPECT_EQ(h.rows, c.m) << c.name();
    EXPECT_EQ(h.cols, c.n) << c.name();
    EXPECT_EQ(h.fortran_order, c.out_fortran) << c.name();
    offset = h.data_offset;
    fortran = h.fortran_order;
  }
  const auto need = static_cast<std::size_t>(offset + c.m * c.n * index_t(sizeof(T)));
  EXPECT_EQ(bytes.size(), need) << c.name() << ": output size";
  if (bytes.size() != need) return {};
  return decode<T>(bytes.substr(static_cast<std::size_t>(offset)), c.m, c.n, fortran);
}

// Rank 0: normwise error of `got` against the serial product, in units of eps.
template <class T>
double error_vs_blas(const Case& c, const std::vector<T>& got) {
  const Shape2 sa = stored(c.m, c.k, c.transa), sb = stored(c.k, c.n, c.transb);
  auto matrix = [](Shape2 s, int seed) {
    return decode<T>(data_bytes<T>(s.rows, s.cols, true, seed), s.rows, s.cols, true);
  };
  const auto a = matrix(sa, 1), b = matrix(sb, 2);
  const auto c0 = c.with_c ? matrix({c.m, c.n}, 3) : std::vector<T>(got.size(), T(0));
  const T alpha = T(static_cast<real_t<T>>(c.alpha)),
          beta = T(static_cast<real_t<T>>(c.with_c ? c.beta : 0));
  std::vector<T> ref = c0;
  blas::gemm(parse_op(c.transa), parse_op(c.transb), c.m, c.n, c.k, alpha, a.data(),
             std::max<index_t>(sa.rows, 1), b.data(), std::max<index_t>(sb.rows, 1), beta,
             ref.data(), std::max<index_t>(c.m, 1));
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] -= got[i];
  const double scale =
      std::sqrt(double(c.k) + 2) * std::abs(alpha) * fro(a) * fro(b) + 2 * std::abs(beta) * fro(c0);
  return fro(ref) / scale / std::numeric_limits<real_t<T>>::epsilon();
}

template <class T>
void run_case(const Case& c) {
  const std::string out = file(c.raw ? "c.bin" : "c.npy");
  if (world_rank() == 0) fs::remove(out);
  const cli::MultiplyConfig cfg = parse_multiply(write_inputs<T>(c, out));
  EXPECT_EQ(returns([&cfg] { return cli::run_multiply(cfg); }), 0) << c.name();
  if (world_rank() != 0) return;
  const std::vector<T> got = read_output<T>(c, out);
  if (!got.empty()) {
    EXPECT_LE(error_vs_blas<T>(c, got), 10.0) << c.name();
  }
}

template <class T>
class Multiply : public ::testing::Test {};
using Types = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(Multiply, Types);

// Every combination of input and output order, each with another pair of transposes.
TYPED_TEST(Multiply, OrdersAndTransposes) {
  const std::vector<std::pair<std::string, std::string>> ops = {
      {"N", "N"}, {"T", "N"}, {"N", "C"}, {"C", "T"}};
  std::size_t next = 0;
  for (bool in_fortran : {true, false})
    for (bool out_fortran : {true, false}) {
      Case c;
      c.in_fortran = in_fortran, c.out_fortran = out_fortran;
      std::tie(c.transa, c.transb) = ops[next++];
      run_case<TypeParam>(c);
    }
}

TYPED_TEST(Multiply, AlphaBetaWithCIn) {
  Case c;
  c.m = 9, c.n = 4, c.k = 11, c.alpha = -1.5, c.beta = 0.75, c.with_c = true, c.transa = "T";
  run_case<TypeParam>(c);
}

TYPED_TEST(Multiply, RawFiles) {
  for (bool fortran : {true, false}) {
    Case c;
    c.raw = true, c.in_fortran = fortran, c.with_c = fortran, c.beta = 2, c.transb = "C";
    run_case<TypeParam>(c);
  }
}

TEST(MultiplyLayouts, AlgorithmsAndLayouts) {
  const std::vector<Args> extras = {
      {"--algo", "summa", "--nb", "2"},
      {"--algo", "local"},
      {"--layout-a", "A[I_X,J_Y]", "--layout-b", "B[I,J_XY]", "--layout-c", "C[I_XY,J]"},
      {"--algo", "summa", "--layout-a", "bc(3,2)", "--layout-b", "A[I_Y,J_X]"},
      {"--algo", "sharded", "--layout-a", "A[I,J_X]", "--layout-b", "B[I_X,J]", "--layout-c",
       "C[I,J]"}};
  for (const Args& extra : extras) {
    Case c;
    c.m = 13, c.n = 9, c.k = 10, c.extra = extra;
    run_case<double>(c);
  }
}

TEST(MultiplyEdge, EmptyAndTinyDimensions) {
  for (const auto& [m, n, k] :
       {std::tuple<index_t, index_t, index_t>{0, 4, 3}, {3, 4, 0}, {3, 0, 2}, {1, 1, 1}}) {
    Case c;
    c.m = m, c.n = n, c.k = k, c.with_c = true, c.beta = -2, c.transa = "T";
    run_case<double>(c);
  }
}

// ------------------------------------------------------------------------------ bad input

// `multiply ARGS -o out` throws E (message containing `part`) on every rank, and the test
// directory is left byte for byte: run once without `out` and, when `out` is not an input,
// once more with a file already there.
template <class E>
void expect_refused(const Args& args, const std::string& out, const std::string& part) {
  int out_is_input = world_rank() == 0 && fs::exists(out);
  MPI_Bcast(&out_is_input, 1, MPI_INT, 0, MPI_COMM_WORLD);
  const int runs = out_is_input ? 1 : 2;
  for (int run = 0; run < runs; ++run) {
    if (run == 1) put_file(out, "existing output, keep me");
    MPI_Barrier(MPI_COMM_WORLD);
    const auto before = snapshot();
    Args full = args;
    full.insert(full.end(), {"-o", out});
    SCOPED_TRACE("multiply" + joined(full) + (run == 1 ? " (output exists)" : ""));
    const cli::MultiplyConfig cfg = parse_multiply(full);
    expect_same_error_everywhere<E>([&cfg] { cli::run_multiply(cfg); }, part);
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_TRUE(snapshot() == before) << "files changed";
  }
  if (world_rank() == 0 && !out_is_input) fs::remove(out);
  MPI_Barrier(MPI_COMM_WORLD);
}

std::string put_npy_bytes(const std::string& name, const std::string& bytes) {
  put_file(file(name), bytes);
  return file(name);
}
template <class T = double>
std::string npy_file(const std::string& name, index_t m, index_t n) {
  return put_npy_bytes(name,
                       make_npy_header(dtype_of<T>(), m, n, true) + data_bytes<T>(m, n, true));
}

TEST(MultiplyErrors, BadFiles) {
  const std::string a = npy_file("ea.npy", 4, 3), b = npy_file("eb.npy", 3, 5),
                    out = file("eout.npy");
  const std::string trunc =
      put_npy_bytes("etrunc.npy", make_npy_header(Dtype::F64, 3, 5, true) +
                                      data_bytes<double>(3, 5, true).substr(0, 100));
  const std::string malformed =
      put_npy_bytes("emal.npy", header_with_dict("{'descr': '<f8', 'fortran_order': False}") +
                                    data_bytes<double>(3, 5, false));
  const std::string i4 =
      put_npy_bytes("ei4.npy", header("<i4", false, shape(3, 5)) + std::string(60, '\1'));
  const std::string be =
      put_npy_bytes("ebe.npy", header(">f8", false, shape(3, 5)) + data_bytes<double>(3, 5, false));
  const std::string f32 = npy_file<float>("ef32.npy", 3, 5);
  expect_refused<IoError>({a, file("missing.npy")}, out, "missing.npy");
  expect_refused<IoError>({file("missing.npy"), b}, out, "No such file");
  expect_refused<IoError>({a, trunc}, out, "truncated");
  expect_refused<IoError>({malformed, b}, out, "shape");
  expect_refused<IoError>({a, i4}, out, "<i4");
  expect_refused<IoError>({be, b}, out, ">f8");
  expect_refused<Error>({a, f32}, out, "same dtype");
  expect_refused<IoError>({a, b, "--c-in", file("missing.npy"), "--beta", "1"}, out, "missing.npy");
}

TEST(MultiplyErrors, BadShapesAndOptions) {
  const std::string a = npy_file("ea.npy", 4, 3), b = npy_file("eb.npy", 3, 5),
                    out = file("eout.npy");
  const std::string b45 = npy_file("eb45.npy", 4, 5), c44 = npy_file("ec44.npy", 4, 4);
  const std::string c45f32 = npy_file<float>("ec45f32.npy", 4, 5);
  expect_refused<DimensionMismatch>({a, b45}, out, "op(A) is 4x3");
  expect_refused<DimensionMismatch>({a, b, "--transa", "T"}, out, "op(A) is 3x4");
  expect_refused<DimensionMismatch>({a, b, "--c-in", c44, "--beta", "1"}, out, "--c-in is 4x4");
  expect_refused<Error>({a, b, "--c-in", c45f32, "--beta", "1"}, out, "--c-in is f32");
  expect_refused<InvalidArgument>({a, b, "--algo", "fastest"}, out, "fastest");
  expect_refused<InvalidArgument>({a, b, "--layout-c", "C[I,J]{U_X}"}, out, "unreduced");
  expect_refused<Error>({a, b, "--layout-a", "A[I_Q,J]"}, out, "");
  expect_refused<InvalidArgument>({a, b}, a, "is also an input");
  expect_refused<InvalidArgument>({a, b, "--c-in", npy_file("ec.npy", 4, 5)}, g_dir + "/./ec.npy",
                                  "is also an input");
  expect_refused<IoError>({a, b}, file("no_such_dir/c.npy"), "no_such_dir");
  if (world_rank() == 0)
    fs::create_directory(file("a_dir")), fs::create_symlink(a, file("alias.npy"));
  expect_refused<IoError>({a, b}, file("a_dir"), "a_dir");
  expect_refused<InvalidArgument>({a, b}, file("alias.npy"), "is also an input");
}

TEST(MultiplyErrors, BadRawFiles) {
  const std::string a = put_npy_bytes("ra.bin", data_bytes<double>(4, 3, true));
  const std::string b = put_npy_bytes("rb.bin", data_bytes<double>(3, 5, true));
  const std::string out = file("rout.bin");
  auto with = [](Args args) {
    args.insert(args.end(), {"--format", "raw", "--shape-a", "4x3"});
    return args;
  };
  expect_refused<IoError>(with({a, b, "--shape-b", "3x6"}), out, "needs exactly 144");
  expect_refused<IoError>(with({a, b, "--shape-b", "3x5", "--dtype", "c128"}), out, "file size");
  expect_refused<DimensionMismatch>(with({a, b, "--shape-b", "4x5"}), out, "op(A) is 4x3");
  expect_refused<InvalidArgument>(with({a, b, "--shape-b", "3by5"}), out, "");
  expect_refused<InvalidArgument>(with({a, b, "--shape-b", "3x5x1"}), out, "--shape-b must be RxC");
  expect_refused<InvalidArgument>(with({a, b, "--shape-b", "3x5", "--c-in", b}), out, "");
}

}  // namespace
}  // namespace shardmm::testing
