# Test helpers.
#   shardmm_add_unit_test(NAME SOURCES ... [LIBS ...])
#   shardmm_add_mpi_test(NAME SOURCES ... [RANKS 1 2 3 4 6] [TIMEOUT s] [LIBS ...])
# MPI tests run through CMake's MPIEXEC_EXECUTABLE (with Open MPI: --oversubscribe, at 1 rank
# --bind-to none, and --allow-run-as-root as root),
# OPENBLAS_NUM_THREADS=1, a timeout so a deadlock fails, and the label "mpi".
#
# What a new test does so that the suite stays fast on 2 cores (scripts/test: ctest -j4 with
# Open MPI, SHARDMM_TEST_JOBS below; the suite's budget is 5 minutes):
# - gtest programs: shardmm_add_unit_test / shardmm_add_mpi_test. One program per area, not per
#   file: a program's start-up at 1, 2, 3, 4 and 6 ranks costs about 2.5 CPU seconds whatever
#   it tests, so a new file that runs at the same counts joins its area's program
#   (tests/CMakeLists.txt: mpi_core, mpi_gemm, mpi_blas3, mpi_files, mpi_words; tests/scalapack:
#   scalapack_pblas3). Such a program's files share one process: each test suite works in its
#   own directory (tests/mpi/npy_test_util.hpp's SuiteDir), and a test restores any
#   environment variable it sets. RANKS: only the counts where
#   the behaviour differs (1: no communication; 2: a line, the p = 2 paths; 3: a prime count,
#   1-D; 4: 2 x 2; 6: 2 x 3), not every count by habit: each extra oversubscribed run costs
#   ranks x startup (about 0.2 CPU seconds a rank) plus the waits' polling. A sweep of many
#   cases runs all of them at 1 and 2 ranks and spreads them over 3, 4 and 6
#   (tests/mpi/test_gemm.cpp's case_selected), or sweeps a case in full only at the smallest
#   count it fits in (tests/scalapack's SHARDMM_DROPIN_FULL_FROM). A typed sweep runs each case
#   in every element type at 1 and 2 ranks and in one type, the four taking turns, on more
#   (type_takes_case in tests/mpi/mpi_test_util.hpp): on 2 cores an oversubscribed case costs
#   3-6 times its 2-rank CPU, and what differs by type (kernels, MPI datatypes, byte images)
#   already runs in full at 1 and 2 ranks. Meshes a sweep reuses are made once (mesh_for).
# - Other commands under mpiexec: ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} N and the
#   flags of shardmm_mpiexec_flags(N VAR) (SHARDMM_MPIEXEC_EXTRA_FLAGS for scripts that
#   launch jobs themselves), shardmm_test_processors(TEST N) (N: the processes that compute;
#   a test that mostly waits, as the hang reports, 1), and shardmm_test_ranks_cap(TEST N).
#   Never PROCESSORS above the cores by hand: it makes the test run alone.
# - A script that runs several independent programs or launches (doc blocks, planner calls)
#   starts them together or a few at a time, not one after another: each launch is mostly
#   waiting (tests/docs/check_snippets.py --jobs, tests/multihost/calibrate_throttled.sh).
# - No sleeps or timeouts on the path of a passing test; RUN_SERIAL only where a test needs
#   the machine to itself (timing measured and checked, `pip install` into the build tree):
#   it idles every other slot. A deadline a test checks (a hang report's, say) leaves room for
#   another test on the same core: the suite runs two per core.
# - A test of more than ~20 s gets a COST (its seconds), so that a clean clone, which has no
#   Testing/Temporary/CTestCostData.txt yet, starts it first instead of ending on it.
#   scripts/test seeds that file from tests/ctest-costs.txt (a copy of it after a whole run on
#   2 cores; refresh it when tests are added or renamed): from a clean clone without it the
#   suite took 400 s, in a build tree with its own timings 356 s.
# - Sources compiled for two programs go in one OBJECT library (tests/scalapack's dropin).

