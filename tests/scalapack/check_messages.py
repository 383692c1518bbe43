#!/usr/bin/env python3
"""What the drop-in says: its illegal-argument messages are PBLAS' own, and SHARDMM_VERBOSE
makes it say once that it is active.

Runs tests/scalapack's program (dropin_test.c) with only its illegal-argument checks
(SHARDMM_DROPIN_ERRORS, no sampled products) built against Debian's ScaLAPACK (--reference)
and with libshardmm_scalapack ahead of it (--dropin), on --ranks ranks, and checks:
  - every "PBLAS ERROR '<message>'" the reference prints (PBLAS' PB_Cwarn, from the processes
    that found the error), the drop-in prints too, from the same grid coordinates, and no other
    (the calls ScaLAPACK's PDGEMM reports alike everywhere: SHARDMM_DROPIN_ERRORS=common);
  - with the drop-in's own variants too (=1), a DESCC LLD too small on one process row is
    described as PBLAS would: "DESCC[LLD_] = L, it must be at least R";
  - with SHARDMM_VERBOSE=1 the drop-in run prints "shardmm: ScaLAPACK drop-in active (psgemm_
    on shardmm <version>)" exactly once (rank 0; its first call is PSGEMM), without it never,
    and the reference never.
Exit 0 when all hold; the failures are listed otherwise."""
import argparse
import collections
import os
import re
import subprocess
import sys

ACTIVE = re.compile(r"shardmm: ScaLAPACK drop-in active \(p[sdcz]gemm_ on shardmm \d+\.\d+\.\d+\)")
WARNING = re.compile(r"PBLAS ERROR '(.*?)'\s*from \{(-?\d+),(-?\d+)\}", re.S)
TAG = re.compile(r"^\[\d+,(\d+)\]<(?:stdout|stderr)>:(.*)$")


def run(a, binary, errors, verbose):
    env = dict(os.environ, SHARDMM_DROPIN_ERRORS=errors, SHARDMM_DROPIN_SAMPLES="0",
               OPENBLAS_NUM_THREADS="1")
    env.pop("SHARDMM_VERBOSE", None)
    if verbose:
        env["SHARDMM_VERBOSE"] = "1"
    # --tag-output: each line names its rank, so ranks' messages are read apart.
    cmd = [a.mpiexec, "-n", str(a.ranks), "--tag-output"] + a.mpiexec_flags.split() + [binary]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=a.timeout)
    per_rank = collections.defaultdict(list)
    for line in (p.stdout + "\n" + p.stderr).splitlines():
        m = TAG.match(line)
        if m:
            per_rank[int(m.group(1))].append(m.group(2))
    text = {r: "\n".join(lines) for r, lines in per_rank.items()}
    return p.returncode, text, p.stdout + p.stderr


def warnings(text):
    """(message with blanks collapsed, row, col) for every PBLAS ERROR block of every rank."""
    found = collections.Counter()
    for t in text.values():
        for m in WARNING.finditer(t):
            found[(" ".join(m.group(1).split()), int(m.group(2)), int(m.group(3)))] += 1
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dropin", required=True, help="dropin_test.c linked with the drop-in")
    ap.add_argument("--reference", required=True, help="dropin_test.c linked with ScaLAPACK")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--mpiexec-flags", default="", help="extra flags, blank-separated")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=240)
    a = ap.parse_args()
    failures = []

    rc, ref, out = run(a, a.reference, "common", verbose=True)
    if rc != 0:
        failures.append(f"the reference run failed ({rc}):\n{out}")
    rc, mine, out_mine = run(a, a.dropin, "common", verbose=True)
    if rc != 0:
        failures.append(f"the drop-in run failed ({rc}):\n{out_mine}")
    expected, got = warnings(ref), warnings(mine)
    if not expected:
        failures.append("the reference printed no PBLAS ERROR message:\n" + out)
    for key in sorted(set(expected) | set(got)):
        if expected[key] != got[key]:
            failures.append(f"'{key[0]}' from {{{key[1]},{key[2]}}}: ScaLAPACK prints it "
                            f"{expected[key]} times, the drop-in {got[key]}")
    active = sum(len(ACTIVE.findall(t)) for t in mine.values())
    if active != 1 or not ACTIVE.search(mine.get(0, "")):
        failures.append(f"SHARDMM_VERBOSE=1: {active} 'drop-in active' lines (expected 1, "
                        f"from rank 0):\n{out_mine}")
    if any(ACTIVE.search(t) for t in ref.values()):
        failures.append("the reference (no drop-in) says the drop-in is active")

    rc, quiet, out_quiet = run(a, a.dropin, "1", verbose=False)
    if rc != 0:
        failures.append(f"the drop-in run with its own variants failed ({rc}):\n{out_quiet}")
    if any(ACTIVE.search(t) for t in quiet.values()):
        failures.append("without SHARDMM_VERBOSE the drop-in still says it is active")
    lld = [k for k in warnings(quiet) if re.fullmatch(r"DESCC\[LLD_\] = \d+, it must be at least \d+", k[0])]
    if not lld:
        failures.append("no 'DESCC[LLD_] = L, it must be at least R' for an LLD too small on "
                        "one process row:\n" + out_quiet)

    print(f"{sum(expected.values())} PBLAS messages from ScaLAPACK, {sum(got.values())} from the "
          f"drop-in; {active} 'drop-in active' line(s) with SHARDMM_VERBOSE=1")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
