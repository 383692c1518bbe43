# shellcheck shell=bash
# Shared by tests/multihost/*.sh (sourced): the simulated cluster (scripts/cluster/cluster-sim), the
# skip rule, .npy inputs, and the check that a cluster left nothing behind.
# Expects MPIEXEC and SHARDMM to be set by the test script.
SIM="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/cluster/cluster-sim"
export OPENBLAS_NUM_THREADS=1

# Exit 77 (ctest: skipped) with the reason where network namespaces cannot be made.
require_namespaces() {
  local why
  if ! why=$("$SIM" --mpirun "$MPIEXEC" --check 2>&1); then
    echo "SKIP: multi-host tests need network namespaces (root, iproute2): ${why#cluster-sim: }"
    exit 77
  fi
}

# cluster OPTIONS... -- COMMAND...: runs scripts/cluster/cluster-sim, sends it SIGTERM (which it
# answers by tearing down) after CLUSTER_TIME_LIMIT seconds, then checks that it left nothing
# behind. Returns COMMAND's exit code.
cluster() {
  local links_before rc pid watchdog
  links_before=$(ip -o link | wc -l)
  "$SIM" --mpirun "$MPIEXEC" "$@" </dev/null &
  pid=$!  # cluster-sim's own pid: its namespaces are csim$pid-*
  (
    sleep "${CLUSTER_TIME_LIMIT:-150}" >/dev/null 2>&1 &
    trap 'kill $! 2>/dev/null; exit 0' TERM  # no orphaned sleep holding ctest's pipe
    wait $!
    echo "FAIL: cluster-sim still running after ${CLUSTER_TIME_LIMIT:-150} s: SIGTERM" >&2
    kill -TERM "$pid"
  ) &
  watchdog=$!
  wait "$pid"
  rc=$?
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
  assert_clean "csim$pid" "$links_before"
  return $rc
}

# assert_clean PREFIX LINKS: no namespace, /etc/netns entry or scratch directory named
# PREFIX*, and LINKS interfaces in this namespace, as before the run.
assert_clean() {
  local left
  left=$(ip netns list | awk '{print $1}' | grep "^$1-" || true)
  [ -z "$left" ] || { echo "FAIL: namespaces left behind: $left"; exit 1; }
  left=$(ls -d "/etc/netns/$1"-* "/tmp/$1".* 2>/dev/null || true)
  [ -z "$left" ] || { echo "FAIL: files left behind: $left"; exit 1; }
  [ "$(ip -o link | wc -l)" -eq "$2" ] || { echo "FAIL: interfaces changed in this namespace:"; ip -o link; exit 1; }
  echo "clean: no namespace, interface or file of $1 left"
}

# write_npy FILE ROWS COLS SEED: an f64 Fortran-order .npy with small integer entries, so that
# every product and sum is exact and any algorithm gives bit-identical results.
write_npy() {
  python3 - "$@" <<'PY'
import struct, sys
path, rows, cols, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
head = "{'descr': '<f8', 'fortran_order': True, 'shape': (%d, %d), }" % (rows, cols)
head += " " * ((64 - (10 + len(head) + 1) % 64) % 64) + "\n"
# Column j depends on j only through (13 j + seed) mod 11: eleven distinct columns.
column = [struct.pack("<%dd" % rows, *[float((i * 7 + c) % 11 - 5) for i in range(rows)]) for c in range(11)]
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
    for j in range(cols):
        f.write(column[(j * 13 + seed) % 11])
PY
}
