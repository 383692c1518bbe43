#!/usr/bin/env python3
"""Every fenced code block of README.md, docs/*.md and bench/README.md is tested.

Each fenced block must be preceded (on the nearest non-blank line) by a marker saying how it is
tested; a block without one fails, so a new block cannot drift untested:

  <!-- snippet: program[, ranks=N] -->     C / C++: a complete program; compiled and linked
                                           against the build's headers and libshardmm, and with
                                           ranks=N run under mpiexec on N ranks (exit 0);
                                           ranks="N M ...": run on each of those counts.
  <!-- snippet: fragment[, ranks=N] -->    C / C++: statements, wrapped in main() between
                                           MPI_Init and MPI_Finalize with shardmm's header and
                                           `m = 50, n = 30, k = 40` declared (all different, so a
                                           shape mistake shows); its #include lines go on top.
                                           cmake: appended to a project with `add_executable(app
                                           app.cpp)` (app=FILE.c: a C program), configured
                                           against the installed prefix (setup=install) and built.
  <!-- snippet: program[, ranks=N] -->     python: a complete program; byte-compiled, and with
                                           ranks=N run under mpiexec on N ranks with the Python
                                           package of the build importable (--python,
                                           --python-path; without them the block is skipped).
  <!-- snippet: run[, sub OLD=NEW]...[, setup=NAME]...[, timeout=S] -->
                                           sh / bash / console (its `$ ` lines): run with bash
                                           -e in a fresh directory that looks like the source
                                           tree (`build` -> the build directory, the source's
                                           top-level entries linked), with an `mpirun` /
                                           `mpiexec` that oversubscribes first on PATH and
                                           OPENBLAS_NUM_THREADS=1; the launcher is not on PATH
                                           (call it build/shardmm, as a user who built it does) (with --python: a
                                           `python3` that is that interpreter, PYTHONPATH the
                                           build's package); exit 0 passes.
                                           `sub OLD=NEW` replaces the whole word OLD (a size, say)
                                           to shrink a long run; a sub that matches nothing fails.
                                           setup=npy: A.npy (64 x 48), B.npy (48 x 32), C0.npy
                                           (64 x 32), f64; setup=install: `cmake --install` into
                                           ./prefix, PREFIX and PKG_CONFIG_PATH set; setup=app:
                                           ./app.c (tests/docs/fixtures/app.c, ScaLAPACK's API
                                           only) and ./unchanged_binary built from it against
                                           ScaLAPACK alone.
  <!-- snippet: skip (REASON) -->          not run; the reason is required and printed.
  <!-- snippet: text (REASON) -->          not code (program output, a grammar); only for blocks
                                           without a code language.

--jobs N tests N blocks at a time (each in its own directory; the report keeps the files' order).
The last line printed is "N passed, N failed, N skipped" (text blocks are counted on the line
before); the exit status is 1 when anything failed.
"""

import argparse
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
C_LANGS = {"c"}
CXX_LANGS = {"cpp", "c++", "cxx"}
SHELL_LANGS = {"sh", "bash", "shell", "console"}
CMAKE_LANGS = {"cmake"}
PYTHON_LANGS = {"python", "py"}
CODE_LANGS = C_LANGS | CXX_LANGS | SHELL_LANGS | CMAKE_LANGS | PYTHON_LANGS
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
DIMS = {"m": 50, "n": 30, "k": 40}


class Block:
    def __init__(self, path, line, lang, text, marker):
        self.path, self.line, self.lang, self.text, self.marker = path, line, lang, text, marker

    @property
    def where(self):
        return f"{self.path}:{self.line}"


def extract(root, rel):
    """Fenced blocks of one markdown file, with the marker on the nearest non-blank line."""
    lines = (root / rel).read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3).lower()
        j, body = i + 1, []
        while j < len(lines):
            s = lines[j]
            if s.strip().startswith(fence[0] * len(fence)) and not s.strip().strip(fence[0]):
                break
            body.append(s[indent:] if s[:indent].strip() == "" else s.lstrip())
            j += 1
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mm = MARKER.match(lines[k]) if k >= 0 else None
        blocks.append(Block(str(rel), i + 1, lang, "\n".join(body) + "\n", mm.group(1) if mm else None))
        i = j + 1
    return blocks