# Open MPI refuses more ranks than cores and, as root, to start at all without these flags;
# other MPIs (MPICH's Hydra) oversubscribe by default and reject them. SHARDMM_MPI_IS_OPENMPI
# comes from cmake/ShardmmDependencies.cmake (mpiexec --version).
set(SHARDMM_MPIEXEC_EXTRA_FLAGS "")
if(SHARDMM_MPI_IS_OPENMPI)
  list(APPEND SHARDMM_MPIEXEC_EXTRA_FLAGS --oversubscribe)
  execute_process(COMMAND id -u OUTPUT_VARIABLE _shardmm_uid OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_shardmm_uid STREQUAL "0")
    list(APPEND SHARDMM_MPIEXEC_EXTRA_FLAGS --allow-run-as-root)
  endif()
endif()

# Open MPI's ranks yield their core while they wait when there are more ranks than cores
# (--oversubscribe), so the suite runs every rank count on 2 cores. MPICH (ch4:ucx) and others
# spin: there a test of more ranks than cores runs 5-10 times as long and times out. By
# default they get the MPI tests of at most as many ranks as the machine has cores; the rest
# are registered DISABLED (ctest lists them as "Not Run (Disabled)"). 0: every rank count.
cmake_host_system_information(RESULT _shardmm_cores QUERY NUMBER_OF_LOGICAL_CORES)
if(SHARDMM_MPI_IS_OPENMPI)
  set(_shardmm_max_ranks 0)
else()
  set(_shardmm_max_ranks ${_shardmm_cores})
endif()
set(SHARDMM_TEST_MAX_RANKS ${_shardmm_max_ranks} CACHE STRING
  "Largest rank count of the MPI tests that run (0: all; default: all with Open MPI, else the cores)")

# Open MPI binds each rank of a job of at most 2 ranks to a core of its own, counted from core 0
# in every job: two 1-rank tests that ctest runs side by side (-j2) shared core 0 while core 1
# idled. A 1-rank job gets SHARDMM_MPIEXEC_NP1_FLAGS (--bind-to none: the kernel places it).
# 2-rank jobs keep their binding: a rank per core, and SHARDMM_WAIT=auto then sleeps while it
# waits (2 ranks > 1 usable CPU), which a loaded machine needs (unbound, they spin).
set(SHARDMM_MPIEXEC_NP1_FLAGS "")
if(SHARDMM_MPI_IS_OPENMPI)
  set(SHARDMM_MPIEXEC_NP1_FLAGS --bind-to none)
endif()
# shardmm_mpiexec_flags(NP VAR): SHARDMM_MPIEXEC_EXTRA_FLAGS, and for NP = 1 the NP1 flags.
function(shardmm_mpiexec_flags np var)
  set(_flags ${SHARDMM_MPIEXEC_EXTRA_FLAGS})
  if(np EQUAL 1)
    list(APPEND _flags ${SHARDMM_MPIEXEC_NP1_FLAGS})
  endif()
  set(${var} ${_flags} PARENT_SCOPE)
endfunction()

# ctest's slots. scripts/test runs `ctest -j SHARDMM_TEST_JOBS`, and a test takes
# PROCESSORS = min(its busy processes, the cores) of them (shardmm_test_processors). With Open
# MPI, two slots per core: most tests here are a launch of a few tenths of a second (a 2-rank
# job kept 0.65 cores busy, a 6-rank one 1.25) or wait (watchdogs, timeouts), and with one
# slot per core they left a core idle for a third of the suite; Open MPI's oversubscribed ranks
# and SHARDMM_WAIT=auto's naps yield the core. Other MPIs' ranks spin while they wait: one per
# core. A plain `ctest -j <cores>` keeps working, only with less overlap.
if(SHARDMM_MPI_IS_OPENMPI)
  math(EXPR _shardmm_test_jobs "2 * ${_shardmm_cores}")
else()
  set(_shardmm_test_jobs ${_shardmm_cores})
endif()
set(SHARDMM_TEST_JOBS ${_shardmm_test_jobs} CACHE STRING
  "ctest -j of scripts/test (default: twice the cores with Open MPI, else the cores)")

