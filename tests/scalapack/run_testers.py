#!/usr/bin/env python3
"""Runs ScaLAPACK's own testers (Debian's scalapack-mpi-test, Open MPI builds) on the PBLAS
drop-in and fails on any failed check.

Modes (--mode):
  plain    Debian's binary as shipped: libscalapack's routines (the inputs' own reference)
  preload  the same binary with LD_PRELOAD=libshardmm_scalapack.so
  relink   a copy of the binary whose dynamic link list names libshardmm_scalapack.so ahead of
           libscalapack (patchelf --add-needed: the DT_NEEDED order that linking with
           -lshardmm_scalapack -lscalapack-openmpi gives); Debian ships the testers as binaries
           only, so this is the relink available without their objects. No LD_PRELOAD.

PBLAS level-3 testers (--tester ?pb3tst) run each input (--input stock: Debian's
P?BLAS3TST.dat; --input FILE: a P?BLAS3TST.dat of our own, written for double and given the
type's ALPHA, BETA and routine names from the stock file) with the --routines alone switched
on (default GEMM; e.g. GEMM,GEADD,TRADD) and the error-exit tests on. Passing means: exit 0;
"Error-exit tests completed." and no "*** ERROR ***" line (each illegal-argument check compares
the INFO that PB_Cabort received with PBLAS' code); no FAILED line; the summary row of each
routine has every test of every grid that fits the ranks passed, none failed or skipped, one
computational check passed per test; and the dynamic linker bound the tester's p?<routine>_
to the drop-in and the drop-in's PB_Cabort to the tester's (plain: to libscalapack). xdlu (--tester xdlu, LU.dat) passes when every test passed
its residual check and libscalapack's own p?gemm_ calls (from PDGETRF) bound to the drop-in.

Exit codes: 0 pass, 1 a check failed, 77 skipped (the Debian testers or patchelf are not
installed: scripts/setup-deps installs them), 2 usage. --self-test checks the output parser
on failing and passing excerpts (no MPI).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
ROUTINE_LINE = re.compile(r"^(P[SDCZ][A-Z0-9]+)\s+[TF]\b(.*)$")


def fail(msg):
    print("FAIL " + msg)
    return False


# ---------------------------------------------------------------- inputs

def read_lines(path):
    with open(path) as f:
        return f.read().splitlines()


def routines_only(lines, routines):
    """The routine flag lines with `routines` on and every other routine off."""
    out = []
    for line in lines:
        m = ROUTINE_LINE.match(line)
        if m:
            on = m.group(1) in routines
            line = "%-7s %s%s" % (m.group(1), "T" if on else "F", m.group(2))
        out.append(line)
    return out


def tester_input(stock, own, routines):
    """P?BLAS3TST.dat: the stock file, or ours (lines up to the routine list) with the stock
    file's summary name (line 3), ALPHA and BETA (lines 14, 15) and routine list."""
    if own is None:
        lines = list(stock)
    else:
        first_routine = next(i for i, l in enumerate(own) if ROUTINE_LINE.match(l))
        stock_routines = next(i for i, l in enumerate(stock) if ROUTINE_LINE.match(l))
        lines = own[:first_routine] + stock[stock_routines:]
        lines[2], lines[13], lines[14] = stock[2], stock[13], stock[14]
    lines = routines_only(lines, routines)
    for i, flag in ((5, "T"),):  # line 6: test error exits
        lines[i] = flag + lines[i][1:]
    return lines


def values(line):
    """The leading integers of an input line (Fortran's list-directed READ ignores the rest)."""
    out = []
    for token in line.split():
        if not re.fullmatch(r"[+-]?\d+", token):
            break
        out.append(int(token))
    return out


def expected_tests(lines, ranks):
    """Tests the tester runs: problems x grids that fit the ranks (P x Q <= ranks)."""
    ngrids = values(lines[10])[0]
    p, q = values(lines[11])[:ngrids], values(lines[12])[:ngrids]
    ntests = values(lines[15])[0]
    return ntests * sum(1 for a, b in zip(p, q) if a * b <= ranks)


# TRANS values a routine refuses, which the tester counts as skipped tests: complex SYRK and
# SYR2K take N and T only, HERK and HER2K N and C only.
REFUSED_TRANS = {"SYRK": "C", "SYR2K": "C", "HERK": "T", "HER2K": "T"}


