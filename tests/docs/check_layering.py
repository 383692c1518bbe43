#!/usr/bin/env python3
"""Checks that the library's layers include downwards only (docs/ARCHITECTURE.md).

Usage: check_layering.py REPO_ROOT
1. The distributed algorithms (src/algo/) include nothing of the front end: no src/front/
   header and no public header that declares a front-end entry (gemm.hpp, the umbrella
   shardmm.hpp, batched.hpp, ooc.hpp, plan.hpp, plan_blas3.hpp, io.hpp, the C API), and call
   no public gemm. A product an algorithm composes on a group of its ranks goes back through
   algo::SubProduct, which the front end passes in. (blas3.hpp is allowed: the algorithms
   take its Uplo, Side and Diag.)
2. The planner (src/plan/) includes nothing from src/algo/ or src/front/: it is pure, and the
   rules it shares with the algorithms live in neutral headers (src/core/).
3. The services below the algorithms (src/comm, src/blas, src/memory, src/trace, src/core,
   src/layout, src/mesh, src/matrix) include nothing from src/algo/, src/plan/ or
   src/front/, nor gemm.hpp or the umbrella (they implement the types of plan.hpp and
   batched.hpp, so those are allowed).
Exits 1 listing every include or call that breaks a rule.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# A call of the public gemm: shardmm::gemm( or an unqualified gemm( (blas::gemm is qualified).
GEMM_CALL = re.compile(r"(?:shardmm::|(?<![\w:.>]))gemm\s*\(")
FRONT_HEADERS = {
    "shardmm/gemm.hpp",
    "shardmm/shardmm.hpp",
    "shardmm/batched.hpp",
    "shardmm/ooc.hpp",
    "shardmm/plan.hpp",
    "shardmm/plan_blas3.hpp",
    "shardmm/io.hpp",
    "shardmm/c/shardmm.h",
}
ENTRY_HEADERS = {"shardmm/gemm.hpp", "shardmm/shardmm.hpp"}
SERVICES = ("comm", "blas", "memory", "trace", "core", "layout", "mesh", "matrix")
# Directory under src/ -> the src/ directories and headers its files may not include.
RULES = {
    "algo": (("front",), FRONT_HEADERS),
    "plan": (("algo", "front"), set()),
    **{d: (("algo", "plan", "front"), ENTRY_HEADERS) for d in SERVICES},
}


def code_of(text):
    """The text without // and /* */ comments (string literals are left alone)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def problems_in(root, layer, path, text):
    dirs, headers = RULES[layer]
    rel = os.path.relpath(path, root)
    found = []
    for inc in INCLUDE.findall(text):
        if inc.split("/")[0] in dirs or inc in headers:
            found.append(f'{rel}: includes "{inc}" (src/{layer}/ may not)')
    if layer == "algo":
        for line in code_of(text).splitlines():
            if GEMM_CALL.search(line):
                found.append(f"{rel}: calls the public gemm ({line.strip()}): use algo::SubProduct")
    return found


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    root = sys.argv[1]
    problems = []
    checked = 0
    for layer in RULES:
        for d, _, files in os.walk(os.path.join(root, "src", layer)):
            for f in sorted(files):
                if f.endswith((".cpp", ".hpp")):
                    path = os.path.join(d, f)
                    with open(path, encoding="utf-8") as fh:
                        problems += problems_in(root, layer, path, fh.read())
                    checked += 1
    if checked == 0:
        print("check_layering: no sources under src/", file=sys.stderr)
        return 1
    for p in problems:
        print(p)
    print(f"check_layering: {checked} files, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
