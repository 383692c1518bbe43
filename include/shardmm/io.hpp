// Matrix files: NumPy .npy (versions 1.0, 2.0, 3.0) and raw binary, read and written
// collectively with MPI-IO. Every rank reads or writes only the elements of its own tile; no
// rank ever holds the whole matrix. Data in files is little-endian.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "shardmm/dist_matrix.hpp"
#include "shardmm/types.hpp"

namespace shardmm {

/// What the header of a .npy file says.
struct NpyHeader {
  Dtype dtype = Dtype::F64;
  index_t rows = 0, cols = 0;    ///< shape (n,) is n x 1, shape () is 1 x 1
  bool fortran_order = false;    ///< column-major data (true) or row-major (false)
  std::int64_t data_offset = 0;  ///< byte offset of the first element
  int version = 1;               ///< major format version: 1, 2 or 3
};

/// The .npy descr of a dtype: "<f4", "<f8", "<c8", "<c16".
std::string npy_descr(Dtype dtype);

/// Bytes from the start of the file to the first element, from the preamble (magic, version,
/// header length: 10 bytes for version 1, 12 for versions 2 and 3). Throws IoError on a bad
/// magic string, an unknown version or fewer bytes than the preamble.
std::int64_t npy_header_size(std::string_view file_start);

/// Parses a .npy header. `file_start` holds at least the first npy_header_size() bytes of the
/// file. Throws IoError saying what is wrong: bad magic, truncated header, malformed dict,
/// unsupported or big-endian dtype, negative or too large dimensions, more than 2 dimensions.
NpyHeader parse_npy_header(std::string_view file_start);

/// A complete .npy header (version 1.0, or 2.0 when the dict does not fit 64 KiB) padded with
/// spaces and a newline so the data starts at a multiple of 64 bytes. Shape is (rows, cols).
std::string make_npy_header(Dtype dtype, index_t rows, index_t cols, bool fortran_order);

/// Collective over `comm`: rank 0 reads and parses the header of `path` and checks the file
/// holds all the data; every rank returns the header or throws the same IoError (missing,
/// unreadable, malformed or truncated file).
NpyHeader read_npy_header(const std::string& path, MPI_Comm comm);

/// Collective over dst's mesh: reads a .npy file into dst's layout. Every rank reads its own
/// tile (replicas included); on an unreduced layout the cells off coordinate 0 of the unreduced
/// axes get zeros. Throws IoError (same on every rank) when the file is unusable or holds
/// another dtype, DimensionMismatch when its shape is not dst's. On error dst's contents are
/// unspecified.
template <Scalar T>
void read_npy(const std::string& path, DistMatrix<T>& dst);

/// Collective over src's mesh: writes src as a .npy file in Fortran (column-major) or C
/// (row-major) order. The data goes to a temporary file next to `path` that is renamed onto
/// `path` only when every rank succeeded, so on failure (IoError on every rank) `path` keeps
/// its old contents. Throws InvalidArgument for an unreduced layout (sum it first).
template <Scalar T>
void write_npy(const std::string& path, const DistMatrix<T>& src, bool fortran_order = true);

/// Like read_npy for a raw file: `data_offset` bytes that are skipped (another format's
/// header, say), then exactly rows*cols*sizeof(T) bytes of data to the end of the file. The
/// offset is 64-bit; a negative one is an InvalidArgument.
template <Scalar T>
void read_raw(const std::string& path, DistMatrix<T>& dst, bool fortran_order,
              std::int64_t data_offset = 0);

/// Like write_npy without a header.
template <Scalar T>
void write_raw(const std::string& path, const DistMatrix<T>& src, bool fortran_order);

}  // namespace shardmm
