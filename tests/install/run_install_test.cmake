# The install test (ctest label "install"):
#   cmake --install <build> --prefix <work>/prefix, then, against that prefix,
#   - tests/install/cmake_project (find_package, no C++ standard of its own) as a C and C++
#     project and as a C-only and a C++-only one;
#   - the same programs with plain gcc/g++ and with mpicc/mpicxx and pkg-config, as
#     docs/USAGE.md shows:
#       g++ consumer.cpp $(pkg-config --cflags --libs shardmm)            (C++20 flags)
#       gcc consumer.c $(pkg-config --cflags --libs shardmm-c)            (C API)
#       gcc consumer_pdgemm.c $(pkg-config --cflags --libs shardmm-scalapack)
#     with no flag of their own: each has a run path to the installed libdir (the .pc files'
#     -Wl,-rpath) and runs with LD_LIBRARY_PATH unset;
#   and runs every program under mpiexec on 2 ranks (each checks its result; one byte-identical
#   to a program that ran, as the one-language builds and the MPI wrappers' often make, is not
#   run twice). Also checks that no installed library needs libmpi_cxx and that -std=c++20 is
#   only in shardmm.pc.
#   With PYTHON (the Python package is built): the installed package, imported from a
#   directory outside the build with PYTHONPATH=<prefix>/PYTHON_DIR, runs a gemm on 2 ranks
#   against the installed libshardmm, and PYTHON_DIR under /usr/local is on python3's path.
# Variables: BUILD_DIR SOURCE_DIR WORK_DIR MPIEXEC MPIEXEC_FLAGS (;-list) GENERATOR
#            PYTHON PYTHON_DIR LAUNCHER (the CMake consumers' compiler launcher, as ccache;
#            empty: none; the one-line compile-and-link commands below are not cached)
cmake_minimum_required(VERSION 3.25)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${what}:\n${out}")
  set(out "${out}" PARENT_SCOPE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

# run_on_2_ranks(WHAT PROGRAM [SAME_AS]): PROGRAM under mpiexec on 2 ranks (it checks its
# result), with LD_LIBRARY_PATH unset; when it is byte-identical to SAME_AS, which ran before
# (the same source built another way to the same bytes), that run stands for it.
function(run_on_2_ranks what program)
  if(ARGC GREATER 2)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${program} ${ARGV2}
                    RESULT_VARIABLE differs)
    if(differs EQUAL 0)
      message(STATUS "${what}: byte-identical to ${ARGV2}, which ran")
      return()
    endif()
  endif()
  run("${what}" ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${MPIEXEC} -n 2 ${MPIEXEC_FLAGS}
      ${program})
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/pkg-config)
run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

foreach(f include/shardmm/shardmm.hpp include/shardmm/c/shardmm.h include/shardmm/c/scalapack.h
          lib/cmake/shardmm/shardmmConfig.cmake lib/cmake/shardmm/shardmmConfigVersion.cmake
          lib/pkgconfig/shardmm.pc lib/pkgconfig/shardmm-c.pc lib/pkgconfig/shardmm-scalapack.pc
          lib/libshardmm_pxgemm.so bin/shardmm)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()

# The libraries link MPI's C bindings only.
find_program(READELF readelf)
if(READELF)
  foreach(lib shardmm shardmm_scalapack shardmm_pxgemm)
    run("readelf -d lib${lib}.so" ${READELF} -d ${prefix}/lib/lib${lib}.so)
    if(out MATCHES "mpi_cxx|mpicxx")
      message(FATAL_ERROR "lib${lib}.so needs MPI's C++ bindings:\n${out}")
    endif()
  endforeach()
endif()

# ---- CMake consumers: C and C++, C only, C++ only.
set(cmake_programs_all consumer_cxx consumer_c consumer_pdgemm)
set(cmake_programs_C consumer_c consumer_pdgemm)
set(cmake_programs_CXX consumer_cxx)
foreach(langs all C CXX)
  set(langs_arg "")
  if(NOT langs STREQUAL "all")
    set(langs_arg -DCONSUMER_LANGUAGES=${langs})
  endif()
  run("configure the CMake consumer (${langs})" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/cmake_project
      -B ${WORK_DIR}/cmake-${langs} -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix}
      -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_COMPILER_LAUNCHER=${LAUNCHER}"
      "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}" ${langs_arg})
  run("build the CMake consumer (${langs})" ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-${langs})
  foreach(program IN LISTS cmake_programs_${langs})
    set(same_as "")
    if(NOT langs STREQUAL "all")
      set(same_as ${WORK_DIR}/cmake-all/${program})
    endif()
    run_on_2_ranks("cmake-${langs}/${program} on 2 ranks" ${WORK_DIR}/cmake-${langs}/${program}
                   ${same_as})
  endforeach()
endforeach()

