#!/usr/bin/env python3
"""After `cmake --install`: says where the Python package went and, when the interpreter does
not search that directory (a prefix like $HOME/.local, whose user site is site-packages while
Debian's install layout is dist-packages), what makes `import shardmm` find it.

Usage: where.py PACKAGE_PARENT_DIR   (run by the install with the module's interpreter)"""
import os
import site
import sys


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    where = os.path.realpath(sys.argv[1])
    searched = {os.path.realpath(p) for p in sys.path if p}
    if where in searched:
        print(f"-- shardmm (Python): {where}/shardmm, on {sys.executable}'s path")
        return 0
    print(f"-- shardmm (Python): {where}/shardmm is not on {sys.executable}'s path: run it with "
          f"PYTHONPATH={where} (or `pip install .` from the source; the user site of this "
          f"interpreter is {site.getusersitepackages()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
