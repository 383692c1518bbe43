# Shared by scripts/*: repository root, build directory, mpirun flags.
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
