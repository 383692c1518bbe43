# Finds MPI, a BLAS with its CBLAS header, and (optionally) ScaLAPACK built on that MPI.
#
#   MPI        find_package(MPI): the MPI whose compiler wrappers CMake finds (another one:
#              -DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich
#              -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich, as scripts/test --mpi mpich does).
#   BLAS       find_package(BLAS) with BLA_VENDOR (default: OpenBLAS where it is found, else any
#              BLAS), or SHARDMM_BLAS_PKG, a pkg-config module name (e.g. blis, openblas,
#              mkl-dynamic-lp64-seq) that wins over FindBLAS. The CBLAS header: cblas.h (or
#              MKL's mkl_cblas.h) next to the library's own headers; SHARDMM_CBLAS_INCLUDE_DIR
#              overrides.
#   ScaLAPACK  SHARDMM_SCALAPACK = AUTO (use it when found) | ON (required) | OFF; the library
#              name is SHARDMM_SCALAPACK_NAME (default scalapack-openmpi or scalapack-mpich, as
#              Debian names them, then scalapack).
find_package(MPI REQUIRED COMPONENTS C CXX)
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _shardmm_mpi_version
  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX MATCH "^[^\n]*" _shardmm_mpi_version "${_shardmm_mpi_version}")
if(_shardmm_mpi_version MATCHES "Open MPI|OpenRTE")
  set(SHARDMM_MPI_FLAVOR openmpi)
elseif(_shardmm_mpi_version MATCHES "HYDRA|MPICH")
  set(SHARDMM_MPI_FLAVOR mpich)
else()
  set(SHARDMM_MPI_FLAVOR other)
endif()
set(SHARDMM_MPI_IS_OPENMPI OFF)
if(SHARDMM_MPI_FLAVOR STREQUAL "openmpi")
  set(SHARDMM_MPI_IS_OPENMPI ON)
endif()

# ---------------------------------------------------------------- BLAS
set(SHARDMM_BLAS_PKG "" CACHE STRING "pkg-config module of the BLAS (empty: FindBLAS with BLA_VENDOR)")
set(SHARDMM_BLAS_LIBRARIES "" CACHE STRING "The BLAS as a list of libraries, used as given (Spack)")
if(SHARDMM_BLAS_LIBRARIES)
  set(SHARDMM_BLAS_VENDOR "given")
elseif(SHARDMM_BLAS_PKG)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(SHARDMM_BLAS_PC REQUIRED ${SHARDMM_BLAS_PKG})
  set(SHARDMM_BLAS_LIBRARIES ${SHARDMM_BLAS_PC_LINK_LIBRARIES})
  set(_shardmm_blas_hints ${SHARDMM_BLAS_PC_INCLUDE_DIRS})
  set(SHARDMM_BLAS_VENDOR "pkg-config ${SHARDMM_BLAS_PKG}")
else()
  # Debian keeps each BLAS's development library in a folder of its own (openblas-pthread,
  # blis-pthread, ...), outside the linker's default path: searched as well, never first
  # over what the site points CMake to.
  foreach(_flavor openblas-pthread openblas-openmp openblas-serial blis-pthread blis-openmp blis-serial)
    list(APPEND CMAKE_LIBRARY_PATH /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/${_flavor})
  endforeach()
  if(NOT DEFINED BLA_VENDOR)  # OpenBLAS by default, any other BLAS where it is missing
    set(BLA_VENDOR OpenBLAS)
    find_package(BLAS QUIET)
    if(NOT BLAS_FOUND)
      unset(BLA_VENDOR)
    endif()
  endif()
  find_package(BLAS REQUIRED)
  set(SHARDMM_BLAS_LIBRARIES ${BLAS_LIBRARIES})
  set(SHARDMM_BLAS_VENDOR "${BLA_VENDOR}")
endif()
list(GET SHARDMM_BLAS_LIBRARIES 0 _shardmm_blas_first)
get_filename_component(_shardmm_blas_dir "${_shardmm_blas_first}" DIRECTORY)
get_filename_component(_shardmm_blas_flavor "${_shardmm_blas_dir}" NAME)
get_filename_component(_shardmm_blas_prefix "${_shardmm_blas_dir}/../.." ABSOLUTE)
set(_shardmm_cblas_suffixes ${CMAKE_LIBRARY_ARCHITECTURE}/${_shardmm_blas_flavor} ${_shardmm_blas_flavor}
  openblas blis mkl)
if(_shardmm_blas_first MATCHES "openblas")
  list(PREPEND _shardmm_cblas_suffixes ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread)
elseif(_shardmm_blas_first MATCHES "blis")
  list(PREPEND _shardmm_cblas_suffixes ${CMAKE_LIBRARY_ARCHITECTURE}/blis-pthread)
