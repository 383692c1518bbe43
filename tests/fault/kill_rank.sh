#!/usr/bin/env bash
# Fault test: SIGKILL one rank in the middle of `shardmm multiply`. The mpirun job must end
# non-zero well within the test's timeout (no hang), and the output must be absent or whole
# (never half-written). Then the same during a long `bench`.
# usage: kill_rank.sh MPIEXEC SHARDMM [mpiexec flags...]
set -u
MPIEXEC=$1 SHARDMM=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=3000
python3 - "$dir" "$n" <<'PY'
import struct, sys
d, n = sys.argv[1], int(sys.argv[2])
head = "{'descr': '<f8', 'fortran_order': True, 'shape': (%d, %d), }" % (n, n)
head += " " * ((64 - (10 + len(head) + 1) % 64) % 64) + "\n"
row = struct.pack("<%dd" % n, *[((i * 7) % 13) / 13.0 for i in range(n)])
for name in ("A", "B"):
    with open("%s/%s.npy" % (d, name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
        for _ in range(n):
            f.write(row)
PY
expected=$(( $(stat -c %s "$dir/A.npy") ))  # C has the same shape, dtype and header length

# ranks_of JOB: the PIDs of the job's ranks, oldest first: the launcher's descendants running
# $SHARDMM (Open MPI's mpirun forks them itself, MPICH's mpiexec through hydra_pmi_proxy).
ranks_of() {
  local pid p
  for pid in $(pgrep -f "^$SHARDMM " || true); do
    p=$pid
    while [ -n "$p" ] && [ "$p" -gt 1 ]; do
      if [ "$p" = "$1" ]; then echo "$pid"; break; fi
      p=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
    done
  done
}

# Runs the command in the background, waits until its 3 ranks exist, then SIGKILLs the newest
# rank after $1 seconds and checks that the launcher exits non-zero within 60 s. Returns the
# launcher's exit code, or 99 when the job ended before the kill landed (caller retries).
kill_after() {
  local delay=$1
  shift
  "$MPIEXEC" "$@" &
  local job=$! tries=0
  until [ "$(ranks_of "$job" | wc -l)" -ge 3 ] || [ $tries -ge 200 ]; do sleep 0.05; tries=$((tries + 1)); done
  sleep "$delay"
  local victim
  victim=$(ranks_of "$job" | tail -n 1)
  if [ -z "$victim" ] || ! kill -9 "$victim" 2>/dev/null; then wait "$job"; return 99; fi
  local waited=0  # tenths of a second
  while kill -0 "$job" 2>/dev/null; do
    sleep 0.1
    waited=$((waited + 1))
    if [ $waited -gt 600 ]; then
      echo "FAIL: mpirun still running 60 s after the kill (hang)"
      kill -9 "$job"
      exit 1
    fi
  done
  wait "$job"
}

# Kill with decreasing delays until a kill lands while the job runs.
kill_during() {
  local rc=99
  for delay in 0.8 0.4 0.2 0.1 0.05; do
    kill_after "$delay" "$@"
    rc=$?
    [ $rc -ne 99 ] && return $rc
  done
  echo "FAIL: the job always finished before the kill"
  exit 1
}

kill_during -n 3 "$@" "$SHARDMM" multiply "$dir/A.npy" "$dir/B.npy" -o "$dir/C.npy" --algo summa --quiet
rc=$?
[ $rc -ne 0 ] || { echo "FAIL: multiply exited 0 although a rank was killed"; exit 1; }
if [ -e "$dir/C.npy" ] && [ "$(stat -c %s "$dir/C.npy")" -ne "$expected" ]; then
  echo "FAIL: C.npy is half-written ($(stat -c %s "$dir/C.npy") of $expected bytes)"
  exit 1
fi
ls "$dir" | grep -q '\.tmp' && echo "note: a temporary file was left by the killed job (never renamed)"

kill_during -n 3 "$@" "$SHARDMM" bench --size 1500 --algo summa --reps 100 --warmup 0 --no-check --quiet
rc=$?
[ $rc -ne 0 ] || { echo "FAIL: bench exited 0 although a rank was killed"; exit 1; }
echo "1 passed, 0 failed"
