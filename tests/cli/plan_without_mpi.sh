#!/usr/bin/env bash
# Outside mpirun, `shardmm plan`, --help and a usage error run without MPI (no singleton
# runtime is started), while a command that communicates still starts MPI. Open MPI only:
# OMPI_MCA_pml=none_such makes every MPI_Init fail, so a command that initialises MPI fails
# under it and one that does not succeeds.
# usage: plan_without_mpi.sh SHARDMM
set -u
shardmm=$1
export OMPI_MCA_pml=none_such
unset OMPI_COMM_WORLD_SIZE PMI_SIZE PMI_RANK PMIX_RANK MV2_COMM_WORLD_SIZE
fail() { echo "FAIL: $*"; exit 1; }
out=$("$shardmm" plan --m 512 --n 256 --k 128 --ranks 4 2>&1) || fail "plan started MPI: $out"
grep -q "chosen" <<<"$out" || grep -q "auto" <<<"$out" || fail "plan printed no plan: $out"
"$shardmm" plan --op syrk --m 0 --n 512 --k 64 --ranks 4 --json >/dev/null 2>&1 ||
  fail "plan --op syrk started MPI"
"$shardmm" --help >/dev/null 2>&1 || fail "--help started MPI"
"$shardmm" plan --m 0 --bogus >/dev/null 2>&1
[ $? -eq 2 ] || fail "a usage error did not exit 2 without MPI"
# The control: a command that communicates does initialise MPI, which fails here.
if "$shardmm" bench --size 8 >/dev/null 2>&1; then
  fail "bench ran with MPI_Init broken: the test cannot tell MPI from none"
fi
echo "PASS: plan, --help and a usage error ran without MPI; bench needed it"
