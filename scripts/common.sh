# shellcheck shell=bash
# Shared by scripts/* (sourced, not run): repository root, build directory, mpirun flags, and
# the argument helpers every script answers --help and rejects unknown options with.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${SHARDMM_BUILD_DIR:-$ROOT/build}"
SCRIPT_ARGS=("$@")  # the sourcing script's arguments: what a failed step says to run again
# The sourcing script as a user types it from the top of the clone (scripts/bench/bench-sweep).
SCRIPT_NAME="$(realpath --relative-to="$ROOT" "$0" 2>/dev/null || echo "scripts/${0##*/}")"
JOBS="${SHARDMM_JOBS:-$(nproc)}"
# Open MPI's mpirun needs --oversubscribe for more ranks than cores and, as root,
# --allow-run-as-root; MPICH's (Hydra) needs neither and rejects both. Set again by
# set_mpirun_flags once mpirun is installed.
set_mpirun_flags() {
  MPIRUN_FLAGS=()
  if mpirun --version 2>/dev/null | grep -qE 'Open MPI|OpenRTE'; then
    MPIRUN_FLAGS=(--oversubscribe)
    if [ "$(id -u)" -eq 0 ]; then MPIRUN_FLAGS+=(--allow-run-as-root); fi
  fi
}
MPIRUN_FLAGS=()
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"

# configure_and_build [CMAKE_ARGS...]: configures BUILD_DIR (Release, warnings as errors) and
# builds BUILD_TARGETS (default: all), printing a progress line every few seconds; a failure
# prints the step's last lines and how to retry. Knobs: SHARDMM_CCACHE [1].
BUILD_TARGETS=()
configure_and_build() {
  mkdir -p "$BUILD_DIR"
  local log="$BUILD_DIR/build.log"
  local retry="$SCRIPT_NAME${SCRIPT_ARGS[*]:+ ${SCRIPT_ARGS[*]}} (the whole log: $log)"
  : >"$log"
  # ccache, where installed (scripts/setup-deps test), keeps compiled objects across build
  # folders and clones: a rebuild of unchanged sources is a cache hit. SHARDMM_CCACHE=0: off.
  local launcher=()
  if [ "${SHARDMM_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    # the tests' precompiled header (cmake/ShardmmTesting.cmake) is cacheable only so; paths
    # below the checkout count relative to it, so another clone or build folder hits too
    export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    export CCACHE_BASEDIR="$ROOT" CCACHE_NOHASHDIR=1
  else
    launcher=(-UCMAKE_C_COMPILER_LAUNCHER -UCMAKE_CXX_COMPILER_LAUNCHER)
  fi
  # Ninja, where installed (scripts/setup-deps test), for a new build folder: from ccache hits
  # the whole build took 35 s instead of make's 43 s on 2 cores. A folder keeps its generator.
  local generator=() make_flags=()
  if [ ! -e "$BUILD_DIR/CMakeCache.txt" ] && command -v ninja >/dev/null; then
    generator=(-G Ninja)
  fi
  run_with_progress "configure" "$log" "$retry" \
    cmake -S "$ROOT" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSHARDMM_WERROR=ON \
    "${launcher[@]}" "$@"
  grep -q '^CMAKE_GENERATOR:INTERNAL=Unix Makefiles$' "$BUILD_DIR/CMakeCache.txt" &&
    make_flags=(-- --no-print-directory)
  local targets=()
  [ ${#BUILD_TARGETS[@]} -eq 0 ] || targets=(--target "${BUILD_TARGETS[@]}")
  run_with_progress "build${BUILD_TARGETS[*]:+ ${BUILD_TARGETS[*]}}" "$log" "$retry" \
    cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}" "${make_flags[@]}"
  set_mpirun_flags
}

# run_with_progress LABEL LOG RETRY CMD...: runs CMD with its output appended to LOG; prints
# "LABEL: <what it is doing> (N s)" every SHARDMM_PROGRESS_SECONDS (5) and "LABEL: done" at the
# end. On failure: the log's last 20 lines, "LABEL failed", RETRY, and CMD's exit status.
run_with_progress() {
  local label=$1 log=$2 retry=$3
  shift 3
  local t0=$SECONDS last=$SECONDS every=${SHARDMM_PROGRESS_SECONDS:-5} status=0
  echo "$label ..."
  "$@" >>"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if ((SECONDS - last >= every)); then
      echo "$label: $(progress_line "$log") ($((SECONDS - t0)) s)"
      last=$SECONDS
    fi
  done
  wait "$pid" || status=$?
  if [ "$status" -ne 0 ]; then
    tail -n 20 "$log" | sed 's/^/  | /' >&2
    echo "$label failed (exit $status); retry with: $retry" >&2
    exit "$status"
  fi
  echo "$label: done in $((SECONDS - t0)) s"
}

# progress_line LOG: the log's last line that says what is happening, shortened (a make step's
# percentage or a Ninja step's count, and its source; apt's package being fetched, unpacked or
# set up).
progress_line() {
  grep -E '^\[ *[0-9]+%\]|^\[[0-9]+/[0-9]+\] |^(Get|Hit):|^(Unpacking|Setting up|Selecting) |^-- ' "$1" 2>/dev/null | tail -n 1 |
    sed -E -e 's#^\[ *([0-9]+%)\] (Building|Linking) [A-Z+]+ (object|shared library|static library|executable) #\1 \2 #' \
      -e 's#^\[([0-9]+/[0-9]+)\] (Building|Linking) [A-Z+]+ (object|shared library|shared module|static library|executable) #\1 \2 #' \
      -e 's#CMakeFiles/[^ ]*\.dir/##; s#\.o$##' \
      -e 's#^Get:[0-9]+ [^ ]+ [^ ]+ [^ ]+ ([^ ]+) .*#downloading \1#' \
      -e 's#^(Unpacking|Setting up|Selecting previously unselected package) ([^ ]+).*#\L\1\E \2#' | cut -c1-100
}

# parse_combo "$@": takes --mpi openmpi|mpich, --blas openblas|blis and --scalapack on|off
# from the front of the arguments (the rest is left in ARGS) and sets COMBO (empty for the
# default Open MPI + OpenBLAS + ScaLAPACK, else e.g. "mpich-blis" or "openmpi-openblas-noscalapack")
# and COMBO_CMAKE_ARGS, and exports SHARDMM_MPI / SHARDMM_BLAS for scripts/setup-deps. With
# MPICH the Python package is left out: Debian's mpi4py is built on Open MPI.
parse_combo() {
  local mpi=openmpi blas=openblas scalapack=on
  while [ $# -gt 0 ]; do
    case $1 in
      --mpi | --blas | --scalapack)
        [ $# -ge 2 ] || usage_error "$1 needs a value"
        case $1 in --mpi) mpi=$2 ;; --blas) blas=$2 ;; --scalapack) scalapack=$2 ;; esac
        shift 2
        ;;
      *) break ;;
    esac
  done
  ARGS=("$@")
  case $mpi in openmpi | mpich) ;; *) usage_error "--mpi must be openmpi or mpich, not '$mpi'" ;; esac
  case $blas in openblas | blis) ;; *) usage_error "--blas must be openblas or blis, not '$blas'" ;; esac
  case $scalapack in on | off) ;; *) usage_error "--scalapack must be on or off, not '$scalapack'" ;; esac
  COMBO_CMAKE_ARGS=()
  if [ "$mpi" = mpich ]; then
    COMBO_CMAKE_ARGS+=(-DMPI_C_COMPILER=mpicc.mpich -DMPI_CXX_COMPILER=mpicxx.mpich
      -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich -DSHARDMM_PYTHON=OFF)
  fi
  if [ "$blas" = blis ]; then COMBO_CMAKE_ARGS+=(-DBLA_VENDOR=FLAME); else COMBO_CMAKE_ARGS+=(-DBLA_VENDOR=OpenBLAS); fi
  if [ "$scalapack" = on ]; then COMBO_CMAKE_ARGS+=(-DSHARDMM_SCALAPACK=ON); else COMBO_CMAKE_ARGS+=(-DSHARDMM_SCALAPACK=OFF); fi
  COMBO=""
  [ "$mpi/$blas" = openmpi/openblas ] || COMBO="$mpi-$blas"
  [ "$scalapack" = on ] || COMBO="$mpi-$blas-noscalapack"
  export SHARDMM_MPI=$mpi SHARDMM_BLAS=$blas
}

