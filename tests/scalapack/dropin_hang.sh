#!/usr/bin/env bash
# Runs dropin_hang on 2 ranks under SHARDMM_WATCHDOG=1:abort: passes when the job ends with a
# non-zero status within 60 s and rank 0's report names rank 1 as the rank it waits for.
# usage: dropin_hang.sh MPIEXEC PROGRAM [MPIEXEC_FLAG...]
set -u
usage() { sed -n 2,4p "$0" | sed 's/^# \{0,1\}//'; }
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then usage; exit 0; fi
if [ $# -lt 2 ]; then usage >&2; exit 2; fi
MPIEXEC=$1 PROGRAM=$2
shift 2
status=$(mktemp -d)
trap 'rm -rf "$status"' EXIT
start=$SECONDS
out=$(SHARDMM_WATCHDOG=1:abort SHARDMM_WATCHDOG_DIR=$status OPENBLAS_NUM_THREADS=1 \
  timeout 60 "$MPIEXEC" -n 2 "$@" "$PROGRAM" 2>&1)
rc=$?  # the watchdog ends the job with 124 too: the time tells a hang apart
echo "$out"
if [ $((SECONDS - start)) -ge 60 ]; then echo "FAIL: the job did not end within 60 s (a silent hang)"; exit 1; fi
if [ $rc -eq 0 ]; then echo "FAIL: the job ended with status 0"; exit 1; fi
if ! grep -q "came back" <<<"$out" && grep -q "for rank 1" <<<"$out"; then
  echo "PASS: reported and ended (status $rc)"
  exit 0
fi
echo "FAIL: rank 0 did not name rank 1, or came back"
exit 1