def expected_skips(lines, routine, ranks):
    """Tests of `routine` the tester skips on these inputs: those whose TRANSA it refuses."""
    refused = REFUSED_TRANS.get(routine[2:]) if routine[1] in "CZ" else None
    if refused is None:
        return 0
    ntests = values(lines[15])[0]
    line = next(l for l in lines if l.rstrip().endswith("values of TRANSA"))
    trans = re.findall(r"'(\w)'", line)[:ntests]
    return sum(1 for t in trans if t.upper() == refused) * expected_tests(lines, ranks) // ntests


# ---------------------------------------------------------------- output checks

def check_pblas(out, routines, expected, skips=None):
    ok = True
    if "Error-exit tests completed." not in out:
        ok = fail("no 'Error-exit tests completed.' line: error exits not tested")
    if "End of Tests." not in out:
        ok = fail("no 'End of Tests.': the tester stopped early")
    for line in out.splitlines():
        failed = "FAILED" in line and not line.strip().startswith("SUBROUTINE")  # not the header
        if failed or "*** ERROR ***" in line or ">> Invalid" in line:
            ok = fail("tester line: " + line.strip())
    for routine in routines:
        ok &= check_routine(out, routine, expected, (skips or {}).get(routine, 0))
    for other, n in re.findall(r"^\s*\|\s*(P[SDCZ]\w+)\s+(\d+)", out, re.M):
        if other not in routines and int(n) != 0:
            ok = fail("%s ran %s tests; only %s should run" % (other, n, ", ".join(routines)))
    return ok


def check_routine(out, routine, expected, skipped=0):
    """The summary row of `routine`: `expected` tests, `skipped` of them skipped (refused
    TRANS values), every other one passed, none failed, one computational check passed per
    test run."""
    ok = True
    row = re.search(r"^\s*\|\s*%s\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$" % routine, out,
                    re.M)
    if not row:
        return fail("no summary row for " + routine)
    total, passed, failed, skips = (int(x) for x in row.groups())
    want = (expected, expected - skipped, 0, skipped)
    if (total, passed, failed, skips) != want:
        ok = fail("%s: %d tests, %d passed, %d failed, %d skipped; expected %d, %d skipped, "
                  "the rest passed" % (routine, total, passed, failed, skips, expected, skipped))
    checks = len(re.findall(r"Computational check: %s\s+PASSED" % routine, out))
    if checks != expected - skipped:
        ok = fail("%d computational checks of %s passed, expected %d"
                  % (checks, routine, expected - skipped))
    return ok


def check_lu(out):
    ok = True
    m = re.search(r"Finished\s+(\d+) tests.*?\n\s*(\d+) tests completed and passed.*?\n"
                  r"\s*(\d+) tests completed and failed.*?\n\s*(\d+) tests skipped", out, re.S)
    if not m:
        return fail("no 'Finished N tests' summary")
    total, passed, failed, skipped = (int(x) for x in m.groups())
    if total == 0 or passed != total or failed or skipped:
        ok = fail("xdlu: %d tests, %d passed, %d failed, %d skipped" % (total, passed, failed, skipped))
    for line in out.splitlines():
        if "FAILED" in line:
            ok = fail("tester line: " + line.strip())
    if "END OF TESTS." not in out:
        ok = fail("no 'END OF TESTS.': the tester stopped early")
    return ok


BINDING = re.compile(rb"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: normal symbol `(\w+)'")


def read_bindings(logdir):
    """{log name: [(from file, to file, symbol), ...]} of the PBLAS-like (p..._) and PB_Cabort
    bindings in each rank's dynamic-linker log. A log holds every binding the rank made (~4 MB):
    it is read once, and only the few lines naming such a symbol go through the regex."""
    parsed = {}
    for log in glob.glob(os.path.join(logdir, "ld.*")):
        with open(log, "rb") as f:
            lines = [line for line in f if b"symbol `p" in line or b"`PB_Cabort'" in line]
        parsed[os.path.basename(log)] = [
            tuple(os.path.basename(x.decode(errors="replace")) for x in m.groups())
            for m in map(BINDING.search, lines) if m]
    return parsed