# shardmm_failing_mpi_job(TEST...): tests whose MPI jobs are meant to fail (aborted by the
# watchdog, a rank exiting non-zero). Open MPI's mpirun then signals the job's ranks (SIGCONT,
# SIGTERM, SIGKILL) with a 1 s pause after each, even when every rank has already exited: no
# pause (OMPI_MCA_odls_base_sigkill_timeout=0; other MPIs have no such pause). Call it after
# any set_tests_properties(... ENVIRONMENT ...) of the test: it appends.
function(shardmm_failing_mpi_job)
  _shardmm_openmpi_env("OMPI_MCA_odls_base_sigkill_timeout=0" ${ARGN})
endfunction()

# shardmm_stalled_mpi_job(TEST...): jobs where ranks wait seconds for one that never comes (the
# hang reports): they yield their core to the other tests instead of spinning until the
# watchdog ends the job (OMPI_MCA_mpi_yield_when_idle=1, what Open MPI does by itself only when
# oversubscribed). The watchdog ends such a job with a failure: a failing job too. Appends, as
# shardmm_failing_mpi_job.
function(shardmm_stalled_mpi_job)
  shardmm_failing_mpi_job(${ARGN})
  _shardmm_openmpi_env("OMPI_MCA_mpi_yield_when_idle=1" ${ARGN})
endfunction()

# _shardmm_openmpi_env(ASSIGNMENT TEST...): with Open MPI, appends ASSIGNMENT (VAR=VALUE) to
# each TEST's ENVIRONMENT; other MPIs ignore Open MPI's variables.
function(_shardmm_openmpi_env assignment)
  if(SHARDMM_MPI_IS_OPENMPI)
    foreach(test IN LISTS ARGN)
      set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "${assignment}")
    endforeach()
  endif()
endfunction()

# shardmm_quick_mpi_start(): at the end of a CMakeLists.txt that adds tests. With Open MPI,
# every test of the directory gets OMPI_MCA_pml=^cm: the cm PML probes for Omni-Path and
# libfabric networks in each MPI_Init (0.2 s of waiting per launch on a machine without one,
# 0.27 s against 0.06 s for an empty program), and on one node ob1 is the PML chosen either way.
# A test of a few short launches takes a third less time.
function(shardmm_quick_mpi_start)
  get_property(_tests DIRECTORY PROPERTY TESTS)
  _shardmm_openmpi_env("OMPI_MCA_pml=^cm" ${_tests})
endfunction()

# shardmm_test_processors(TEST NP): TEST keeps NP processes busy; ctest reserves NP slots for
# it up to the cores, and one and a half times the cores when NP is more, so that two
# oversubscribed jobs (12 ranks on 2 cores) never run side by side: their ranks polled for
# peers the other job displaced. On 2 cores at -j4 the suite then took 577 CPU s instead of
# 675, in the same wall time; with the multi-host tests at one slot, 520 CPU s and 356 s
# instead of 390 (-j6: 386 s).
function(shardmm_test_processors test np)
  set(_n ${np})
  if(_n GREATER _shardmm_cores)  # at most one slot fewer than ctest's -j, at least the cores
    math(EXPR _n "${_shardmm_cores} + (${_shardmm_cores} + 1) / 2")
    if(_n GREATER_EQUAL SHARDMM_TEST_JOBS)
      math(EXPR _n "${SHARDMM_TEST_JOBS} - 1")
    endif()
    if(_n LESS _shardmm_cores)
      set(_n ${_shardmm_cores})
    endif()
  endif()
  set_tests_properties(${test} PROPERTIES PROCESSORS ${_n})
endfunction()

# shardmm_test_ranks_cap(TEST NP): disables TEST when NP exceeds SHARDMM_TEST_MAX_RANKS.
function(shardmm_test_ranks_cap test np)
  if(SHARDMM_TEST_MAX_RANKS GREATER 0 AND np GREATER SHARDMM_TEST_MAX_RANKS)
    set_tests_properties(${test} PROPERTIES DISABLED TRUE)
  endif()
endfunction()

if(NOT SHARDMM_BUILD_TESTS)
  return()