# need_gnuplot: installs Debian's gnuplot-nox when gnuplot is missing (the plotting scripts).
need_gnuplot() {
  command -v gnuplot >/dev/null && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends gnuplot-nox >/dev/null
}

# usage [STATUS]: prints the running script's header comment (from line 2 to the first line
# that is not a comment: its usage and knobs) and exits with STATUS (default 0).
usage() {
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
  exit "${1:-0}"
}

# usage_error MESSAGE: the message and the script's Usage line on stderr, exit 2.
usage_error() {
  echo "$SCRIPT_NAME: $1" >&2
  grep -m1 -o 'Usage: .*' "$0" >&2 || true
  echo "($SCRIPT_NAME --help for more)" >&2
  exit 2
}

# parse_args MAX "$@": -h/--help prints the usage and exits 0; any other option, or more than
# MAX operands, is a usage error (exit 2). `--` ends the options. The operands go to ARGS.
parse_args() {
  local max=$1
  shift
  ARGS=()
  while [ $# -gt 0 ]; do
    case $1 in
      -h | --help) usage 0 ;;
      --) shift; ARGS+=("$@"); break ;;
      -?*) usage_error "unknown option '$1'" ;;
      *) ARGS+=("$1") ;;
    esac
    shift
  done
  [ "${#ARGS[@]}" -le "$max" ] || usage_error "too many arguments: ${ARGS[*]}"
}

# ctest_jobs: ctest's -j for the build in BUILD_DIR: SHARDMM_TEST_JOBS from the environment, else
# from the build's cache (cmake/ShardmmTesting.cmake: twice the cores with Open MPI, where most
# tests are short launches or waits; the cores with other MPIs), else JOBS.
ctest_jobs() {
  local cached
  cached=$(sed -n 's/^SHARDMM_TEST_JOBS:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null || true)
  echo "${SHARDMM_TEST_JOBS:-${cached:-$JOBS}}"
}

# check_ctest_args ARG...: every option among ARGS must be one of ctest's (from ctest --help),
# so that a typo fails at once instead of after the build (ctest itself ignores unknown options).
check_ctest_args() {
  local known arg
  known=$(ctest --help 2>/dev/null | sed -n 's/^  *\(-[^=]*\).*/\1/p' |
    grep -oE '(^|[ ,])--?[A-Za-z][-A-Za-z0-9_]*' | tr -d ' ,' | sort -u)
  for arg in "$@"; do
    case $arg in -*) ;; *) continue ;; esac
    grep -qxF -e "${arg%%=*}" -e "${arg:0:2}" <<<"$known" || usage_error "unknown ctest option '$arg'"
  done
}
