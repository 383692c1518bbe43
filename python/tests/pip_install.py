#!/usr/bin/env python3
"""`pip install .` as a user runs it: in a venv made with --system-site-packages (Debian's
numpy and mpi4py visible; --without-pip: the venv's interpreter runs Debian's pip from there,
python3-pip, instead of a copy that ensurepip unpacks from python3-pip-whl, same pip, seconds
slower), pip installs the source tree (pyproject.toml at its root) offline
(--no-index: nothing may be downloaded, not even for the build's isolated environment), then
the venv's interpreter imports shardmm from the venv and multiplies on 2 ranks; the same with
`pip install --user .` (into a temporary PYTHONUSERBASE). The build reuses BUILD_DIR (a
configured build tree of SOURCE) so it takes seconds.

Usage: pip_install.py PYTHON SOURCE BUILD_DIR MPIEXEC [MPIEXEC_FLAG...]"""
import os
import subprocess
import sys
import tempfile
import time

PROGRAM = """
import sys
import numpy as np
from mpi4py import MPI
import shardmm
assert shardmm.__file__.startswith(sys.argv[1]), (shardmm.__file__, sys.argv[1])
a = np.arange(30.0).reshape(6, 5)
c = shardmm.matmul(a, a.T)
assert np.allclose(c, a @ a.T)
if MPI.COMM_WORLD.Get_rank() == 0:
    print("imported from", shardmm.__file__, "and multiplied on", MPI.COMM_WORLD.Get_size(), "ranks")
"""


def run(cmd, env, what, cwd):
    """cmd in cwd (a directory without a shardmm package: `python -c` imports from its cwd)."""
    print("+", " ".join(cmd), flush=True)
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    print(p.stdout + f"({time.monotonic() - start:.1f} s)\n")
    if p.returncode != 0:
        sys.exit(f"FAIL: {what} (exit {p.returncode})")


def main():
    if len(sys.argv) < 5 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2
    python, source, build, mpiexec = sys.argv[1:5]
    with tempfile.TemporaryDirectory(prefix="shardmm-pip-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONUSERBASE")}
        env["PIP_NO_INDEX"] = "1"
        venv = os.path.join(tmp, "venv")
        vpy = os.path.join(venv, "bin", "python")
        run([python, "-m", "venv", "--system-site-packages", "--without-pip", venv], env,
            "python3 -m venv", tmp)
        pip = [vpy, "-m", "pip", "install", "--no-index", "--no-cache-dir", "--config-settings",
               f"build-dir={build}"]
        run([*pip, source], env, "pip install .", tmp)
        mpi = [mpiexec, "-n", "2", *sys.argv[5:], vpy, "-c", PROGRAM]
        run([*mpi, venv], env, "import and multiply from the venv", tmp)
        run([vpy, "-m", "pip", "uninstall", "-y", "shardmm"], env, "pip uninstall", tmp)
        user = dict(env, PYTHONUSERBASE=os.path.join(tmp, "user"))
        run([*pip, "--user", source], user, "pip install --user .", tmp)
        run([*mpi, user["PYTHONUSERBASE"]], user, "import and multiply from the user site", tmp)
    print("PASS: pip install . and pip install --user . into a venv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
