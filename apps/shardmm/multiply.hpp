// `shardmm multiply A.npy B.npy -o C.npy`: C = alpha op(A) op(B) + beta C0 from files, read
// and written with collective MPI-IO straight into / out of the distributed layouts.
#pragma once

#include <string>

namespace shardmm::cli {

struct MultiplyConfig {
  std::string a, b, output, c_in;
  std::string transa = "N", transb = "N";
  double alpha = 1.0, beta = 0.0;
  std::string algo = "auto";
  std::string layout_a, layout_b, layout_c;  ///< notation; empty: bc(nb,nb)
  std::int64_t nb = 64;
  std::string format = "npy";                ///< npy | raw
  std::string shape_a, shape_b, shape_c;     ///< raw: "RxC"
  std::string dtype = "f64";                 ///< raw: element type
  std::string order = "F";                   ///< raw: C (row-major) or F (column-major) files
  bool fortran_out = true;                   ///< npy output order
  bool quiet = false;
};

int run_multiply(const MultiplyConfig& cfg);

}  // namespace shardmm::cli
