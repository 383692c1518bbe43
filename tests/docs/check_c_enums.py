#!/usr/bin/env python3
"""Checks that every input enum of the C API keeps any int a valid value.

Usage: check_c_enums.py REPO_ROOT
A C caller may pass any int where the header declares an enum; C++ code that reads an enum
outside its declared range is undefined behaviour (UBSan reports it). So every enum a caller
passes in (all but shardmm_status, which only comes out) ends with a NAME_INT_RANGE_ =
0x7fffffff member, and the library checks the value. Exits 1 naming every enum without it.
"""
import os
import re
import sys

ENUM = re.compile(r"typedef enum (\w+)\s*\{(.*?)\}\s*(\w+);", re.S)
SENTINEL = re.compile(r"\b\w+_INT_RANGE_\s*=\s*0x7fffffff\b")
OUTPUT_ONLY = {"shardmm_status"}


def main(root):
    path = os.path.join(root, "include/shardmm/c/shardmm.h")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    enums = ENUM.findall(text)
    missing = [name for name, body, _ in enums
               if name not in OUTPUT_ONLY and not SENTINEL.search(body)]
    if not enums:
        print(f"{path}: no enums found (has the header moved?)")
        return 1
    for name in missing:
        print(f"{path}: enum {name} has no *_INT_RANGE_ = 0x7fffffff member")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