# ---- pkg-config consumers: plain gcc / g++, no MPI compiler wrapper.
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
foreach(pc shardmm shardmm-c shardmm-scalapack)
  run("pkg-config --cflags --libs ${pc}" pkg-config --cflags --libs ${pc})
  if(pc STREQUAL "shardmm" AND NOT out MATCHES "-std=c\\+\\+20")
    message(FATAL_ERROR "shardmm.pc lacks -std=c++20: ${out}")
  elseif(NOT pc STREQUAL "shardmm" AND out MATCHES "-std=")
    message(FATAL_ERROR "${pc}.pc gives a C compiler a -std flag: ${out}")
  endif()
endforeach()
set(src ${SOURCE_DIR}/src)
set(bin ${WORK_DIR}/pkg-config)
# The .pc files' own flags only (their -Wl,-rpath): every program runs with LD_LIBRARY_PATH unset.
run("g++ + shardmm.pc" sh -xc
    "g++ ${src}/consumer.cpp -o ${bin}/consumer_cxx $(pkg-config --cflags --libs shardmm)")
run("gcc + shardmm-c.pc" sh -xc
    "gcc ${src}/consumer.c -o ${bin}/consumer_c $(pkg-config --cflags --libs shardmm-c)")
run("gcc + shardmm-scalapack.pc" sh -xc
    "gcc ${src}/consumer_pdgemm.c -o ${bin}/consumer_pdgemm $(pkg-config --cflags --libs shardmm-scalapack)")
set(pkg_config_programs consumer_cxx consumer_c consumer_pdgemm)
# ... and with MPI's compiler wrappers, as docs/USAGE.md shows them.
find_program(MPICC mpicc)
find_program(MPICXX mpicxx)
if(MPICC AND MPICXX)
  run("mpicxx + shardmm.pc" sh -xc
      "${MPICXX} ${src}/consumer.cpp -o ${bin}/mpicxx_consumer_cxx $(pkg-config --cflags --libs shardmm)")
  run("mpicc + shardmm-c.pc" sh -xc
      "${MPICC} ${src}/consumer.c -o ${bin}/mpicc_consumer_c $(pkg-config --cflags --libs shardmm-c)")
  run("mpicc + shardmm-scalapack.pc" sh -xc
      "${MPICC} ${src}/consumer_pdgemm.c -o ${bin}/mpicc_consumer_pdgemm $(pkg-config --cflags --libs shardmm-scalapack)")
  list(APPEND pkg_config_programs mpicxx_consumer_cxx mpicc_consumer_c mpicc_consumer_pdgemm)
else()
  message(STATUS "mpicc / mpicxx not found: the pkg-config lines with MPI's wrappers are skipped")
endif()
foreach(program IN LISTS pkg_config_programs)
  if(READELF)  # the run path names the installed libdir
    run("readelf -d ${program}" ${READELF} -d ${bin}/${program})
    if(NOT out MATCHES "(RUNPATH|RPATH)[^\n]*${prefix}/lib")
      message(FATAL_ERROR "${program} has no run path to ${prefix}/lib:\n${out}")
    endif()
  endif()
  string(REGEX REPLACE "^mpic(c|xx)_" "" plain ${program})  # mpicc_consumer_c: consumer_c
  set(same_as "")
  if(NOT plain STREQUAL program)
    set(same_as ${bin}/${plain})
  endif()
  run_on_2_ranks("pkg-config/${program} on 2 ranks (no LD_LIBRARY_PATH)" ${bin}/${program}
                 ${same_as})
endforeach()

run("the installed launcher" ${prefix}/bin/shardmm --help)

# ---- The Python package: found where it was installed, linked to the installed library.
if(PYTHON)
  set(check [=[
import os, sys, numpy as np, shardmm
prefix = os.environ["PREFIX"]
assert shardmm.__file__.startswith(prefix), shardmm.__file__
libs = {l.split()[-1] for l in open("/proc/self/maps") if "libshardmm.so" in l}
assert libs and all(lib.startswith(prefix) for lib in libs), libs
mesh = shardmm.Mesh()
A = shardmm.DistMatrix.from_global(mesh, np.arange(12.0).reshape(4, 3))
C, _ = shardmm.gemm(A, A, transb="T")
assert np.allclose(C.gather(), np.arange(12.0).reshape(4, 3) @ np.arange(12.0).reshape(4, 3).T)
]=])
  file(WRITE ${WORK_DIR}/check_python.py "${check}")
  run("the installed Python package on 2 ranks" ${CMAKE_COMMAND} -E env
      PYTHONPATH=${prefix}/${PYTHON_DIR} PREFIX=${prefix} OPENBLAS_NUM_THREADS=1
      ${MPIEXEC} -n 2 ${MPIEXEC_FLAGS} ${PYTHON} ${WORK_DIR}/check_python.py)
  run("python3's path" ${PYTHON} -c "print(__import__('sys').path)")
  if(NOT out MATCHES "/usr/local/${PYTHON_DIR}")
    message(FATAL_ERROR "/usr/local/${PYTHON_DIR} is not on ${PYTHON}'s path: ${out}")
  endif()
endif()
