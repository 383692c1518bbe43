#!/usr/bin/env python3
"""Runs Debian's CP2K (cp2k.popt: MPI, linked against libscalapack-openmpi) on a small DFT
energy, H2O with GTH pseudopotentials and a DZVP basis in a 5 A box (the input of CP2K's own
examples/H2O.inp as a single-point ENERGY run), twice on the same ranks: as shipped, and with
the ScaLAPACK drop-in preloaded and the dynamic linker's bindings logged (LD_DEBUG=bindings).

Passes when both runs end with the same total energy (ENERGY| Total FORCE_EVAL line) to
--digits decimals, and the drop-in served CP2K's PBLAS level-3 calls: each of --routines
(default pdsyrk_,pdtrsm_,pdtran_: what CP2K's Cholesky-based orthonormalisation calls, in part
from inside libscalapack's PDPOTRF) is bound to libshardmm_scalapack.so in at least one rank's
log, and none of them to libscalapack.

Exit codes: 0 pass, 1 a check failed, 77 skipped (cp2k.popt or its data are not installed:
`apt-get install cp2k`), 2 usage.
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
ENERGY = re.compile(r"ENERGY\| Total FORCE_EVAL \( QS \) energy \[a\.u\.\]:\s+(\S+)")
BINDING = re.compile(r"binding file .* to (\S+) \[\d+\]: normal symbol `([a-z0-9_]+)'")

INPUT = """&GLOBAL
  PROJECT h2o
  RUN_TYPE ENERGY
  PRINT_LEVEL LOW
&END GLOBAL
&FORCE_EVAL
  METHOD Quickstep
  &DFT
    BASIS_SET_FILE_NAME BASIS_SET
    POTENTIAL_FILE_NAME POTENTIAL
    &MGRID
      CUTOFF 200
    &END MGRID
    &SCF
      EPS_SCF 1.0E-6
      SCF_GUESS ATOMIC
    &END SCF
    &XC
      &XC_FUNCTIONAL Pade
      &END XC_FUNCTIONAL
    &END XC
  &END DFT
  &SUBSYS
    &CELL
      ABC 5.0 5.0 5.0
    &END CELL
    &COORD
    O   0.000000    0.000000   -0.065587
    H   0.000000   -0.757136    0.520545
    H   0.000000    0.757136    0.520545
    &END COORD
    &KIND H
      BASIS_SET DZVP-GTH-PADE
      POTENTIAL GTH-PADE-q1
    &END KIND
    &KIND O
      BASIS_SET DZVP-GTH-PADE
      POTENTIAL GTH-PADE-q6
    &END KIND
  &END SUBSYS
&END FORCE_EVAL
"""


def run(args, work, env_flags, log):
    cmd = ([args.mpiexec, "-n", str(args.ranks)] + args.mpiexec_flags.split() +
           ["-x", "OPENBLAS_NUM_THREADS=1", "-x", "OMP_NUM_THREADS=1"] + env_flags +
           [args.cp2k, "-i", "h2o.inp"])
    with open(os.path.join(work, log), "w") as out:
        rc = subprocess.call(cmd, cwd=work, stdout=out, stderr=subprocess.STDOUT,
                             timeout=args.timeout)
    text = open(os.path.join(work, log)).read()
    energies = ENERGY.findall(text)
    if rc != 0 or not energies:
        print(f"FAIL: {' '.join(cmd)} exited {rc} without an energy; its output:\n{text[-3000:]}")
        return None
    return energies[-1]


def bindings(work):
    """Routine -> set of libraries it was bound to, over every rank's LD_DEBUG log."""
    seen = {}
    for path in glob.glob(os.path.join(work, "ld.*")):
        with open(path, errors="replace") as f:
            for line in f:
                m = BINDING.search(line)
                if m:
                    seen.setdefault(m.group(2), set()).add(os.path.basename(m.group(1)))
    return seen


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dropin", required=True, help="libshardmm_scalapack.so")
    ap.add_argument("--cp2k", default="cp2k.popt", help="CP2K's MPI binary (default cp2k.popt)")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--mpiexec-flags", default="", help="extra flags, one string")
    ap.add_argument("--routines", default="pdsyrk_,pdtrsm_,pdtran_")
    ap.add_argument("--digits", type=int, default=10, help="decimals the energies must share")
    ap.add_argument("--timeout", type=int, default=240, help="seconds per run")
    ap.add_argument("--work", help="keep the runs' files here (default: a temporary folder)")
    args = ap.parse_args()
    args.cp2k = shutil.which(args.cp2k) or args.cp2k
    if not os.path.exists(args.cp2k) or not os.path.isdir("/usr/share/cp2k"):
        print(f"SKIP: {args.cp2k} or /usr/share/cp2k not installed (apt-get install cp2k)")
        return SKIP
    work = args.work or tempfile.mkdtemp(prefix="shardmm-cp2k-")
    os.makedirs(work, exist_ok=True)
    for old in glob.glob(os.path.join(work, "ld.*")):
        os.remove(old)
    with open(os.path.join(work, "h2o.inp"), "w") as f:
        f.write(INPUT)
    plain = run(args, work, [], "plain.out")
    dropin = run(args, work, ["-x", "LD_PRELOAD=" + os.path.abspath(args.dropin),
                              "-x", "LD_DEBUG=bindings", "-x", "LD_DEBUG_OUTPUT=ld"], "dropin.out")
    if plain is None or dropin is None:
        return 1
    ok = round(float(plain), args.digits) == round(float(dropin), args.digits)
    print(f"energy: ScaLAPACK {plain}, drop-in {dropin}: " + ("same" if ok else "DIFFERENT"))
    seen = bindings(work)
    lib = os.path.basename(args.dropin)
    for r in args.routines.split(","):
        libs = seen.get(r, set())
        good = lib in libs and not any("scalapack-openmpi" in x for x in libs)
        print(f"{r}: bound to {', '.join(sorted(libs)) or 'nothing (never called)'}"
              + ("" if good else "  <- FAIL"))
        ok = ok and good
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
