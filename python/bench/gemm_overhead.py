"""What calling shardmm.gemm from Python costs over calling shardmm::gemm from C++, in one run:
the same operands, the two calls alternated (a barrier before each), per-call wall times on
rank 0, medians. The C++ side is shardmm._native.time_gemm, a loop in C++ around the library's
gemm with no Python in it. With --new-c the Python call makes its C (shardmm.gemm(A, B): the
planner picks C's layout, one agreement, an allocation), the C++ call multiplies into a C
made there once.

    mpirun -n 4 python3 python/bench/gemm_overhead.py --size 2048 --reps 7
    mpirun -n 4 python3 python/bench/gemm_overhead.py --size 64 --reps 400 [--new-c]
"""

import argparse
import statistics
import sys
import time

import shardmm
from shardmm import _native


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=2048, help="m = n = k")
    ap.add_argument("--reps", type=int, default=7, help="calls of each kind, alternated")
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--layout", default="[I_X,J_Y]", help="of A, B and C")
    ap.add_argument("--new-c", action="store_true",
                    help="the Python call makes C (gemm without C); C++ uses one made there")
    a = ap.parse_args(argv)
    mesh = shardmm.Mesh()
    n = a.size
    A = shardmm.DistMatrix.from_global(mesh, lambda i, j: (i + 2 * j) % 7 - 3.0, a.layout,
                                       shape=(n, n), dtype=a.dtype)
    B = A.copy()
    c_layout = shardmm.output_layout(A, B) if a.new_c else a.layout
    C = shardmm.DistMatrix.empty(mesh, (n, n), a.dtype, c_layout)

    def python_call():
        mesh.comm.Barrier()
        start = time.perf_counter()
        shardmm.gemm(A, B, None if a.new_c else C)
        return time.perf_counter() - start

    def cpp_call():
        return _native.time_gemm(A._m, B._m, C._m, 1)[0]  # its own barrier first

    py_s, cpp_s = [], []
    for rep in range(a.reps + 1):  # the first pair warms up (buffers, pages, plans)
        if rep % 2 == 0:  # ABBA: either kind goes first half of the time
            py, cpp = python_call(), cpp_call()
        else:
            cpp, py = cpp_call(), python_call()
        if rep > 0:
            py_s.append(py)
            cpp_s.append(cpp)
    if mesh.comm.Get_rank() == 0:
        p, c = statistics.median(py_s), statistics.median(cpp_s)
        pair = statistics.median(x / y for x, y in zip(py_s, cpp_s))
        report = shardmm.dry_run(A, B, C)
        made = f", Python makes C {c_layout} per call" if a.new_c else ""
        print(f"{n}^3 {a.dtype} on {mesh.size} ranks {mesh.shape}, {report['algorithm']} "
              f"{report['grid']}, {a.reps} calls each, alternated{made}")
        print(f"  Python shardmm.gemm  median {p * 1e3:10.3f} ms")
        print(f"  C++ shardmm::gemm    median {c * 1e3:10.3f} ms")
        print(f"  Python / C++: {p / c:.4f} (medians), {pair:.4f} (median of the pairs' ratios); "
              f"difference {(p - c) * 1e6:+.1f} us per call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
