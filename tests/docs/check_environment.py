#!/usr/bin/env python3
"""Checks that shardmm's environment variables have one source and one table.

Usage: check_environment.py REPO_ROOT
1. The variables src/core/config.cpp lists (name and unset meaning) are exactly the rows of
   docs/USAGE.md's "Environment variables" table, in the same order.
2. Every variable a source reads through shardmm::environment("...") is in that list.
3. No C++ source outside src/core/config.cpp calls getenv with a SHARDMM_ name, and getenv is
   called only where a system variable is read (ALLOWED below).
4. No C++ source sets an environment variable (setenv, putenv): the launcher and the bindings
   pass a setting as its Options field, and the library never writes what it reads.
Exits 1 listing every difference.
"""
import os
import re
import sys

LISTED = re.compile(r'EnvVariable\{"(SHARDMM_\w+)",\s*"([^"]*)"\}')
READ = re.compile(r'environment\("(\w+)"\)')
GETENV = re.compile(r"getenv\s*\(\s*([^)]*)\)")
SETENV = re.compile(r"\b(setenv|putenv)\s*\(")
ROW = re.compile(r"^\|\s*`(SHARDMM_\w+)`\s*\|([^|]*)\|")
# Files that read a system variable (not ours) with getenv, and what they read.
ALLOWED = {
    "src/core/config.cpp": None,  # the reader itself
    "src/trace/call.cpp": {'"TMPDIR"'},
    "src/comm/wait.cpp": {"name"},  # the launchers' local-rank counts (OMPI_, MPI_, MV2_)
    "apps/shardmm/main.cpp": {"name"},  # whether a launcher started it (OMPI_, PMI_, PMIX_, MV2_)
}
SOURCES = ("src", "apps", "include", "python/src", "bench")


def listed(root):
    with open(os.path.join(root, "src/core/config.cpp"), encoding="utf-8") as f:
        return LISTED.findall(f.read())


def table(root):
    with open(os.path.join(root, "docs/USAGE.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.find("Environment variables\n")
    if start < 0:
        return None
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("#"):
            break
        m = ROW.match(line)
        if m:
            rows.append((m.group(1), m.group(2).strip().replace("`", "")))
    return rows


def sources(root):
    for top in SOURCES:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".cpp", ".hpp", ".h", ".c")):
                    path = os.path.join(d, f)
                    yield os.path.relpath(path, root), open(path, encoding="utf-8").read()


def check_reads(root, names):
    problems = []
    for rel, text in sources(root):
        for name in READ.findall(text):
            if name not in names:
                problems.append(f"{rel}: reads {name}, which src/core/config.cpp does not list")
        for arg in GETENV.findall(text):
            arg = arg.strip()
            if rel in ALLOWED and (ALLOWED[rel] is None or arg in ALLOWED[rel]):
                continue
            problems.append(f"{rel}: getenv({arg}) outside src/core/config.cpp "
                            "(read shardmm's variables with shardmm::environment)")
        for call in SETENV.findall(text):
            problems.append(f"{rel}: calls {call} (pass the setting as an Options field)")
    return problems


def main(root):
    code = listed(root)
    docs = table(root)
    problems = []
    if not code:
        problems.append("src/core/config.cpp: no EnvVariable entries found")
    if docs is None:
        problems.append("docs/USAGE.md: no 'Environment variables' section")
    elif docs != code:
        problems.append("docs/USAGE.md's table and src/core/config.cpp differ:\n"
                        f"  docs: {docs}\n  code: {code}")
    problems += check_reads(root, {n for n, _ in code})
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    sys.exit(main(sys.argv[1]))