endif()
set(SHARDMM_CBLAS_HEADER cblas.h)
if(_shardmm_blas_first MATCHES "mkl")
  set(SHARDMM_CBLAS_HEADER mkl_cblas.h)
endif()
find_path(SHARDMM_CBLAS_INCLUDE_DIR NAMES ${SHARDMM_CBLAS_HEADER}
  HINTS ${_shardmm_blas_hints} ${_shardmm_blas_prefix}/include ${_shardmm_blas_dir}/../include
  PATH_SUFFIXES ${_shardmm_cblas_suffixes})
if(NOT SHARDMM_CBLAS_INCLUDE_DIR)
  message(FATAL_ERROR "shardmm: no ${SHARDMM_CBLAS_HEADER} for the BLAS ${SHARDMM_BLAS_LIBRARIES}; "
    "point -DSHARDMM_CBLAS_INCLUDE_DIR=DIR to it")
endif()
add_library(Shardmm::BLAS INTERFACE IMPORTED)
set_target_properties(Shardmm::BLAS PROPERTIES
  INTERFACE_LINK_LIBRARIES "${SHARDMM_BLAS_LIBRARIES}"
  INTERFACE_INCLUDE_DIRECTORIES "${SHARDMM_CBLAS_INCLUDE_DIR}"
  INTERFACE_COMPILE_DEFINITIONS "SHARDMM_CBLAS_HEADER=<${SHARDMM_CBLAS_HEADER}>")
string(REPLACE ";" " " SHARDMM_PC_BLAS_LIBS "${SHARDMM_BLAS_LIBRARIES}")

# ---------------------------------------------------------------- ScaLAPACK
set(SHARDMM_SCALAPACK AUTO CACHE STRING "Use ScaLAPACK (the drop-in, the comparisons): AUTO, ON or OFF")
set_property(CACHE SHARDMM_SCALAPACK PROPERTY STRINGS AUTO ON OFF)
if(SHARDMM_MPI_FLAVOR STREQUAL "other")
  set(_shardmm_scalapack_default scalapack)
else()
  set(_shardmm_scalapack_default scalapack-${SHARDMM_MPI_FLAVOR})
endif()
set(SHARDMM_SCALAPACK_NAME ${_shardmm_scalapack_default} CACHE STRING
  "ScaLAPACK library name built on this MPI (Debian: scalapack-openmpi, scalapack-mpich)")
set(SHARDMM_SCALAPACK_LIBRARY "")
if(NOT SHARDMM_SCALAPACK STREQUAL "OFF")
  if(IS_ABSOLUTE "${SHARDMM_SCALAPACK_NAME}" AND EXISTS "${SHARDMM_SCALAPACK_NAME}")
    set(SHARDMM_SCALAPACK_PATH "${SHARDMM_SCALAPACK_NAME}")  # a library file (Spack)
  else()
    find_library(SHARDMM_SCALAPACK_PATH NAMES ${SHARDMM_SCALAPACK_NAME})
  endif()
  if(SHARDMM_SCALAPACK_PATH)
    set(SHARDMM_SCALAPACK_LIBRARY ${SHARDMM_SCALAPACK_PATH})
  elseif(SHARDMM_SCALAPACK STREQUAL "ON")
    message(FATAL_ERROR "shardmm: SHARDMM_SCALAPACK=ON but no library ${SHARDMM_SCALAPACK_NAME} "
      "(set SHARDMM_SCALAPACK_NAME, or SHARDMM_SCALAPACK=OFF to build without it)")
  endif()
endif()
if(SHARDMM_SCALAPACK_LIBRARY)
  add_library(Shardmm::ScaLAPACK INTERFACE IMPORTED)
  # The BLAS first: ScaLAPACK's BLAS calls then bind to the same BLAS.
  set_target_properties(Shardmm::ScaLAPACK PROPERTIES
    INTERFACE_LINK_LIBRARIES "${SHARDMM_SCALAPACK_LIBRARY};${SHARDMM_BLAS_LIBRARIES};MPI::MPI_C")
  set(_shardmm_scalapack_said "${SHARDMM_SCALAPACK_LIBRARY}")
else()
  string(CONCAT _shardmm_scalapack_said "none (SHARDMM_SCALAPACK=${SHARDMM_SCALAPACK}): the "
    "drop-in, --algo scalapack and the ScaLAPACK tests are left out")
endif()

message(STATUS "shardmm: MPI ${MPI_CXX_VERSION} standard, ${_shardmm_mpi_version}, mpiexec ${MPIEXEC_EXECUTABLE}")
message(STATUS "shardmm: BLAS ${SHARDMM_BLAS_VENDOR} = ${SHARDMM_BLAS_LIBRARIES} (${SHARDMM_CBLAS_HEADER} in ${SHARDMM_CBLAS_INCLUDE_DIR})")
message(STATUS "shardmm: ScaLAPACK = ${_shardmm_scalapack_said}")
