#!/usr/bin/env python3
"""scripts/lib/suite_table.py: the suite table and the target verdicts, on made-up records
whose verdicts are known and on the committed suite run's results (every case gets a row)."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import suite_table  # noqa: E402


def record(case="square4096", ranks=2, op="NN", ratio=0.80, ours=0.98, theirs=0.85, words=1.28, extra=0.1):
    words_rx = {"received_words": [100, 200]}
    return {"case": case, "ranks": ranks, "m": 64, "n": 64, "k": 64, "op": op, "grid": "2x1", "nb": 64,
            "shardmm_median_s": 1.0, "scalapack_median_s": 1.0 / ratio, "time_ratio": ratio,
            "shardmm_fraction_of_P_cores": ours, "scalapack_fraction_of_P_cores": theirs,
            "shardmm_words": words_rx, "scalapack_words": words_rx, "shardmm_words_over_lb": words,
            "scalapack_words_over_lb": words, "shardmm_extra_over_local_abc": extra,
            "scalapack_extra_over_local_abc": 0.01, "plan": "2x1, auto: summa(C) 2x1; C-stationary"}


def run(*argv):
    out = io.StringIO()
    sys.argv = ["suite_table.py", *argv]
    with redirect_stdout(out):
        suite_table.main()
    return out.getvalue().splitlines()


def jsonl(records):
    """A temporary .jsonl file holding the records (the caller removes it)."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write("\n".join(json.dumps(r) for r in records) + "\n")
    return f.name


def with_records(records, *flags, previous=None):
    paths = [jsonl(records)] + ([jsonl(previous)] if previous else [])
    try:
        return run(*flags, *paths)
    finally:
        for p in paths:
            os.unlink(p)


def verdicts(lines, target):
    return [line.split(" | ")[6] for line in lines if line.startswith("| " + target)]


class Targets(unittest.TestCase):
    def test_ceiling_fraction_met_and_missed(self):
        lines = with_records([record(ours=0.97), record(case="square2048", ours=0.969)], "--targets")
        self.assertEqual(verdicts(lines, "compute-bound"), ["met", "missed"])

    def test_ratio_floor_above_target_is_told_apart_from_a_plain_miss(self):
        lines = with_records([record(case="largek", ratio=0.90, theirs=0.88),
                              record(case="tallskinny", ratio=0.80, theirs=0.60),
                              record(ranks=4, ratio=0.75, theirs=0.60)], "--targets")
        self.assertEqual(verdicts(lines, "communication-heavy"),
                         ["missed, floor above target", "missed", "met"])
        self.assertIn("| 0.88 |", lines[2])  # the floor column is ScaLAPACK's fraction

    def test_transposed_words_and_memory(self):
        lines = with_records([record(op="TN", ratio=0.66, words=1.10, extra=0.31)], "--targets")
        self.assertEqual(verdicts(lines, "transposed"), ["met"])
        self.assertEqual(verdicts(lines, "words"), ["met"])
        self.assertEqual(verdicts(lines, "peak memory"), ["missed"])
        self.assertEqual(verdicts(lines, "compute-bound"), [])  # NN only

    def test_square_at_p4_is_communication_heavy_not_compute_bound(self):
        lines = with_records([record(ranks=4)], "--targets")
        self.assertEqual(len(verdicts(lines, "compute-bound")), 0)
        self.assertEqual(len(verdicts(lines, "communication-heavy")), 1)


class Table(unittest.TestCase):
    def test_committed_run_has_one_row_per_case_with_its_ratio(self):
        path = os.path.join(ROOT, "docs", "data", "bench-vs-scalapack", "final.jsonl")
        records = suite_table.load(path)
        rows = [line for line in run(path) if line.startswith("| ") and not line.startswith("| case")]
        self.assertEqual(len(rows), len(records))
        for r, line in zip(records, rows):
            self.assertIn("**%.2f**" % r["time_ratio"], line)
            self.assertIn("| %d |" % max(r["shardmm_words"]["received_words"]), line)

    def test_previous_run_ratio_sits_beside_the_row(self):
        lines = with_records([record(ratio=0.84)], previous=[record(ratio=0.62)])
        self.assertIn("| previous run |", lines[0])
        self.assertIn("**0.84** | 0.62 |", lines[2])
        lines = with_records([record(ratio=0.84)], previous=[record(case="other", ratio=0.62)])
        self.assertIn("**0.84** | - |", lines[2])

    def test_one_run_has_no_previous_column(self):
        lines = with_records([record(ratio=0.84, ours=0.98)])
        self.assertNotIn("previous", lines[0])
        self.assertEqual(lines[0].count("|"), lines[1].count("|"))
        self.assertEqual(lines[0].count("|"), lines[2].count("|"))
        self.assertIn("**0.84** | 98% |", lines[2])


class Cluster(unittest.TestCase):
    """--cluster: time <= 0.5 x ScaLAPACK at 200 Mbit/s, 0.75 x faster, only where
    ScaLAPACK is communication-bound; words <= 1.10 x the lower bound."""

    def cluster_record(self, rate, ratio, comm_bound=True, words=1.05):
        r = record(ratio=ratio, words=words)
        r.update({"inputs": "native", "cores_median_s": 0.5, "scalapack_comm_bound": comm_bound,
                  "network": {"hosts": 4, "ranks_per_host": 2, "rate": rate, "delay": "2ms"}})
        return r

    def test_verdicts(self):
        rows = [self.cluster_record("200mbit", 0.45), self.cluster_record("200mbit", 0.6, words=1.2),
                self.cluster_record("1gbit", 0.6), self.cluster_record("1gbit", 0.9, comm_bound=False)]
        lines = [l for l in with_records(rows, "--cluster") if l.startswith("| 4x2")]
        self.assertEqual([l.split(" | ")[6] for l in lines],
                         ["<= 0.50 met", "<= 0.50 missed", "<= 0.75 met", "<= 0.75 n/a (not comm-bound)"])
        self.assertEqual([l.split(" | ")[9] for l in lines], ["met", "missed", "met", "met"])

    def test_preferred_inputs_show_their_layouts_and_mesh(self):
        r = self.cluster_record("200mbit", 0.45)
        r.update({"native_layouts": "preferred", "layouts": "A[I_x,K] B[K,J_x] C[I_x,J]",
                  "operand_mesh": "{x:8}"})
        given = self.cluster_record("200mbit", 0.45)
        given.update({"native_layouts": "given", "layouts": "A[I_x,J_y] B[I_x,J_y] C[I_x,J_y]"})
        lines = [l for l in with_records([r, given], "--cluster") if l.startswith("| 4x2")]
        self.assertEqual([l.split(" | ")[2] for l in lines],
                         ["native preferred A[I_x,K] B[K,J_x] C[I_x,J] on {x:8}", "native [I_x,J_y]"])
        self.assertEqual(suite_table.inputs_label(r), "native preferred")  # one plot series


if __name__ == "__main__":
    unittest.main()
