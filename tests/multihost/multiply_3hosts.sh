#!/usr/bin/env bash
# Multi-host (a): `shardmm multiply` with 2 ranks on each of 3 simulated hosts (network
# namespaces, TCP only) gives bit-for-bit the single-host, 1-rank result, for the planner's
# choice and for each algorithm forced. Checks on the way that the ranks really sit on three
# hosts and that the operands crossed every host's link.
# usage: multiply_3hosts.sh MPIEXEC SHARDMM
set -u
MPIEXEC=$1 SHARDMM=$2  # MPIEXEC: used by common.sh
# shellcheck source=tests/multihost/common.sh
source "$(dirname "$0")/common.sh"
ALGOS="auto summa 25d sharded"

if [ "${3:-}" = --on-cluster ]; then
  # Runs on node1 of the cluster, with the CLUSTER_* variables of cluster-sim.
  dir=$4
  read -ra namespaces <<<"$CLUSTER_NAMESPACES"
  hosts=$($CLUSTER_MPIRUN hostname | sort | uniq -c | awk '{print $2 "x" $1}' | tr '\n' ' ')
  echo "ranks per host: $hosts"
  [ "$hosts" = "node1x2 node2x2 node3x2 " ] || { echo "FAIL: expected 2 ranks on each of node1..node3"; exit 1; }
  rx() { ip netns exec "$1" cat /sys/class/net/eth0/statistics/rx_bytes; }
  for ns in "${namespaces[@]}"; do before+=("$(rx "$ns")"); done
  for algo in $ALGOS; do
    t0=$EPOCHREALTIME
    $CLUSTER_MPIRUN "$SHARDMM" multiply "$dir/A.npy" "$dir/B.npy" -o "$dir/C_$algo.npy" --algo "$algo" ||
      { echo "FAIL: multiply --algo $algo exited $?"; exit 1; }
    echo "  --algo $algo: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s with mpirun"
  done
  # Sanity check that the work was spread over the links: the inputs are read from local
  # files, and every host then needs rows of A and columns of B that other hosts read. Each
  # host must have received at least a third of A and B over its link (four runs move more).
  min=$(( ($(stat -c %s "$dir/A.npy") + $(stat -c %s "$dir/B.npy")) / 3 ))
  for i in "${!namespaces[@]}"; do
    got=$(( $(rx "${namespaces[$i]}") - ${before[$i]} ))
    echo "node$((i + 1)) received $got bytes over eth0"
    [ "$got" -ge "$min" ] || { echo "FAIL: node$((i + 1)) received less than $min bytes"; exit 1; }
  done
  exit 0
fi

require_namespaces
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
m=700 k=500 n=600
write_npy "$dir/A.npy" $m $k 1
write_npy "$dir/B.npy" $k $n 2
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
"$MPIEXEC" "${root[@]}" -n 1 "$SHARDMM" multiply "$dir/A.npy" "$dir/B.npy" -o "$dir/C_ref.npy" ||
  { echo "FAIL: single-host reference multiply exited $?"; exit 1; }

cluster --hosts 3 --ranks-per-host 2 -- "$0" "$MPIEXEC" "$SHARDMM" --on-cluster "$dir" ||
  { echo "FAIL: the run on the cluster exited $?"; exit 1; }

failed=0
for algo in $ALGOS; do
  if cmp -s "$dir/C_ref.npy" "$dir/C_$algo.npy"; then
    echo "  --algo $algo on 3 hosts: identical to the single-host result"
  else
    echo "FAIL: --algo $algo on 3 hosts differs from the single-host result"
    failed=$((failed + 1))
  fi
done
[ $failed -eq 0 ] || exit 1
echo "1 passed, 0 failed"
