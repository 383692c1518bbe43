# shellcheck shell=bash
# Shared by scripts/* (sourced, not run): repository root, build directory, mpirun flags, and
# the argument helpers every script answers --help and rejects unknown options with.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${SHARDMM_BUILD_DIR:-$ROOT/build}"
JOBS="${SHARDMM_JOBS:-$(nproc)}"
MPIRUN_FLAGS=(--oversubscribe)
if [ "$(id -u)" -eq 0 ]; then MPIRUN_FLAGS+=(--allow-run-as-root); fi
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"

configure_and_build() {
  cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DSHARDMM_WERROR=ON "$@" >/dev/null
  cmake --build "$BUILD_DIR" -j "$JOBS" -- --no-print-directory >/dev/null
}

# need_gnuplot: installs Debian's gnuplot-nox when gnuplot is missing (the plotting scripts).
need_gnuplot() {
  command -v gnuplot >/dev/null && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq gnuplot-nox >/dev/null
}

# usage [STATUS]: prints the running script's header comment (from line 2 to the first line
# that is not a comment: its usage and knobs) and exits with STATUS (default 0).
usage() {
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
  exit "${1:-0}"
}

# usage_error MESSAGE: the message and the script's Usage line on stderr, exit 2.
usage_error() {
  echo "scripts/${0##*/}: $1" >&2
  grep -m1 -o 'Usage: .*' "$0" >&2 || true
  echo "(scripts/${0##*/} --help for more)" >&2
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