def parse_marker(text):
    """'kind, opt, opt (reason)' -> (kind, options dict, subs list, setups list, reason)."""
    reason = None
    m = re.search(r"\((.*)\)\s*$", text)
    if m:
        reason, text = m.group(1).strip(), text[: m.start()].strip()
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise ValueError("empty marker")
    kind, opts, subs, setups = parts[0], {}, [], []
    for p in parts[1:]:
        if p.startswith("sub "):
            old, sep, new = p[4:].strip().partition("=")
            if not sep or not old:
                raise ValueError(f"bad substitution {p!r} (sub OLD=NEW)")
            subs.append((old, new))
        elif "=" in p:
            key, _, value = p.partition("=")
            key, value = key.strip(), value.strip()
            if key == "setup":
                setups.append(value)
            elif key in ("ranks", "timeout", "app"):
                opts[key] = value
            else:
                raise ValueError(f"unknown option {key!r}")
        else:
            raise ValueError(f"unknown option {p!r}")
    return kind, opts, subs, setups, reason


class Runner:
    def __init__(self, args):
        self.a = args
        self.work = Path(tempfile.mkdtemp(prefix="shardmm-snippets-", dir=args.work_dir))
        self.shims = self.work / "bin"
        self.shims.mkdir()
        mpi_flags = " ".join(f"'{f}'" for f in args.mpiexec_flag)
        for name in ("mpirun", "mpiexec"):
            shim = self.shims / name
            shim.write_text(f"#!/bin/sh\nexec '{args.mpiexec}' {mpi_flags} \"$@\"\n")
            shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        self.env = dict(os.environ)
        self.env["PATH"] = f"{self.shims}{os.pathsep}{self.env.get('PATH', '')}"
        self.env["OPENBLAS_NUM_THREADS"] = "1"
        if args.python:  # python3 is the interpreter the package was built for
            (self.shims / "python3").symlink_to(args.python)
            paths = [args.python_path, self.env.get("PYTHONPATH")]
            self.env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        # ccache: the snippet's directory differs from run to run, the source does not; with
        # the paths below the base directory made relative, an unchanged snippet is a hit.
        self.compile_env = dict(self.env)
        if "CCACHE_BASEDIR" not in self.env:
            self.compile_env["CCACHE_BASEDIR"] = os.path.commonpath(
                [str(self.work), args.source_dir, args.build_dir])
        self.count = 0
        self.count_lock = threading.Lock()  # blocks are tested from several threads (--jobs)

    def fresh_dir(self, block):
        with self.count_lock:
            self.count += 1
            count = self.count
        d = self.work / f"{count:02d}-{re.sub(r'[^A-Za-z0-9]+', '_', block.path)}-{block.line}"
        d.mkdir()
        return d

    def run(self, cmd, cwd, timeout, env=None, log=None):
        """Runs cmd; returns (ok, output). Output goes to the log on failure."""
        start = time.monotonic()
        # A session of its own, so a timeout ends mpiexec's ranks and a block's children too.
        p = subprocess.Popen(cmd, cwd=cwd, env=env or self.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
        try:
            out, _ = p.communicate(timeout=timeout)
            ok = p.returncode == 0
            out += f"\n(exit {p.returncode})" if p.returncode else ""
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
            ok, out = False, out + f"\n(timed out after {timeout} s)"
        if log is not None:
            log.append(f"$ {' '.join(map(str, cmd)) if isinstance(cmd, list) else cmd}"
                       f"   [{time.monotonic() - start:.1f} s]\n{out.rstrip()}")
        return ok, out

    # ---------------------------------------------------------------- C and C++
    def compile_flags(self, lang):
        flags = [f"-I{d}" for d in self.a.include] + [f"-I{d}" for d in self.a.mpi_include]
        libs = [f"-L{d}" for d in self.a.lib_dir] + [f"-Wl,-rpath,{d}" for d in self.a.lib_dir]
        libs += ["-lshardmm"] + self.a.mpi_lib
        if lang in CXX_LANGS:
            # No MPI C++ bindings (as the library builds): their headers warn under -Wextra.
            return [self.a.cxx, "-std=c++20", "-Wall", "-Wextra", "-DOMPI_SKIP_MPICXX",
                    "-DMPICH_SKIP_MPICXX"] + flags, libs
        return [self.a.cc, "-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration",
                "-Werror=incompatible-pointer-types", "-Werror=int-conversion"] + flags, libs + ["-lm"]

    def wrap_fragment(self, block):
        includes, body = [], []
        for s in block.text.splitlines():
            (includes if s.startswith("#include") else body).append(s)
        dims = ", ".join(f"{k} = {v}" for k, v in DIMS.items())
        line = f'#line {block.line + 1} "{block.path}"'
        if block.lang in CXX_LANGS:
            head = ["#include <mpi.h>", "#include <shardmm/shardmm.hpp>", "#include <cstdio>",
                    "#include <cstdlib>"] + includes
            pre = ["int main(int argc, char** argv) {", "  MPI_Init(&argc, &argv);", "  {",
                   f"    [[maybe_unused]] const shardmm::index_t {dims};"]
            post = ["  }", "  MPI_Finalize();", "  return 0;", "}"]
        else:
            head = ["#include <mpi.h>", "#include <shardmm/c/shardmm.h>", "#include <stdint.h>",
                    "#include <stdio.h>", "#include <stdlib.h>"] + includes
            pre = ["int main(int argc, char **argv) {", "  MPI_Init(&argc, &argv);", "  {",
                   f"    const int64_t {dims};", "    (void)m, (void)n, (void)k;"]
            post = ["  }", "  MPI_Finalize();", "  return 0;", "}"]
        # Blank lines keep the body on its markdown lines (#line counts from the fence).
        out = head + pre + [line]
        for s in block.text.splitlines():
            out.append("" if s.startswith("#include") else s)
        return "\n".join(out + post) + "\n"

    def test_c(self, block, kind, opts, log):
        d = self.fresh_dir(block)
        ext = "cpp" if block.lang in CXX_LANGS else "c"
        src = d / f"snippet.{ext}"
        if kind == "program":
            src.write_text(f'#line 1 "{block.path}:{block.line + 1}"\n' + block.text)
        else:
            src.write_text(self.wrap_fragment(block))
        cc, libs = self.compile_flags(block.lang)
        # Compiled, then linked: a compiler launcher (ccache) caches only the compile step.
        obj = str(d / "snippet.o")
        ok, _ = self.run(self.a.launcher + cc + ["-c", str(src), "-o", obj], d, 300,
                         env=self.compile_env, log=log)
        if ok:
            ok, _ = self.run(cc + [obj, "-o", str(d / "snippet")] + libs, d, 300, log=log)
        if not ok or "ranks" not in opts:
            return ok, "compiled" if ok else "does not compile"
        for n in opts["ranks"].split():  # "2 4": on 2 ranks, then on 4
            ok, _ = self.run([self.a.mpiexec, "-n", n] + self.a.mpiexec_flag + [str(d / "snippet")],
                             d, int(opts.get("timeout", 180)), log=log)
            if not ok:
                return False, f"compiled, failed on {n} ranks"
        return True, f"compiled, ran on {' and '.join(opts['ranks'].split())} ranks"

    # ---------------------------------------------------------------- shell
    def tree_dir(self, block):
        """A fresh directory that looks like the source tree, `build` = the build directory."""
        d = self.fresh_dir(block)
        for entry in Path(self.a.source_dir).iterdir():
            if entry.name not in ("build", ".git"):
                (d / entry.name).symlink_to(entry)
        (d / "build").symlink_to(self.a.build_dir)
        return d

    def setup(self, name, d, env, log):
        if name == "npy":
            for fname, rows, cols in (("A.npy", 64, 48), ("B.npy", 48, 32), ("C0.npy", 64, 32)):
                write_npy(d / fname, rows, cols)
            return True
        if name == "install":
            ok, _ = self.run(["cmake", "--install", self.a.build_dir, "--prefix", str(d / "prefix")],
                             d, 300, env=env, log=log)
            env["PREFIX"] = str(d / "prefix")
            env["PKG_CONFIG_PATH"] = f"{d / 'prefix' / 'lib' / 'pkgconfig'}{os.pathsep}{env.get('PKG_CONFIG_PATH', '')}"
            env["CMAKE_PREFIX_PATH"] = str(d / "prefix")
            return ok
        if name == "app":
            shutil.copy(HERE / "fixtures" / "app.c", d / "app.c")
            lib = self.a.scalapack_lib
            ok, _ = self.run(["mpicc", "app.c", "-o", "unchanged_binary", lib if "/" in lib else f"-l{lib}"],
                             d, 300, env=env, log=log)
            return ok
        log.append(f"unknown setup {name!r}")
        return False

    def test_shell(self, block, opts, subs, setups, log):
        text = block.text
        if block.lang == "console":
            text = "".join(s[2:] + "\n" for s in text.splitlines() if s.startswith("$ "))
        for old, new in subs:
            pattern = re.compile(r"(?<![\w.])" + re.escape(old) + r"(?![\w.])")
            text, n = pattern.subn(new, text)
            if n == 0:
                log.append(f"substitution {old}={new} matches nothing in the block")
                return False, "stale substitution"
        d = self.tree_dir(block)
        env = dict(self.env)
        for name in setups:
            if not self.setup(name, d, env, log):
                return False, f"setup {name} failed"
        (d / "snippet.sh").write_text(text)
        log.append("--- the block as run:\n" + text.rstrip())
        ok, _ = self.run(["bash", "-e", "-o", "pipefail", "snippet.sh"], d,
                         int(opts.get("timeout", 300)), env=env, log=log)
        what = "ran" + (" (shrunk: " + ", ".join(f"{o}={n}" for o, n in subs) + ")" if subs else "")
        return ok, what if ok else "failed"

    # ---------------------------------------------------------------- Python
    def test_python(self, block, opts, log):
        d = self.tree_dir(block)
        (d / "snippet.py").write_text(block.text)
        ok, _ = self.run([self.a.python, "-m", "py_compile", "snippet.py"], d, 60, log=log)
        if not ok or "ranks" not in opts:
            return ok, "compiled" if ok else "does not compile"
        n = opts["ranks"]
        ok, _ = self.run([self.a.mpiexec, "-n", n] + self.a.mpiexec_flag + [self.a.python, "snippet.py"],
                         d, int(opts.get("timeout", 180)), log=log)
        return ok, f"ran on {n} ranks" if ok else f"failed on {n} ranks"

    # ---------------------------------------------------------------- cmake
    def test_cmake(self, block, opts, setups, log):
        d = self.fresh_dir(block)
        env = dict(self.compile_env)
        for name in setups:
            if not self.setup(name, d, env, log):
                return False, f"setup {name} failed"
        app = opts.get("app", "app.cpp")
        fixtures = {"app.cpp": Path(self.a.source_dir) / "tests/install/src/consumer.cpp",
                    "app.c": HERE / "fixtures" / "app.c"}
        if app not in fixtures:
            return False, f"unknown app {app}"
        proj = d / "project"
        proj.mkdir()
        shutil.copy(fixtures[app], proj / app)
        proj.joinpath("CMakeLists.txt").write_text(
            "cmake_minimum_required(VERSION 3.25)\nproject(snippet LANGUAGES C CXX)\n"
            f"add_executable(app {app})\n" + block.text)
        # The compiler launcher (ccache) as for the C / C++ blocks: an unchanged app is a hit.
        launch = [f"-DCMAKE_{lang}_COMPILER_LAUNCHER={';'.join(self.a.launcher)}"
                  for lang in ("C", "CXX") if self.a.launcher]
        ok, _ = self.run(["cmake", "-S", str(proj), "-B", str(d / "b"), "-DCMAKE_BUILD_TYPE=Release",
                          *launch], d, 300, env=env, log=log)
        if ok:
            ok, _ = self.run(["cmake", "--build", str(d / "b")], d, 300, env=env, log=log)
        if not ok or "ranks" not in opts:
            return ok, "configured and built" if ok else "does not configure or build"
        n = opts["ranks"]
        ok, _ = self.run([self.a.mpiexec, "-n", n] + self.a.mpiexec_flag + [str(d / "b" / "app")], d,
                         180, env=env, log=log)
        return ok, f"built, ran on {n} ranks" if ok else f"built, failed on {n} ranks"

    # ---------------------------------------------------------------- one block
    def test(self, block):
        """-> (status 'pass'|'fail'|'skip'|'text', summary, log lines)."""
        log = []
        if block.marker is None:
            return "fail", "no <!-- snippet: ... --> marker before the block", log
        try:
            kind, opts, subs, setups, reason = parse_marker(block.marker)
        except ValueError as e:
            return "fail", f"bad marker: {e}", log
        if kind in ("skip", "text"):
            if not reason:
                return "fail", f"`{kind}` needs a reason in parentheses", log
            if kind == "text" and block.lang in CODE_LANGS:
                return "fail", f"`text` is for blocks without a code language, not {block.lang}", log
            return kind, reason, log
        if block.lang in C_LANGS | CXX_LANGS and kind in ("program", "fragment"):
            ok, what = self.test_c(block, kind, opts, log)
        elif block.lang in SHELL_LANGS and kind == "run":
            ok, what = self.test_shell(block, opts, subs, setups, log)
        elif block.lang in CMAKE_LANGS and kind == "fragment":
            ok, what = self.test_cmake(block, opts, setups, log)
        elif block.lang in PYTHON_LANGS and kind == "program":
            if not self.a.python:
                return "skip", "the Python package is not built (no --python)", log
            ok, what = self.test_python(block, opts, log)
        else:
            return "fail", f"marker `{kind}` does not apply to a `{block.lang or 'plain'}` block", log
        return ("pass" if ok else "fail"), what, log


def write_npy(path, rows, cols):
    """A float64, Fortran-order .npy (version 1.0) with values i + 0.5 j, no numpy needed."""
    header = f"{{'descr': '<f8', 'fortran_order': True, 'shape': ({rows}, {cols}), }}"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    data = struct.pack(f"<{rows * cols}d", *(i + 0.5 * j for j in range(cols) for i in range(rows)))
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)


