#!/usr/bin/env bash
# Fault test: a failure on ONE rank (SHARDMM_FAULT_INJECT=<phase>@1) in each phase of
# `shardmm multiply` -- read, plan, redistribute, multiply, write -- must make every rank
# report the same error and exit non-zero (no hang: each run has a 60 s timeout), and leave
# neither the output nor a temporary file behind. A clean run afterwards still works.
# usage: inject_phase.sh MPIEXEC SHARDMM [mpiexec flags...]
set -u
MPIEXEC=$1 SHARDMM=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir" <<'PY'
import struct, sys
def npy(path, rows, cols, seed):
    head = "{'descr': '<f8', 'fortran_order': True, 'shape': (%d, %d), }" % (rows, cols)
    head += " " * ((64 - (10 + len(head) + 1) % 64) % 64) + "\n"
    vals = [((i * 7 + j * 3 + seed) % 13) / 13.0 for j in range(cols) for i in range(rows)]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
        f.write(struct.pack("<%dd" % len(vals), *vals))
npy(sys.argv[1] + "/A.npy", 40, 30, 1)
npy(sys.argv[1] + "/B.npy", 30, 20, 2)
PY
run() {  # run [env assignments...]: multiply at 3 ranks (row layouts: SUMMA must move them)
  env "$@" timeout 60 "$MPIEXEC" -n 3 "${FLAGS[@]}" "$SHARDMM" multiply "$dir/A.npy" "$dir/B.npy" \
    -o "$dir/C.npy" --algo summa --layout-a "A[I_XY,K]" --layout-b "B[K_XY,J]" --layout-c "C[I_XY,J]" --quiet
}
FLAGS=("$@")
fail=0
for phase in read plan redistribute multiply write; do
  err=$(run SHARDMM_FAULT_INJECT="$phase@1" SHARDMM_REPORT_ERRORS=all 2>&1 >/dev/null)
  rc=$?
  lines=$(grep -c '^shardmm: error (rank [0-9] of 3): ' <<<"$err")
  distinct=$(grep '^shardmm: error (rank' <<<"$err" | sed 's/^shardmm: error (rank [0-9] of 3): //' | sort -u | wc -l)
  msg=$(grep -m1 '^shardmm: error (rank' <<<"$err")
  if [ $rc -eq 124 ]; then echo "FAIL $phase: hang (killed by the 60 s timeout)"; fail=1
  elif [ $rc -eq 0 ]; then echo "FAIL $phase: exit 0 although rank 1 failed"; fail=1
  elif [ "$lines" -ne 3 ] || [ "$distinct" -ne 1 ]; then
    echo "FAIL $phase: expected one message from each of 3 ranks, got:"; echo "$err"; fail=1
  elif ! grep -q "\[$phase: first failing rank 1 of 3\]" <<<"$msg"; then
    echo "FAIL $phase: the message does not name the phase and rank: $msg"; fail=1
  elif ls "$dir" | grep -q -e '^C.npy' ; then
    echo "FAIL $phase: output or temporary file left behind: $(ls "$dir")"; fail=1
  else
    echo "ok   $phase (exit $rc): ${msg#shardmm: error (rank ? of 3): }"
  fi
  rm -f "$dir"/C.npy*
done
run >/dev/null 2>&1 || { echo "FAIL: the clean run after the injected failures failed"; fail=1; }
[ -s "$dir/C.npy" ] || { echo "FAIL: the clean run wrote no C.npy"; fail=1; }
[ $fail -eq 0 ] && echo "5 phases passed" || exit 1
