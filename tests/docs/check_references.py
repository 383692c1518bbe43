#!/usr/bin/env python3
"""Checks that the source files the docs name exist, so a doc cannot keep describing a file that
was renamed, split or removed (the class of stale claims that named reduce_partials for the
sharding rules).

Usage: check_references.py REPO_ROOT
Every `name.ext` in backticks in README.md and docs/*.md, for ext in cpp, hpp, h, c, py, cmake,
sh, must name a file of the repository: a path relative to the root, to src/ or to include/,
or, without a directory, a file of that name anywhere in the tree. And the other way round,
every file under docs/data must be named (by its name) in README.md, docs/*.md or a script,
so measurements no document cites do not pile up there. And the docs are reference pages, not
lab notebooks: no line of README.md or docs/*.md may cite the history of the work ("round 7",
"rounds 4 and 5", "issue 25", "issue-10", "#12 issue", "this round", "the issue's ..."); that
history is git's. Exits 1 listing the misses as file:line.
"""
import fnmatch
import os
import re
import sys

NAMED = re.compile(r"`([\w./-]+\.(?:cpp|hpp|h|c|py|cmake|sh))`")
SKIP_DIRS = {".git", "build"}

# History references a reference page must not make (case-insensitive). Plain "round" (a round
# trip, round-robin, each round of a benchmark) and "issue" as a verb stay allowed.
HISTORY = re.compile("|".join([
    r"\brounds? \d+",                               # round 7, rounds 4 and 5
    r"\bround[-_]?\d+",                             # round-6, round6.jsonl
    r"\bissues? #?\d+",                             # issue 25, issue #25
    r"\bissue[-_]?\d+",                             # issue-10, issue25-default-layouts
    r"#\d+ issue",                                  # #25 issue
    r"\b(?:this|previous|earlier|last|next) rounds?\b",
    r"\bthe issue's\b",
]), re.IGNORECASE)

# Docs the history check skips (none: every page is a reference page).
HISTORY_EXEMPT: set = set()


def tree_files(root):
    paths, names = set(), set()
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")]
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), root)
            paths.add(rel)
            names.add(f)
    return paths, names


def exists(ref, paths, names):
    if "/" not in ref:
        return ref in names
    ref = ref.lstrip("./")
    return any(p + ref in paths for p in ("", "src/", "include/", "include/shardmm/"))


def unreferenced_data(root, docs):
    """Files under docs/data whose name no document or script mentions."""
    texts = []
    for doc in docs:
        with open(os.path.join(root, doc), encoding="utf-8") as fh:
            texts.append(fh.read())
    scripts = os.path.join(root, "scripts")
    for d, _, files in os.walk(scripts):
        for f in files:
            with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                texts.append(fh.read())
    text = "\n".join(texts)
    # Cited as a pattern too: `final.*`, `profile-*.json`.
    globs = {os.path.basename(g) for g in re.findall(r"`([\w./-]*\*[\w./-]*)`", text)}
    globs = {g for g in globs if len(g.replace("*", "").strip(".")) >= 3}
    out = []
    for d, _, files in os.walk(os.path.join(root, "docs", "data")):
        for f in sorted(files):
            if f not in text and not any(fnmatch.fnmatch(f, g) for g in globs):
                rel = os.path.relpath(os.path.join(d, f), root)
                out.append(f"{rel}: no document or script names it (cite it or remove it)")
    return out


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    root = sys.argv[1]
    paths, names = tree_files(root)
    docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(root, "docs"))
                                  if f.endswith(".md"))
    misses = []
    for doc in docs:
        with open(os.path.join(root, doc), encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                misses += [f"{doc}:{n}: `{r}` names no file of the repository"
                           for r in NAMED.findall(line) if not exists(r, paths, names)]
                if doc not in HISTORY_EXEMPT:
                    misses += [f"{doc}:{n}: \"{m.group(0)}\" cites the history of the work "
                               "(state what is true now; history is git's)"
                               for m in HISTORY.finditer(line)]
    misses += unreferenced_data(root, docs)
    print("\n".join(misses) if misses else f"check_references: {len(docs)} docs, all named files exist")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