endif()
find_package(GTest REQUIRED)

# Test code is compiled at -O1 in optimised builds: half the compile time of -O3 (gtest's
# expansions are most of it), and it is not what is measured; under the sanitizers at -O0, as
# the launcher (SHARDMM_APP_OPTIMIZE). The library the tests link keeps the build type's flags.
if(SHARDMM_SANITIZE)
  set(SHARDMM_TEST_OPTIMIZE -O0)
else()
  set(SHARDMM_TEST_OPTIMIZE $<$<CONFIG:Release,RelWithDebInfo>:-O1>)
endif()

# One precompiled header for every gtest program: GoogleTest's, MPI's and shardmm's public
# headers are about half of a test source's compile time (2.4 of ~4.6 CPU seconds). The test
# targets reuse it (shardmm_test_pch below), so they must compile with its options.
# An executable, so that it compiles as the test programs do (-fPIE, not a library's -fPIC).
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/tests/pch_main.cpp CONTENT "int main() { return 0; }\n")
add_executable(shardmm_test_pch ${CMAKE_BINARY_DIR}/tests/pch_main.cpp)
target_link_libraries(shardmm_test_pch PRIVATE shardmm GTest::gtest)
target_compile_options(shardmm_test_pch PRIVATE ${SHARDMM_WARNINGS} ${SHARDMM_TEST_OPTIMIZE})
target_precompile_headers(shardmm_test_pch PRIVATE
  $<$<COMPILE_LANGUAGE:CXX>:<gtest/gtest.h$<ANGLE-R>> $<$<COMPILE_LANGUAGE:CXX>:<mpi.h$<ANGLE-R>>
  $<$<COMPILE_LANGUAGE:CXX>:<shardmm/shardmm.hpp$<ANGLE-R>>)

# shardmm_test_pch_use(TARGET): TARGET's sources start from the test PCH, when they are all
# C++ (the PCH is C++ only; the C programs of tests/c and tests/scalapack compile without,
# as programs made of another target's objects do).
function(shardmm_test_pch_use target)
  get_target_property(_sources ${target} SOURCES)
  foreach(_source IN LISTS _sources)
    if(_source MATCHES "\\.c$|TARGET_OBJECTS")
      return()
    endif()
  endforeach()
  target_precompile_headers(${target} REUSE_FROM shardmm_test_pch)
endfunction()

# shardmm_test_optimized(TARGET...): under the sanitizers these tests keep -O1: their own code
# does real work (references, operand files), which at -O0 costs more run time than it saves
# in compile time (and, compiled unlike the PCH, without it).
function(shardmm_test_optimized)
  if(SHARDMM_SANITIZE)
    foreach(target IN LISTS ARGN)
      target_compile_options(${target} PRIVATE -O1)
      set_target_properties(${target} PROPERTIES DISABLE_PRECOMPILE_HEADERS ON)
    endforeach()
  endif()
endfunction()

function(shardmm_add_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE shardmm GTest::gtest GTest::gtest_main ${T_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${SHARDMM_WARNINGS} ${SHARDMM_TEST_OPTIMIZE})
  shardmm_test_pch_use(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 120
    ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
endfunction()

function(shardmm_add_mpi_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;RANKS;LIBS" ${ARGN})
  if(NOT T_RANKS)
    set(T_RANKS 1 2 3 4 6)
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 180)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE shardmm shardmm_mpi_gtest_main ${T_LIBS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${SHARDMM_WARNINGS} ${SHARDMM_TEST_OPTIMIZE})
  shardmm_test_pch_use(${name})
  foreach(np IN LISTS T_RANKS)
    shardmm_mpiexec_flags(${np} _flags)
    add_test(NAME ${name}.np${np}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${_flags}
              ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(${name}.np${np} PROPERTIES LABELS mpi TIMEOUT ${T_TIMEOUT}
      ENVIRONMENT "OPENBLAS_NUM_THREADS=1")
    shardmm_test_processors(${name}.np${np} ${np})
    shardmm_test_ranks_cap(${name}.np${np} ${np})
  endforeach()
endfunction()