def check_bindings(bindings, mode, symbol, from_lib, dropin):
    """Every rank's dynamic linker bound `symbol` (referenced by a file matching from_lib) to the
    drop-in (plain: to libscalapack); with the drop-in, its PB_Cabort to the tester binary.
    bindings: read_bindings' result for the run."""
    if not bindings:
        return fail("no dynamic-linker log")
    ok = True
    dropin = os.path.basename(dropin)
    want = "libscalapack" if mode == "plain" else dropin
    for log, found in sorted(bindings.items()):
        hits = [t for f, t, s in found if s == symbol and from_lib in f]
        if not hits or any(want not in t for t in hits):
            ok = fail("%s: %s from %s bound to %s, expected %s"
                      % (log, symbol, from_lib, hits or "nothing", want))
        if mode != "plain" and from_lib != "libscalapack":
            aborts = [t for f, t, s in found if s == "PB_Cabort" and f == dropin]
            if not aborts or any(from_lib not in t for t in aborts):
                ok = fail("%s: the drop-in's PB_Cabort bound to %s, expected the tester's"
                          % (log, aborts or "nothing"))
    return ok


# ---------------------------------------------------------------- running

def binary(args, work, name):
    src = os.path.join(args.tester_dir, name)  # PBLAS/?pb3tst or xdlu
    if args.mode != "relink":
        return src
    dst = os.path.join(work, os.path.basename(name) + ".relinked")
    shutil.copy(src, dst)
    subprocess.run(["patchelf", "--add-needed", os.path.abspath(args.dropin), dst], check=True)
    return dst


def run(args, work, exe):
    logdir = os.path.join(work, "ld")
    os.makedirs(logdir, exist_ok=True)
    env = ["-x", "OPENBLAS_NUM_THREADS=1", "-x", "LD_DEBUG=bindings",
           "-x", "LD_DEBUG_OUTPUT=" + os.path.join(logdir, "ld")]
    if args.mode == "preload":
        env += ["-x", "LD_PRELOAD=" + os.path.abspath(args.dropin)]
    cmd = [args.mpiexec, "-n", str(args.ranks)] + args.mpiexec_flags + env + [exe]
    p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=args.timeout)
    out = p.stdout + p.stderr
    with open(os.path.join(work, "output.txt"), "w") as f:
        f.write(out)
    return p.returncode, out, logdir


def pblas(args, work, input_name):
    kind = args.tester[0].upper()
    stock = read_lines(os.path.join(args.tester_dir, "PBLAS", "P%sBLAS3TST.dat" % kind))
    own = None if input_name == "stock" else read_lines(input_name)
    known = {m.group(1) for m in map(ROUTINE_LINE.match, stock) if m}
    # the type's own routines: HERK and HEMM exist for complex types only
    routines = [r for r in ("P%s%s" % (kind, x) for x in args.routines.split(",")) if r in known]
    lines = tester_input(stock, own, routines)
    with open(os.path.join(work, "P%sBLAS3TST.dat" % kind), "w") as f:
        f.write("\n".join(lines) + "\n")
    rc, out, logdir = run(args, work, binary(args, work, os.path.join("PBLAS", args.tester)))
    ok = rc == 0 or fail("exit code %d" % rc)
    skips = {r: expected_skips(lines, r, args.ranks) for r in routines}
    ok &= check_pblas(out, routines, expected_tests(lines, args.ranks), skips)
    bindings = read_bindings(logdir)
    for routine in routines:
        ok &= check_bindings(bindings, args.mode, routine.lower() + "_", args.tester, args.dropin)
    return ok, out


def lu(args, work):
    shutil.copy(os.path.join(args.tester_dir, "LU.dat"), work)
    rc, out, logdir = run(args, work, binary(args, work, "xdlu"))
    ok = rc == 0 or fail("exit code %d" % rc)
    ok &= check_lu(out)
    ok &= check_bindings(read_bindings(logdir), args.mode, "pdgemm_", "libscalapack", args.dropin)
    return ok, out


def missing(args):
    need = os.path.join(args.tester_dir, "" if args.tester == "xdlu" else "PBLAS", args.tester)
    if not os.path.exists(need):
        return ("%s not found: Debian's scalapack-mpi-test and scalapack-test-common are not "
                "installed (scripts/setup-deps installs them)" % need)
    if args.mode == "relink" and shutil.which("patchelf") is None:
        return "patchelf not found (Debian package patchelf; scripts/setup-deps installs it)"
    return None


# ---------------------------------------------------------------- self-test of the parser

