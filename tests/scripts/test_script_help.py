#!/usr/bin/env python3
"""Every script in scripts/ and its command folders (bench/, cluster/, cluster/jobs/, report/)
answers --help and -h with its usage (a line
"Usage: ...", any case) and exit 0, and rejects an unknown option with a message and exit 2, both
without side effects: run from an empty temporary directory with stubs first on PATH for every
program a script could build, install or launch with (each stub records its call and fails),
nothing may be called, and nothing may appear in the temporary directory, the build
directory, the repository's top level or docs/data."""
import os
import stat
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPTS = os.path.join(ROOT, "scripts")
SOURCED = {"common.sh"}  # sourced by the others, not run
PENDING: set = set()  # scripts not yet parsing their arguments: none
STUBS = ["cmake", "ctest", "make", "ninja", "mpirun", "mpiexec", "srun", "sbatch", "qsub",
         "apt-get", "sudo", "dpkg-query", "gnuplot", "clang++", "mpicxx", "clang-tidy", "clang-tidy-22",
         "run-clang-tidy", "ip", "tc", "bridge", "unshare", "iptables"]


def scripts():
    names = []
    for d in ("", "bench", "cluster", "cluster/jobs", "report"):
        for name in sorted(os.listdir(os.path.join(SCRIPTS, d))):
            path = os.path.join(SCRIPTS, d, name)
            if os.path.isfile(path) and name not in SOURCED:
                names.append(os.path.join(d, name) if d else name)
    return names


def snapshot(path, depth):
    """{relative path: mtime} of the entries under PATH, DEPTH levels deep."""
    out = {}
    if not os.path.isdir(path):
        return out
    for entry in os.scandir(path):
        out[entry.name] = entry.stat(follow_symlinks=False).st_mtime_ns
        if depth > 1 and entry.is_dir(follow_symlinks=False):
            out.update({entry.name + "/" + k: v for k, v in snapshot(entry.path, depth - 1).items()})
    return out


class ScriptHelp(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        base = cls.tmp.name
        cls.stubs, cls.log = os.path.join(base, "stubs"), os.path.join(base, "calls.log")
        os.mkdir(cls.stubs)
        real_ctest = subprocess.run(["sh", "-c", "command -v ctest"], capture_output=True, text=True).stdout.strip()
        for name in STUBS:
            stub = os.path.join(cls.stubs, name)
            with open(stub, "w") as f:
                f.write("#!/bin/sh\n")
                if name == "ctest" and real_ctest:  # `ctest --help` (the option list) only reads
                    f.write('[ "$*" = --help ] && exec "%s" --help\n' % real_ctest)
                f.write('echo "%s $*" >>"%s"\nexit 1\n' % (name, cls.log))
            os.chmod(stub, stat.S_IRWXU)
        cls.build = os.path.join(base, "build")  # SHARDMM_BUILD_DIR: must not be created

    def run_script(self, name, *args):
        cwd = tempfile.mkdtemp(dir=self.tmp.name)
        env = dict(os.environ, PATH=self.stubs + os.pathsep + os.environ["PATH"],
                   SHARDMM_BUILD_DIR=self.build, SHARDMM_SANITIZE_BUILD_DIR=self.build,
                   SHARDMM_LINT_BUILD_DIR=self.build)
        before = (snapshot(ROOT, 1), snapshot(os.path.join(ROOT, "docs", "data"), 3))
        path = os.path.join(SCRIPTS, name)
        cmd = [path, *args] if os.access(path, os.X_OK) else ["bash", path, *args]
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
        after = (snapshot(ROOT, 1), snapshot(os.path.join(ROOT, "docs", "data"), 3))
        calls = open(self.log).read() if os.path.exists(self.log) else ""
        if os.path.exists(self.log):
            os.remove(self.log)
        what = "scripts/%s %s" % (name, " ".join(args))
        self.assertEqual(calls, "", "%s called programs:\n%s" % (what, calls))
        self.assertEqual(os.listdir(cwd), [], "%s wrote into its working directory" % what)
        self.assertFalse(os.path.exists(self.build), "%s created the build directory" % what)
        for b, a, where in zip(before, after, ("the repository's top level", "docs/data")):
            new = sorted(k for k in a if k not in b)
            changed = sorted(k for k in a if k in b and a[k] != b[k] and not os.path.isdir(os.path.join(ROOT, k)))
            self.assertFalse(new, "%s: new in %s: %s" % (what, where, new))
            if where == "docs/data":
                self.assertFalse(changed, "%s: changed in docs/data: %s" % (what, changed))
        return p

    def test_every_script_is_covered(self):
        self.assertTrue({"bench/bench-sweep", "report/plot", "cluster/cluster-sim", "test",
                         "run-demo", "cluster/jobs/shardmm.slurm",
                         "cluster/jobs/shardmm.pbs"} <= set(scripts()))
        # every folder under scripts/ holding programs is one scripts() walks
        walked = {"", "bench", "cluster", "cluster/jobs", "report"}
        for d, _, names in os.walk(SCRIPTS):
            rel = os.path.relpath(d, SCRIPTS)
            rel = "" if rel == "." else rel
            if rel != "lib" and not rel.startswith("lib" + os.sep) and "__pycache__" not in rel:
                if any(os.access(os.path.join(d, n), os.X_OK) for n in names):
                    self.assertIn(rel, walked, "scripts/%s: a folder of scripts not checked" % rel)

    def test_help(self):
        for name in scripts():
            if name in PENDING:
                continue
            for flag in ("--help", "-h"):
                with self.subTest(script=name, flag=flag):
                    p = self.run_script(name, flag)
                    self.assertEqual(p.returncode, 0, "scripts/%s %s: exit %d\n%s" % (name, flag, p.returncode, p.stderr))
                    self.assertRegex(p.stdout, r"(?im)^\s*usage: ", "scripts/%s %s: no usage line" % (name, flag))
                    self.assertIn(os.path.basename(name), p.stdout)

    def test_unknown_option(self):
        for name in scripts():
            if name in PENDING:
                continue
            with self.subTest(script=name):
                p = self.run_script(name, "--no-such-option")
                self.assertEqual(p.returncode, 2, "scripts/%s: exit %d\n%s%s" % (name, p.returncode, p.stdout, p.stderr))
                self.assertIn("--no-such-option", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
