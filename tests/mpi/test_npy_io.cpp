// .npy and raw matrix files on the world mesh. Rank 0 writes the input files byte by byte with
// std::ofstream (header built here from the format definition, values entry<T>(i, j) in C or
// Fortran order); read_npy must put exactly those values in every local element of every
// representative layout (ref::grid_specs: block, cyclic, I_XY groups, replicas, unreduced,
// block-cyclic nb 1..5 with non-zero sources). write_npy / write_raw output is compared with
// the expected byte image. Failures: test_npy_io_errors.cpp.
#include "core/instantiate.hpp"
#include "mpi/npy_test_util.hpp"

namespace shardmm::testing {
namespace {

using namespace npy;

template <class T>
class NpyIoTyped : public ::testing::Test {};
using Scalars = ::testing::Types<SHARDMM_SCALAR_TYPES>;
TYPED_TEST_SUITE(NpyIoTyped, Scalars);

// Reads test-made files of every dtype, both orders and a few shapes into every layout.
TYPED_TEST(NpyIoTyped, ReadEveryLayout) {
  using T = TypeParam;
  const Mesh mesh = world_mesh();
  std::size_t i = 0;  // on more than 2 ranks each case runs in one of the types (type_takes_case)
  for (const auto& [m, n] : std::vector<std::pair<index_t, index_t>>{{7, 5}, {1, 9}, {0, 3}})
    for (bool fortran : {false, true}) {
      const std::string path = file("in_" + descr<T>().substr(1) + ".npy");
      put_file(path, header(descr<T>(), fortran, shape(m, n)) + data_bytes<T>(m, n, fortran, 3));
      for (const auto& s : specs(mesh)) {
        if (!type_takes_case<T>(i++)) continue;
        const ref::Model M(mesh.shape(), m, n, s);
        DistMatrix<T> A(mesh, M.layout());
        poison(A);
        read_npy(path, A);
        expect_local(A, M, 3, std::string("read_npy ") + order_name(fortran));
      }
    }
}

// write_npy from every reduced layout gives NumPy's byte image exactly; the result reads back.
TYPED_TEST(NpyIoTyped, WriteExactBytes) {
  using T = TypeParam;
  const Mesh mesh = world_mesh();
  const index_t m = 6, n = 7;
  std::size_t c = 0;  // on more than 2 ranks each case runs in one of the types (type_takes_case)
  for (bool fortran : {true, false})
    for (const auto& s : specs(mesh)) {
      if (!s.unreduced.empty() || !type_takes_case<T>(c++)) continue;
      const ref::Model M(mesh.shape(), m, n, s);
      DistMatrix<T> A(mesh, M.layout());
      A.fill([](index_t i, index_t j) { return entry<T>(i, j, 5); });
      const std::string path = file("out.npy");
      write_npy(path, A, fortran);
      MPI_Barrier(MPI_COMM_WORLD);
      expect_bytes(path, header(descr<T>(), fortran, shape(m, n)) + data_bytes<T>(m, n, fortran, 5),
                   M.name() + " " + order_name(fortran));
      DistMatrix<T> B(mesh, M.layout().transposed().transposed());
      read_npy(path, B);
      expect_local(B, M, 5, "read back");
    }
  EXPECT_EQ(leftover_temps(), 0);
}

// Raw files: same machinery, no header, exact size.
TYPED_TEST(NpyIoTyped, RawFiles) {
  using T = TypeParam;
  const Mesh mesh = world_mesh();
  const index_t m = 5, n = 4;
  std::size_t i = 0;  // on more than 2 ranks each case runs in one of the types (type_takes_case)
  for (bool fortran : {true, false}) {
    const std::string in = file("in.raw");
    put_file(in, data_bytes<T>(m, n, fortran, 1));
    for (const auto& s : specs(mesh)) {
      if (!type_takes_case<T>(i++)) continue;
      const ref::Model M(mesh.shape(), m, n, s);
      DistMatrix<T> A(mesh, M.layout());
      poison(A);
      read_raw(in, A, fortran);
      expect_local(A, M, 1, std::string("read_raw ") + order_name(fortran));
      if (!s.unreduced.empty()) continue;
      write_raw(file("out.raw"), A, fortran);
      MPI_Barrier(MPI_COMM_WORLD);
      expect_bytes(file("out.raw"), data_bytes<T>(m, n, fortran, 1), "write_raw " + M.name());
    }
  }
}

// Tiles in caller memory with a padded leading dimension (the unpacked paths).
TEST(NpyIo, PaddedViews) {
  const Mesh mesh = world_mesh();
  const index_t m = 9, n = 4;
  for (bool fortran : {true, false}) {
    put_file(file("pad.npy"),
             header("<f8", fortran, shape(m, n)) + data_bytes<double>(m, n, fortran, 2));
    const ref::Model M(mesh.shape(), m, n, ref::spec(ref::bcyc("X", 2, 0), ref::cyc("Y")));
    const Layout L = M.layout();
    const index_t ld = L.local_rows(mesh.coords()) + 3;
    std::vector<double> mem(
        static_cast<std::size_t>(ld * std::max<index_t>(1, L.local_cols(mesh.coords()))), -1.0);
    auto V = DistMatrix<double>::view(mesh, L, mem.data(), ld);
    read_npy(file("pad.npy"), V);
    expect_local(V, M, 2, "padded view");
    write_npy(file("pad_out.npy"), V, fortran);
    MPI_Barrier(MPI_COMM_WORLD);
    expect_bytes(file("pad_out.npy"),
                 header("<f8", fortran, shape(m, n)) + data_bytes<double>(m, n, fortran, 2),
                 "write from padded view");
  }
}

// Shapes (n,) and () read as n x 1 and 1 x 1.
TEST(NpyIo, VectorsAndScalars) {
  const Mesh mesh = world_mesh();
  put_file(file("vec.npy"),
           header("<c16", false, "(11,)") + data_bytes<std::complex<double>>(11, 1, false));
  put_file(file("scalar.npy"), header("<f4", true, "()") + data_bytes<float>(1, 1, true));
  for (const auto& s : specs(mesh)) {
    const ref::Model Mv(mesh.shape(), 11, 1, s), Ms(mesh.shape(), 1, 1, s);
    DistMatrix<std::complex<double>> v(mesh, Mv.layout());
    DistMatrix<float> x(mesh, Ms.layout());
    read_npy(file("vec.npy"), v);
    read_npy(file("scalar.npy"), x);
    expect_local(v, Mv, 0, "shape (11,)");
    expect_local(x, Ms, 0, "shape ()");
  }
  const NpyHeader h = read_npy_header(file("vec.npy"), MPI_COMM_WORLD);
  EXPECT_EQ(h.rows, 11);
  EXPECT_EQ(h.cols, 1);
  EXPECT_EQ(h.dtype, Dtype::C128);
  EXPECT_EQ(h.data_offset, static_cast<std::int64_t>(header("<c16", false, "(11,)").size()));
}

// Versions 2.0 and 3.0 (4-byte header length) and unpadded headers: data at odd offsets.
TEST(NpyIo, OtherVersionsAndOffsets) {
  const Mesh mesh = world_mesh();
  const index_t m = 5, n = 6;
  const std::string dict = "{'fortran_order': True, 'shape': (5, 6), 'descr': '<f8'}";
  for (int version : {1, 2, 3}) {
    std::string bytes = "\x93NUMPY";
    bytes += static_cast<char>(version);
    bytes += '\0';
    const auto len = static_cast<unsigned>(dict.size() + 1);  // no padding at all
    for (int b = 0; b < (version == 1 ? 2 : 4); ++b)
      bytes += static_cast<char>((len >> (8 * b)) & 0xFF);
    bytes += dict + "\n" + data_bytes<double>(m, n, true, 8);
    put_file(file("v.npy"), bytes);
    const NpyHeader h = read_npy_header(file("v.npy"), MPI_COMM_WORLD);
    EXPECT_EQ(h.version, version);
    EXPECT_EQ(h.data_offset, (version == 1 ? 10 : 12) + static_cast<std::int64_t>(len));
    for (const auto& s : specs(mesh)) {
      const ref::Model M(mesh.shape(), m, n, s);
      DistMatrix<double> A(mesh, M.layout());
      poison(A);
      read_npy(file("v.npy"), A);
      expect_local(A, M, 8, "version " + std::to_string(version) + " unpadded");
    }
  }
}

// Every transfer is cut into pieces of at most 5 elements.
TEST(NpyIo, SplitPieces) {
  const Mesh mesh = world_mesh();
  const ref::ScopedMessageLimit limit(5);
  const index_t m = 13, n = 8;
  for (bool fortran : {true, false}) {
    put_file(file("split.npy"), header("<c8", fortran, shape(m, n)) +
                                    data_bytes<std::complex<float>>(m, n, fortran, 4));
    for (const auto& s : specs(mesh)) {
      const ref::Model M(mesh.shape(), m, n, s);
      DistMatrix<std::complex<float>> A(mesh, M.layout());
      poison(A);
      read_npy(file("split.npy"), A);
      expect_local(A, M, 4, std::string("split read ") + order_name(fortran));
      if (!s.unreduced.empty()) continue;
      write_npy(file("split_out.npy"), A, !fortran);
      MPI_Barrier(MPI_COMM_WORLD);
      expect_bytes(
          file("split_out.npy"),
          header("<c8", !fortran, shape(m, n)) + data_bytes<std::complex<float>>(m, n, !fortran, 4),
          "split write " + M.name());
    }
  }
}

// A mesh smaller than the world: the idle ranks return at once, the active ones do the work.
TEST(NpyIo, IdleRanks) {
  const Mesh mesh(MPI_COMM_WORLD, MeshShape({"x"}, {1}), true);
  put_file(file("idle.npy"), header("<f8", true, shape(3, 2)) + data_bytes<double>(3, 2, true, 6));
  DistMatrix<double> A(mesh, 3, 2, "A[I_X,J]");
  read_npy(file("idle.npy"), A);
  if (mesh.active()) {
    for (index_t j = 0; j < 2; ++j)
      for (index_t i = 0; i < 3; ++i) EXPECT_EQ(A.local(i, j), entry<double>(i, j, 6));
  }
  write_npy(file("idle_out.npy"), A, false);
  MPI_Barrier(MPI_COMM_WORLD);
  expect_bytes(file("idle_out.npy"),
               header("<f8", false, shape(3, 2)) + data_bytes<double>(3, 2, false, 6),
               "write from a 1-rank mesh");
}

}  // namespace
}  // namespace shardmm::testing
