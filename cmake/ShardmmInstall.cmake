# Install rules and the package: headers; libshardmm (C++ library + C API),
# libshardmm_scalapack and libshardmm_pxgemm; the launcher; shardmmConfig.cmake + version file
# and shardmmTargets.cmake (shardmm::shardmm, shardmm::scalapack, shardmm::pxgemm); the
# pkg-config files shardmm.pc (C++: adds -std=c++20), shardmm-c.pc (the C API, for C compilers)
# and shardmm-scalapack.pc (the drop-in, C flags). Relocatable: `cmake --install build --prefix
# DIR` works for any DIR.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SHARDMM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/shardmm)
set(_shardmm_libraries shardmm)
if(TARGET shardmm_scalapack)
  list(APPEND _shardmm_libraries shardmm_scalapack shardmm_pxgemm)
endif()

# Installed binaries find the shardmm libraries next to them and OpenBLAS / ScaLAPACK (outside
# the loader's default path on Debian) through their RUNPATH.
set_target_properties(${_shardmm_libraries} PROPERTIES
  INSTALL_RPATH "$ORIGIN" INSTALL_RPATH_USE_LINK_PATH ON)
set_target_properties(shardmm_cli PROPERTIES
  INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}" INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS ${_shardmm_libraries} EXPORT shardmmTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS shardmm_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/shardmm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT shardmmTargets NAMESPACE shardmm:: DESTINATION ${SHARDMM_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/shardmmConfig.cmake.in
  ${PROJECT_BINARY_DIR}/shardmmConfig.cmake INSTALL_DESTINATION ${SHARDMM_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/shardmmConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)  # 0.x: a minor version may break the API
install(FILES ${PROJECT_BINARY_DIR}/shardmmConfig.cmake
  ${PROJECT_BINARY_DIR}/shardmmConfigVersion.cmake DESTINATION ${SHARDMM_INSTALL_CMAKEDIR})

# pkg-config: prefix relative to the .pc file, so the files stay valid wherever installed.
# shardmm-c carries what every consumer needs (shardmm's and MPI's include directories,
# -lshardmm and MPI's C library: the public headers include <mpi.h>); shardmm adds the C++
# flags (-std=c++20, no MPI C++ bindings) and shardmm-scalapack the drop-in and ScaLAPACK.
# Debian names MPI's C module mpi-c (Open MPI, the default MPI) or mpich; another MPI: none.
if(SHARDMM_MPI_FLAVOR STREQUAL "openmpi")
  set(_shardmm_pc_mpi mpi-c)
elseif(SHARDMM_MPI_FLAVOR STREQUAL "mpich")
  set(_shardmm_pc_mpi mpich)
else()
  set(_shardmm_pc_mpi "")
endif()
set(SHARDMM_PC_MPI "${_shardmm_pc_mpi}" CACHE STRING
  "pkg-config module of MPI's C bindings the .pc files require (empty: MPI's flags written in)")
set(SHARDMM_PC_MPI_CFLAGS "")
set(SHARDMM_PC_MPI_LIBS "")
if(NOT SHARDMM_PC_MPI)
  foreach(_dir IN LISTS MPI_C_INCLUDE_DIRS)
    string(APPEND SHARDMM_PC_MPI_CFLAGS " -I${_dir}")
  endforeach()
  foreach(_lib IN LISTS MPI_C_LIBRARIES)
    string(APPEND SHARDMM_PC_MPI_LIBS " ${_lib}")
  endforeach()
endif()
file(RELATIVE_PATH SHARDMM_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" SHARDMM_PC_TO_PREFIX "${SHARDMM_PC_TO_PREFIX}")
set(_shardmm_pc_files shardmm-c shardmm)
if(TARGET shardmm_scalapack)
  list(APPEND _shardmm_pc_files shardmm-scalapack)
endif()
foreach(pc IN LISTS _shardmm_pc_files)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