def self_test():
    head = "  Error-exit tests completed.\n"
    row = "  |  PDGEMM           %d        %d        %d       %d\n"
    good = (head + "     ***** Computational check: PDGEMM         PASSED  *****\n" * 2 +
            row % (2, 2, 0, 0) + "  |  PDSYMM            0         0        0       0\n" +
            "  End of Tests.\n")
    bad = {
        "error exit": good.replace(head, head + "PDGEMM : *** ERROR *** ERROR CODE RETURNED = "
                                   "     0 SHOULD HAVE BEEN  -1007\n"),
        "no error exits": good.replace(head, ""),
        "computational": good.replace("PASSED  *****\n", "FAILED  *****\n", 1),
        "summary": good.replace(row % (2, 2, 0, 0), row % (2, 1, 1, 0)),
        "skipped": good.replace(row % (2, 2, 0, 0), row % (2, 2, 0, 1)),
        "count": good.replace(row % (2, 2, 0, 0), row % (3, 3, 0, 0)),
        "other routine": good.replace("PDSYMM            0", "PDSYMM            4"),
        "stopped": good.replace("  End of Tests.\n", ""),
    }
    quiet = open(os.devnull, "w")
    stdout, sys.stdout = sys.stdout, quiet
    try:
        results = {"good": check_pblas(good, ["PDGEMM"], 2)}
        results.update({k: check_pblas(v, ["PDGEMM"], 2) for k, v in bad.items()})
        lu_good = ("Finished    240 tests, with the following results:\n  240 tests completed and "
                   "passed residual checks.\n    0 tests completed and failed residual checks.\n"
                   "    0 tests skipped because of illegal input values.\n\nEND OF TESTS.\n")
        results["lu good"] = check_lu(lu_good)
        results["lu failed"] = check_lu(lu_good.replace("  240 tests completed and passed",
                                                        "  239 tests completed and passed"))
    finally:
        sys.stdout = stdout
    wrong = [k for k, v in results.items() if v != k.endswith("good")]
    print("parser self-test: %d excerpts, %s" % (len(results), "wrong on " + ", ".join(wrong)
                                                  if wrong else "all judged right"))
    return not wrong


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--self-test", action="store_true", help="check the output parser and exit")
    ap.add_argument("--mode", choices=["plain", "preload", "relink"], default="preload")
    ap.add_argument("--tester", help="dpb3tst, spb3tst, cpb3tst, zpb3tst or xdlu")
    ap.add_argument("--input", action="append", default=[],
                    help="'stock' or a P?BLAS3TST.dat of our own (repeatable; PBLAS testers)")
    ap.add_argument("--routines", default="GEMM",
                    help="the routines switched on, without type letter: GEMM,GEADD,TRADD "
                         "(those the tester does not have for its type are left out)")
    ap.add_argument("--tester-dir", help="Debian's openmpi-tests folder (xdlu, LU.dat, PBLAS/)")
    ap.add_argument("--dropin", help="libshardmm_scalapack.so")
    ap.add_argument("--work", help="a scratch folder (default: a temporary one, removed)")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--mpiexec-flags", default="", help="extra flags, one string")
    ap.add_argument("--timeout", type=int, default=300)
    args = ap.parse_args()
    if args.self_test:
        return 0 if self_test() else 1
    if not (args.tester and args.tester_dir and args.dropin):
        ap.error("--tester, --tester-dir and --dropin are required")
    args.mpiexec_flags = args.mpiexec_flags.split()
    why = missing(args)
    if why:
        print("SKIP " + why)
        return SKIP
    base = args.work or tempfile.mkdtemp(prefix="scalapack-testers.")
    ok = True
    runs = ["lu"] if args.tester == "xdlu" else (args.input or ["stock"])
    for i, name in enumerate(runs):
        work = os.path.join(base, "%d-%s" % (i, os.path.basename(name)))
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        good, out = lu(args, work) if name == "lu" else pblas(args, work, name)
        print("%s %s %s on %s (%s)" % ("PASS" if good else "FAIL", args.mode, args.tester,
                                       "LU.dat" if name == "lu" else name, work))
        if good:  # the dynamic linker's logs are large (MBs per rank): kept only on failure
            shutil.rmtree(os.path.join(work, "ld"), ignore_errors=True)
        else:
            print(out[-3000:])
        ok &= good
    if not args.work and ok:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
