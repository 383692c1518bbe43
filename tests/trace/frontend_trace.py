#!/usr/bin/env python3
"""A front end traced with nothing but SHARDMM_TRACE set: runs the program (a C API program, a
ScaLAPACK code relinked to the p?gemm drop-in, an example) on NP ranks with the variable
pointing into a fresh directory, then checks the file with scripts/report/trace-summary: it parses as
trace-event JSON, every rank 0..NP-1 has a named track whose spans nest, each has at least one
gemm (the call, or a phase of the drop-in's PxGEMM), the summary reads it and --png draws it (when gnuplot is there).

Usage: frontend_trace.py NP MPIEXEC [MPIEXEC_FLAG...] -- PROGRAM [ARG...]"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SUMMARY = os.path.join(ROOT, "scripts", "report", "trace-summary")


def run(cmd, env=None):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


def main():
    if "--" not in sys.argv or len(sys.argv) < 5:
        sys.exit(__doc__)
    cut = sys.argv.index("--")
    np_, mpiexec, flags, program = int(sys.argv[1]), sys.argv[2], sys.argv[3:cut], sys.argv[cut + 1:]
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        env = dict(os.environ, SHARDMM_TRACE=trace, OPENBLAS_NUM_THREADS="1")
        run([mpiexec, "-n", str(np_), *flags, *program], env)
        if not os.path.exists(trace):
            sys.exit("FAIL: no trace at %s; the directory holds %s" % (trace, os.listdir(tmp)))
        print(run([SUMMARY, "--check", "--ranks", str(np_), trace]).strip())
        summary = json.loads(run([SUMMARY, "--json", trace]))
        for r in range(np_):
            calls = summary["ranks"].get(str(r), {}).get("calls", 0)
            if calls < 1:
                sys.exit("FAIL: rank %d has no call in the trace" % r)
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        # gemm is the call, or a phase of the drop-in's PxGEMM call
        gemms = {e["pid"] for e in events if e.get("cat") in ("call", "phase") and e["name"] == "gemm"}
        if gemms != set(range(np_)):
            sys.exit("FAIL: gemm calls on ranks %s, expected all of 0..%d" % (sorted(gemms), np_ - 1))
        print(run([SUMMARY, trace]))
        if shutil.which("gnuplot"):
            png = os.path.join(tmp, "timeline.png")
            run([SUMMARY, "--png", png, trace])
            with open(png, "rb") as f:
                if f.read(8) != b"\x89PNG\r\n\x1a\n":
                    sys.exit("FAIL: --png wrote no PNG")
    print("PASS")


if __name__ == "__main__":
    main()