def markdown_files(root):
    files = [Path("README.md")] + sorted(p.relative_to(root) for p in (root / "docs").glob("*.md"))
    files.append(Path("bench/README.md"))
    return [f for f in files if (root / f).is_file()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--shardmm", required=True, help="the launcher ($<TARGET_FILE:shardmm_cli>)")
    ap.add_argument("--include", action="append", default=[], help="shardmm's include directory")
    ap.add_argument("--lib-dir", action="append", default=[], help="directory of libshardmm*")
    ap.add_argument("--mpi-include", action="append", default=[])
    ap.add_argument("--mpi-lib", action="append", default=[], help="an MPI library to link")
    ap.add_argument("--cxx", default="mpicxx")
    ap.add_argument("--cc", default="mpicc")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--mpiexec-flag", action="append", default=[])
    ap.add_argument("--scalapack-lib", default="scalapack-openmpi", help="a name for -l, or a path")
    ap.add_argument("--work-dir", default=None, help="where the temporary directory goes")
    ap.add_argument("--python", default=None, help="interpreter of the build's Python package")
    ap.add_argument("--python-path", default=None, help="PYTHONPATH of the build's package")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--only", default=None, help="test only blocks whose FILE:LINE contains this")
    ap.add_argument("--launcher", action="append", default=[],
                    help="a compiler launcher for the C / C++ compiles (ccache)")
    ap.add_argument("--jobs", type=int, default=1, help="blocks tested at a time (default 1)")
    ap.add_argument("files", nargs="*", help="markdown files relative to the source directory")
    a = ap.parse_args()
    a.mpiexec_flag = [f for flag in a.mpiexec_flag for f in flag.split(";") if f]
    a.include = [str(Path(d).resolve()) for d in a.include]
    a.lib_dir = [str(Path(d).resolve()) for d in a.lib_dir]
    a.build_dir, a.shardmm = str(Path(a.build_dir).resolve()), str(Path(a.shardmm).resolve())
    a.source_dir = str(Path(a.source_dir).resolve())
    # Absolute, before PATH gets the mpirun / mpiexec shims that call it.
    for tool in ("mpiexec", "cxx", "cc"):
        found = shutil.which(getattr(a, tool))
        if not found:
            ap.error(f"{getattr(a, tool)} not found")
        setattr(a, tool, str(Path(found).resolve()) if tool == "mpiexec" else found)
    root = Path(a.source_dir).resolve()
    files = [Path(f) for f in a.files] or markdown_files(root)
    if a.work_dir:
        Path(a.work_dir).mkdir(parents=True, exist_ok=True)
    runner = Runner(a)
    counts = {"pass": 0, "fail": 0, "skip": 0, "text": 0}
    failures = []
    blocks = [b for rel in files for b in extract(root, rel) if not a.only or a.only in b.where]

    def timed(block):
        start = time.monotonic()
        return runner.test(block) + (time.monotonic() - start,)

    try:
        # map() hands the results back in the blocks' order, whatever order they finish in.
        with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            for block, (status, what, log, seconds) in zip(blocks, pool.map(timed, blocks)):
                counts[status] += 1
                label = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP", "text": "TEXT"}[status]
                print(f"{label}  {block.where:<24} {block.lang or 'plain':<8} {what}"
                      f"  [{seconds:.1f} s]", flush=True)
                if status == "fail":
                    failures.append(block.where)
                    for entry in log:
                        print("      " + entry.replace("\n", "\n      "))
    finally:
        if a.keep:
            print(f"kept {runner.work}")
        else:
            shutil.rmtree(runner.work, ignore_errors=True)
    if failures:
        print("failed: " + " ".join(failures))
    print(f"{counts['text']} text blocks (program output, grammar): not code, not counted")
    print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
