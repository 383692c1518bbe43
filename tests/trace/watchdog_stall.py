#!/usr/bin/env python3
"""The hang reporter end to end: `shardmm multiply` on NP ranks with one rank stalled in a
phase (SHARDMM_FAULT_INJECT=<phase>@<rank>:stall) and SHARDMM_WATCHDOG=<seconds>:abort. Within
the interval plus 5 s of the stall every rank prints its tagged line and rank 0 names the
stalled rank and its phase; then the job ends (non-zero), leaving no status files.

Usage: watchdog_stall.py MPIEXEC SHARDMM NP PHASE RANK [MPIEXEC_FLAG...]"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import threading
import time

INTERVAL = 1.0


def write_npy(path, n):
    """An n x n float64 .npy file (version 1.0, C order) with entries i + j / n."""
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }" % (n, n)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%dd" % (n * n), *[i + j / n for i in range(n) for j in range(n)]))


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    mpiexec, shardmm, np_, phase, stalled = sys.argv[1:6]
    np_, stalled = int(np_), int(stalled)
    with tempfile.TemporaryDirectory() as tmp:
        a, b, c = (os.path.join(tmp, x) for x in ("a.npy", "b.npy", "c.npy"))
        write_npy(a, 96)
        write_npy(b, 96)
        status_dir = os.path.join(tmp, "status")
        os.mkdir(status_dir)
        env = dict(os.environ, SHARDMM_WATCHDOG="%g:abort" % INTERVAL,
                   SHARDMM_FAULT_INJECT="%s@%d:stall" % (phase, stalled),
                   SHARDMM_WATCHDOG_DIR=status_dir, OPENBLAS_NUM_THREADS="1")
        # A ring over a line needs block layouts: the bc(64,64) operands are redistributed.
        cmd = [mpiexec, "-n", str(np_), *sys.argv[6:], shardmm, "multiply", a, b, "-o", c,
               "--algo", "ring"]
        start = time.monotonic()
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []  # (seconds since start, line)

        def read():
            for line in p.stdout:
                lines.append((time.monotonic() - start, line.rstrip("\n")))
        reader = threading.Thread(target=read)
        reader.start()
        try:
            rc = p.wait(timeout=INTERVAL + 40)
        except subprocess.TimeoutExpired:
            p.kill()
            reader.join()
            sys.exit("FAIL: the job did not end (SHARDMM_WATCHDOG=...:abort)\n" +
                     "\n".join(l for _, l in lines))
        reader.join()
        ended = time.monotonic() - start
        text = "\n".join("%6.2f s  %s" % (t, l) for t, l in lines)
        print(text)
        failures = []

        def first(pattern):
            for t, l in lines:
                if re.search(pattern, l):
                    return t, l
            return None, None
        t_stall, _ = first(r"rank %d stalls in phase '%s'" % (stalled, phase))
        if t_stall is None:
            failures.append("the rank never stalled")
        t_name, line = first(r"shardmm watchdog \[rank 0\]: rank %d did not arrive: it is in "
                             r"phase '%s'" % (stalled, phase))
        if t_name is None:
            failures.append("rank 0 did not name rank %d in phase '%s'" % (stalled, phase))
        elif t_stall is not None and t_name - t_stall > INTERVAL + 5:
            failures.append("named after %.1f s, more than the interval + 5 s" % (t_name - t_stall))
        for r in range(np_):
            if first(r"shardmm watchdog \[rank %d\]: no progress for" % r)[0] is None:
                failures.append("rank %d printed no line" % r)
        mine = first(r"shardmm watchdog \[rank %d\]: no progress.*phase '%s'.*not in an MPI call"
                     % (stalled, phase))[0]
        if mine is None:
            failures.append("the stalled rank's own line does not say its phase")
        others = [r for r in range(np_) if r != stalled]
        if first(r"shardmm watchdog \[rank 0\]: ranks? %s waits? in" % ",".join(map(str, others)))[0] is None:
            failures.append("rank 0 did not say ranks %s wait" % others)
        if rc == 0:
            failures.append("the job exited 0")
        if os.path.exists(c):
            failures.append("an output file appeared")
        if os.listdir(status_dir):
            failures.append("status files left: %s" % os.listdir(status_dir))
        print("stall at %.2f s, named at %s s, job ended at %.2f s with %d" % (
            t_stall or -1, "%.2f" % t_name if t_name else "never", ended, rc))
        if failures:
            sys.exit("FAIL: " + "; ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
