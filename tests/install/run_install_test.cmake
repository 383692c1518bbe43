# The install test (ctest label "install"):
#   cmake --install <build> --prefix <work>/prefix, then build tests/install/cmake_project
#   (find_package) and tests/install/make_project (pkg-config) against that prefix, and run
#   each of their programs under mpiexec on 2 ranks.
# Variables: BUILD_DIR SOURCE_DIR WORK_DIR MPIEXEC MPIEXEC_FLAGS (;-list) GENERATOR
cmake_minimum_required(VERSION 3.25)

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${what}:\n${out}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/make-build)
run("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

foreach(f include/shardmm/shardmm.hpp include/shardmm/c/shardmm.h include/shardmm/c/scalapack.h
          lib/cmake/shardmm/shardmmConfig.cmake lib/cmake/shardmm/shardmmConfigVersion.cmake
          lib/pkgconfig/shardmm.pc lib/pkgconfig/shardmm-scalapack.pc lib/libshardmm_pxgemm.so
          bin/shardmm)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()

run("configure the CMake consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/cmake_project
    -B ${WORK_DIR}/cmake-build -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix}
    -DCMAKE_BUILD_TYPE=Release)
run("build the CMake consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)

set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
run("build the pkg-config consumer" make -f ${SOURCE_DIR}/make_project/Makefile
    SRC=${SOURCE_DIR}/src OUT=${WORK_DIR}/make-build)

foreach(dir cmake-build make-build)
  foreach(program consumer_cxx consumer_c consumer_pdgemm)
    run("${dir}/${program} on 2 ranks" ${MPIEXEC} -n 2 ${MPIEXEC_FLAGS}
        ${WORK_DIR}/${dir}/${program})
  endforeach()
endforeach()
run("the installed launcher" ${prefix}/bin/shardmm --help)
