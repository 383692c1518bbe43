#!/usr/bin/env python3
"""scripts/report/trace-summary and scripts/lib/trace_analysis.py on small traces with known answers:
totals per rank and phase, exposed and hidden communication, imbalance, the longest waits and
whom they waited for; --check rejects spans that do not nest, flights that never end and ranks
without a track. (tests/trace/frontend_trace.py runs it on real traces.)"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import trace_analysis as ta  # noqa: E402

SCRIPT = os.path.join(ROOT, "scripts", "report", "trace-summary")


def X(pid, name, cat, ts, dur, **args):
    return {"name": name, "cat": cat, "ph": "X", "ts": ts, "dur": dur, "pid": pid, "tid": 0,
            "args": args}


def meta(pid):
    return {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": "rank %d" % pid}}


def flight(pid, fid, ts, end):
    e = {"name": "ibcast", "cat": "flight", "id": fid, "pid": pid, "tid": 0}
    return [dict(e, ph="b", ts=ts, args={"bytes": 8}), dict(e, ph="e", ts=end)]


def two_ranks():
    """Rank 0: a 1000 us gemm (plan 100, multiply 900 with a 400 us GEMM and a 300 us wait for
    rank 1's broadcast; a broadcast in flight 150..500 us, 300 us of it behind the GEMM).
    Rank 1: a 500 us gemm, all of it one GEMM, starting 50 us later."""
    ev = [meta(0), meta(1)]
    ev += [X(0, "gemm", "call", 0, 1000, m=8, n=8, k=8, algorithm="summa"),
           X(0, "plan", "phase", 0, 100),
           X(0, "multiply", "phase", 100, 900),
           X(0, "compute", "step", 200, 400, step=0), X(0, "dgemm", "blas", 200, 400),
           X(0, "wait", "step", 600, 300, step=1),
           X(0, "MPI_Waitall", "wait", 600, 300, op="MPI_Waitall", on="ibcast root 1",
             peers="1")]
    ev += flight(0, "0.1", 150, 500)
    ev += [X(1, "gemm", "call", 50, 500), X(1, "multiply", "phase", 50, 500),
           X(1, "dgemm", "blas", 50, 500)]
    return {"traceEvents": ev}


class Summary(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, doc, name="t.json"):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def test_totals(self):
        s = ta.summarize(ta.load(self.write(two_ranks())))
        r0, r1 = s["ranks"][0], s["ranks"][1]
        self.assertAlmostEqual(r0["total"], 1000e-6)
        self.assertAlmostEqual(r0["plan"], 100e-6)
        self.assertAlmostEqual(r0["multiply"], 900e-6)
        self.assertAlmostEqual(r0["compute"], 400e-6)
        self.assertAlmostEqual(r0["exposed_comm"], 300e-6)
        self.assertAlmostEqual(r0["in_flight"], 350e-6)
        self.assertAlmostEqual(r0["hidden_comm"], 300e-6)
        self.assertAlmostEqual(r1["compute"], 500e-6)
        self.assertEqual(s["phases"], ["plan", "multiply"])
        self.assertAlmostEqual(s["imbalance"]["total"], 1000 / 750)
        w = s["longest_waits"][0]
        self.assertEqual((w["rank"], w["name"], w["step"], w["waited_for"]),
                         (0, "MPI_Waitall", 1, "rank 1"))

    def test_collective_waits_for_the_last_to_arrive(self):
        doc = {"traceEvents": [meta(0), meta(1)] + [
            X(0, "gemm", "call", 0, 100), X(0, "agree", "wait", 10, 80, op="MPI_Allreduce",
                                             on="agree 'plan'", comm="ranks 0-1"),
            X(1, "gemm", "call", 0, 100), X(1, "agree", "wait", 85, 5, op="MPI_Allreduce",
                                             on="agree 'plan'", comm="ranks 0-1")]}
        w = ta.summarize(ta.load(self.write(doc)))["longest_waits"][0]
        self.assertEqual(w["rank"], 0)
        self.assertTrue(w["waited_for"].startswith("rank 1 (arrived 0.075 ms later)"), w)

    def test_rejects_spans_that_do_not_nest(self):
        doc = two_ranks()
        doc["traceEvents"].append(X(0, "late", "step", 900, 200))  # 900..1100 leaves the call
        with self.assertRaisesRegex(ta.TraceError, "overlaps"):
            ta.load(self.write(doc))

    def test_rejects_flights_that_never_end(self):
        doc = two_ranks()
        doc["traceEvents"] = [e for e in doc["traceEvents"] if e["ph"] != "e"]
        with self.assertRaisesRegex(ta.TraceError, "never end"):
            ta.load(self.write(doc))

    def test_check_names_missing_tracks(self):
        t = ta.load(self.write(two_ranks()))
        self.assertEqual(ta.check(t, 2), [])
        self.assertIn("rank 2 has no track name (process_name)", ta.check(t, 3))

    def test_command_line(self):
        path = self.write(two_ranks())
        run = lambda *a: subprocess.run([SCRIPT, *a], capture_output=True, text=True)
        self.assertEqual(run("--check", "--ranks", "2", path).returncode, 0)
        self.assertEqual(run("--check", "--ranks", "3", path).returncode, 1)
        out = run("--json", "--call", "0", path)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout)["ranks"]["1"]["calls"], 1)
        table = run(path).stdout
        self.assertIn("waited for rank 1", table)
        self.assertIn("(86 %)", table)  # 300 of the 350 us in flight were behind the GEMM
        bad = self.write({"traceEvents": [X(0, "a", "call", 0, 10), X(0, "b", "step", 5, 10)]},
                         "bad.json")
        self.assertEqual(run("--check", bad).returncode, 1)


if __name__ == "__main__":
    unittest.main()
