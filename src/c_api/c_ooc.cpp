// shardmm_gemm_files: the C entry of gemm_files (include/shardmm/ooc.hpp) for .npy files.
#include "c_api/c_api.hpp"
#include "shardmm/ooc.hpp"

using namespace shardmm;
using shardmm::c_api::guarded;
using shardmm::c_api::require;

extern "C" int shardmm_gemm_files(MPI_Comm comm, char transa, const char* a_path, char transb,
                                  const char* b_path, double alpha_re, double alpha_im,
                                  double beta_re, double beta_im, const char* c0_path,
                                  const char* out_path, int out_fortran_order, int64_t memory_limit,
                                  const char* io) {
  return guarded([&] {
    const Op ta = parse_op(std::string_view(&transa, 1)),
             tb = parse_op(std::string_view(&transb, 1));
    MatrixFile out = MatrixFile::npy(require(out_path, "out_path"));
    out.fortran_order = out_fortran_order != 0;
    Options o;
    o.memory_limit = memory_limit;
    FileGemmSettings s;
    s.io = io ? parse_io_method(io) : IoMethod::Posix;
    gemm_files(comm, ta, MatrixFile::npy(require(a_path, "a_path")), tb,
               MatrixFile::npy(require(b_path, "b_path")), {alpha_re, alpha_im}, {beta_re, beta_im},
               c0_path ? MatrixFile::npy(c0_path) : MatrixFile{}, out, o, s);
  });
}
