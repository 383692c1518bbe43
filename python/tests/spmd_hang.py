#!/usr/bin/env python3
"""The classic SPMD mistake from Python, reported: on 2 ranks under SHARDMM_WATCHDOG=1:abort,
rank 0 alone makes a collective call (CASE below) while rank 1 goes on to the end of the
program. Within the watchdog's 1 s plus the report's own wait (as long again for the missing
rank's status) plus a margin, the job must end with a non-zero status and rank 0 must name rank 1 as
the rank that did not arrive.

Usage: spmd_hang.py MPIEXEC PYTHON CASE [MPIEXEC_FLAG...]
CASE: gather (C.gather()), gather_root (C.gather(root=0)), gemm (gemm(A, B) without C),
gemm_c (gemm(A, B, C)), from_global, matmul (shardmm.matmul on arrays), matmul_op (A @ B),
mesh (shardmm.Mesh: its MPI_Comm_dup);
rank1_first_call: SHARDMM_WATCHDOG set only after the mesh and the matrices were made, rank 1
alone makes the first watched call (gather(root=0)), which waits for the status directory
rank 0 would choose: rank 1 must say it waits for rank 0, and end the job.
Run with --child CASE (under mpiexec) it is the program itself."""
import os
import subprocess
import sys
import tempfile
import time

WATCHDOG = 1.0
MARGIN = 8.0  # startup of the report, the 1 s rank 0 waits for status files, the job's end


def child(case):
    import numpy as np
    from mpi4py import MPI

    import shardmm

    late = case == "rank1_first_call"
    watch = os.environ.pop("SHARDMM_WATCHDOG") if late else None
    # Both ranks done importing before the first watched call: under load one rank's imports
    # can lag the other's by more than the watchdog's second.
    MPI.COMM_WORLD.Barrier()
    mesh = shardmm.Mesh(MPI.COMM_WORLD, {"x": 2})
    a = np.arange(48.0).reshape(8, 6)
    A = shardmm.DistMatrix.from_global(mesh, a)
    B = shardmm.DistMatrix.from_global(mesh, a.T)
    C, _ = shardmm.gemm(A, B)
    if late:
        os.environ["SHARDMM_WATCHDOG"] = watch  # the library reads it at each call
    if mesh.rank == (1 if late else 0):  # the mistake: only one rank makes the collective call
        print(f"rank {mesh.rank} alone enters {case} at {time.time():.3f}", flush=True)
        calls = {
            "gather": lambda: C.gather(),
            "gather_root": lambda: C.gather(root=0),
            "gemm": lambda: shardmm.gemm(A, B),
            "gemm_c": lambda: shardmm.gemm(A, B, C),
            "from_global": lambda: shardmm.DistMatrix.from_global(mesh, a),
            "matmul": lambda: shardmm.matmul(a, a.T, mesh=mesh),
            "matmul_op": lambda: A @ B,
            "mesh": lambda: shardmm.Mesh(MPI.COMM_WORLD, {"x": 2}),
            "rank1_first_call": lambda: C.gather(root=0),
        }
        calls[case]()
        print(f"rank {mesh.rank} came back: the mistake went unnoticed", flush=True)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    if len(sys.argv) < 4 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2
    mpiexec, python, case = sys.argv[1:4]
    with tempfile.TemporaryDirectory(prefix="shardmm-hang-") as status:
        env = dict(os.environ, SHARDMM_WATCHDOG=f"{WATCHDOG:g}:abort", SHARDMM_WATCHDOG_DIR=status,
                   OPENBLAS_NUM_THREADS="1")
        cmd = [mpiexec, "-n", "2", *sys.argv[4:], python, os.path.abspath(__file__), "--child", case]
        try:
            p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=WATCHDOG + MARGIN + 40)
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            sys.exit(f"FAIL {case}: the job did not end (a silent hang):\n{out}")
        ended = time.time()
        print(out)
        entered = [float(line.split()[-1]) for line in out.splitlines()
                   if " alone enters " in line]
        problems = []
        if rc == 0:
            problems.append("the job ended with status 0")
        if not entered:
            problems.append("no rank reached the mistake")
        elif ended - entered[0] > WATCHDOG + MARGIN:
            problems.append(f"the job ended {ended - entered[0]:.1f} s after the mistake "
                            f"(watchdog {WATCHDOG:g} s + {MARGIN:g} s)")
        named = ("[rank 1]: no progress" in out and "status directory from rank 0" in out
                 if case == "rank1_first_call" else "rank 1 did not arrive" in out)
        if not named:
            problems.append("the report does not name the rank that did not arrive")
        if "came back" in out:
            problems.append("the rank came back from the call")
        if os.listdir(status):
            problems.append(f"status files left behind: {os.listdir(status)}")
        if problems:
            sys.exit(f"FAIL {case}: " + "; ".join(problems))
    print(f"PASS {case}: reported and ended (status {rc})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
