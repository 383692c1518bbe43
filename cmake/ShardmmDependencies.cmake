# Finds MPI, OpenBLAS (explicitly, never the libblas alternative) and ScaLAPACK for Open MPI.
find_package(MPI REQUIRED COMPONENTS C CXX)

# OpenBLAS: Debian installs libopenblas.so and cblas.h under the openblas-pthread tree;
# we link libopenblas by name so the selected libblas.so.3 alternative never matters.
find_library(SHARDMM_OPENBLAS_LIBRARY NAMES openblas
  PATHS /usr/lib/x86_64-linux-gnu/openblas-pthread /usr/lib/x86_64-linux-gnu REQUIRED)
find_path(SHARDMM_OPENBLAS_INCLUDE NAMES cblas.h
  PATHS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas REQUIRED
  NO_DEFAULT_PATH)
add_library(Shardmm::OpenBLAS INTERFACE IMPORTED)
set_target_properties(Shardmm::OpenBLAS PROPERTIES
  INTERFACE_LINK_LIBRARIES "${SHARDMM_OPENBLAS_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${SHARDMM_OPENBLAS_INCLUDE}")

find_library(SHARDMM_SCALAPACK_LIBRARY NAMES scalapack-openmpi scalapack)
if(SHARDMM_SCALAPACK_LIBRARY)
  add_library(Shardmm::ScaLAPACK INTERFACE IMPORTED)
  # OpenBLAS first: ScaLAPACK's BLAS calls then bind to OpenBLAS as well.
  set_target_properties(Shardmm::ScaLAPACK PROPERTIES
    INTERFACE_LINK_LIBRARIES "${SHARDMM_SCALAPACK_LIBRARY};${SHARDMM_OPENBLAS_LIBRARY};MPI::MPI_C")
endif()

execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _shardmm_mpi_version
  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX MATCH "^[^\n]*" _shardmm_mpi_version "${_shardmm_mpi_version}")
if(_shardmm_mpi_version MATCHES "Open MPI|OpenRTE")
  set(SHARDMM_MPI_IS_OPENMPI ON)
else()
  set(SHARDMM_MPI_IS_OPENMPI OFF)
endif()
message(STATUS "shardmm: MPI ${MPI_CXX_VERSION} standard, ${_shardmm_mpi_version}, mpiexec ${MPIEXEC_EXECUTABLE}")
message(STATUS "shardmm: BLAS = ${SHARDMM_OPENBLAS_LIBRARY} (cblas.h in ${SHARDMM_OPENBLAS_INCLUDE})")
message(STATUS "shardmm: ScaLAPACK = ${SHARDMM_SCALAPACK_LIBRARY}")
