#!/usr/bin/env python3
"""scripts/common.sh's run_with_progress, which run-demo, test and setup-deps run their long
steps through: a line at least every SHARDMM_PROGRESS_SECONDS while the step runs (saying what
it does: make's percentage and source, apt's package), "done" at the end, and on failure the
step's last lines, what failed with its exit code and the command to retry, with that code.
The three steps mostly sleep: they run side by side, started before the checks."""
import os
import subprocess
import tempfile
import time
import unittest
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def run(step, every="1"):
    """Runs `run_with_progress LABEL LOG RETRY bash -c STEP`; (exit code, stdout, stderr, lines
    with their arrival times)."""
    log = tempfile.NamedTemporaryFile(delete=False).name
    script = 'source "%s/scripts/common.sh"; run_with_progress build "%s" "scripts/again" bash -c "$1"' % (ROOT, log)
    env = dict(os.environ, SHARDMM_PROGRESS_SECONDS=every)
    p = subprocess.Popen(["bash", "-c", script, "x", step], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    t0, lines = time.time(), []
    for line in p.stdout:
        lines.append((time.time() - t0, line.rstrip("\n")))
    err = p.stderr.read()
    p.wait()
    os.remove(log)
    return p.returncode, err, lines


STEPS = {
    "make": 'for i in 1 2 3 4; do echo "[ $((i * 20))%] Building CXX object CMakeFiles/x.dir/src/f$i.cpp.o"; sleep 1; done',
    "fails": 'echo "compiler says no" >&2; exit 3',
    "apt": 'echo "Get:1 http://deb.example bookworm/main amd64 libfoo-dev amd64 1.0 [10 kB]"; sleep 2',
}


class Progress(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with ThreadPoolExecutor(max_workers=len(STEPS)) as pool:
            futures = {name: pool.submit(run, step) for name, step in STEPS.items()}
            cls.results = {name: f.result() for name, f in futures.items()}

    def test_lines_while_running_and_done(self):
        rc, err, lines = self.results["make"]
        self.assertEqual(rc, 0, err)
        texts = [t for _, t in lines]
        self.assertEqual(texts[0], "build ...")
        self.assertTrue(texts[-1].startswith("build: done in "), texts)
        middle = [t for t in texts[1:-1]]
        self.assertGreaterEqual(len(middle), 2, texts)
        self.assertTrue(any("% Building src/f" in t for t in middle), middle)
        gaps = [b[0] - a[0] for a, b in zip(lines, lines[1:])]
        self.assertLess(max(gaps), 2.5, lines)  # every second, give or take the poll

    def test_failure_says_what_and_how_to_retry(self):
        rc, err, lines = self.results["fails"]
        self.assertEqual(rc, 3)
        self.assertIn("compiler says no", err)
        self.assertIn("build failed (exit 3); retry with: scripts/again", err)

    def test_apt_lines_are_named_by_package(self):
        rc, err, lines = self.results["apt"]
        self.assertEqual(rc, 0, err)
        self.assertTrue(any("downloading libfoo-dev" in t for _, t in lines), lines)


if __name__ == "__main__":
    unittest.main()
