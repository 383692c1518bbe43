#!/usr/bin/env python3
"""scripts/lib/scaling_model.py's cluster mode on a tiny fixture: bench-vs-scalapack records of
a 4-rank run, drop-in (bc(64,64) on 2x2) and native (row blocks A[I_xy,J] on the 2x2 mesh),
priced by the real launcher (`shardmm plan --json`, its path the first argument). The words
must be SUMMA's exact counts on the inputs as they are (priced without the native layouts,
SUMMA on 4x1 would move them first); the fit must find the bandwidth factor the fixture's times
were made with; a network profile prices every record of its rate as it is; runs whose GEMMs
relayed the broadcasts (--gemms-relay) are priced on their hosts, the others as on one; a record
without a profile is refused."""
import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
import scaling_model  # noqa: E402

SHARDMM = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(ROOT, "build", "shardmm")
M, N, K, P = 512, 512, 256, 4
PROFILE = {"latency_s": 1e-4, "bytes_per_s": 1e8, "gemm_gflops": {"f32": 20, "f64": 10, "c64": 20, "c128": 10}}


def record(inputs, seconds, words, plan):
    native = inputs == "native"
    return {"case": "tiny", "ranks": P, "m": M, "n": N, "k": K, "inputs": inputs, "grid": "2x2", "nb": 64,
            "layouts": "A[I_xy,J] B[I_xy,J] C[I_xy,J]" if native else "bc(64,64)",
            "operand_mesh": "{x:2, y:2}", "network": {"rate": "1gbit"}, "shardmm_median_s": seconds,
            "shardmm_words": {"received_words": [words - 1, words]}, "plan": plan}


# SUMMA C-stationary with the inputs in place. On 2x2: each rank receives half of its C rows'
# k from A's row neighbour and half of its C columns' k from B's column neighbour. On 4x1 (row
# blocks): 3/4 of B's k for all of C's columns.
WORDS = {"summa(C) 2x2": (M // 2) * (K // 2) + (N // 2) * (K // 2), "summa(C) 4x1": N * K * 3 // 4}


def fixture(directory, seconds=(1.0, 1.0), profile=True):
    recs = [record("scalapack", seconds[0], WORDS["summa(C) 2x2"], "2x2, auto: summa(C) 2x2; C-stationary"),
            record("native", seconds[1], WORDS["summa(C) 4x1"], "4x1, auto: summa(C) 4x1; C-stationary")]
    with open(os.path.join(directory, "tiny.jsonl"), "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in recs))
    if profile:
        with open(os.path.join(directory, "profile-1gbit.json"), "w") as f:
            json.dump(PROFILE, f)


class ClusterMode(unittest.TestCase):
    def test_points_are_priced_with_their_layouts_and_words_are_exact(self):
        with tempfile.TemporaryDirectory() as d:
            fixture(d)
            points, profiles = scaling_model.load_cluster(d)
            self.assertEqual([p["layouts"] for p in points["tiny@1e+08"]],
                             [None, ["A[I_xy,J]", "B[I_xy,J]", "C[I_xy,J]"]])
            preds = scaling_model.predict_points(SHARDMM, points["tiny@1e+08"],
                                                 scaling_model.scaled_profile(profiles["tiny@1e+08"], 1, 1, d))
            self.assertEqual([p["chosen"] for p in preds], ["summa(C) 2x2", "summa(C) 4x1"])
            for p in preds:
                self.assertEqual(p["predicted_words"], WORDS[p["chosen"]])
                self.assertEqual(p["measured_words"], WORDS[p["chosen"]])
            s = scaling_model.summary(preds)
            self.assertEqual(s["words_median_abs"], 0)
            self.assertGreater(s["time_median_abs"], 0)

    def test_fit_finds_the_bandwidth_the_times_were_made_with(self):
        with tempfile.TemporaryDirectory() as d:
            fixture(d)
            points, profiles = scaling_model.load_cluster(d)
            slow = scaling_model.scaled_profile(profiles["tiny@1e+08"], 0.5, 1, d)
            truth = [p["predicted_s"] for p in scaling_model.predict_points(SHARDMM, points["tiny@1e+08"], slow)]
            fixture(d, seconds=truth)
            points, profiles = scaling_model.load_cluster(d)
            saved = scaling_model.BW_FACTORS, scaling_model.GEMM_FACTORS
            scaling_model.BW_FACTORS, scaling_model.GEMM_FACTORS = (0.5, 1.0), (1.0,)
            try:
                err, factors, fitted = scaling_model.fit(SHARDMM, points, profiles, d)
            finally:
                scaling_model.BW_FACTORS, scaling_model.GEMM_FACTORS = saved
            self.assertEqual(factors[:2], (0.5, 1.0))
            self.assertLess(err, 1e-6)
            out = io.StringIO()
            with redirect_stdout(out):
                scaling_model.print_report(fitted, err, factors, fitted)
            self.assertIn("median |error| 0 %", out.getvalue())

    def test_meshes_become_plan_grids(self):
        self.assertEqual(scaling_model.mesh_grid("{x:2, y:4}"), "2x4")
        self.assertEqual(scaling_model.mesh_grid("{x:8}"), "8x1")  # a line: plan's x by y

    def test_shared_links_divide_only_a_bandwidth_one_pair_measured(self):
        self.assertEqual(scaling_model.rate_bytes_per_s("200mbit"), 25e6)
        with tempfile.TemporaryDirectory() as d:
            fixture(d)
            recs = [json.loads(line) for line in open(os.path.join(d, "tiny.jsonl"))]
            for r, bw in zip(recs, (1e8, 1e7)):  # 1gbit links, 2 ranks per host: 62.5 MB/s each
                r["network"].update(ranks_per_host=2, bytes_per_s=bw)
            with open(os.path.join(d, "tiny.jsonl"), "w") as f:
                f.write("".join(json.dumps(r) + "\n" for r in recs))
            _, profiles = scaling_model.load_cluster(d, shared_links=True)
            self.assertEqual(sorted(p["bytes_per_s"] for p in profiles.values()), [1e7, 5e7])

    def test_a_network_profile_prices_every_record_of_its_rate_as_it_is(self):
        with tempfile.TemporaryDirectory() as d:
            fixture(d, profile=False)  # the network profile alone suffices
            recs = [json.loads(line) for line in open(os.path.join(d, "tiny.jsonl"))]
            for r in recs:  # what the runs carry: another bandwidth, one pair's, 2 ranks per host
                r["network"].update(ranks_per_host=2, bytes_per_s=3e8, latency_s=1.0)
            with open(os.path.join(d, "tiny.jsonl"), "w") as f:
                f.write("".join(json.dumps(r) + "\n" for r in recs))
            ring = dict(PROFILE, bytes_per_s=4e7, latency_s=2e-3)
            with open(os.path.join(d, "ring.json"), "w") as f:
                json.dump(ring, f)
            points, profiles = scaling_model.load_cluster(d, shared_links=True,
                                                          network_profiles={"1gbit": os.path.join(d, "ring.json")})
            self.assertEqual(list(points), ["tiny@4e+07"])
            self.assertEqual(len(points["tiny@4e+07"]), 2)
            self.assertEqual(profiles["tiny@4e+07"], ring)
            with self.assertRaises(SystemExit):  # another rate's records still need their own
                scaling_model.load_cluster(d, network_profiles={"200mbit": os.path.join(d, "ring.json")})

    def test_runs_whose_gemms_relay_are_priced_on_their_hosts(self):
        # The suite's tall drop-in on 4 hosts x 2 ranks (nothing runs: the planner prices it).
        # Its panels of B (2048 x 256 doubles) go down a chain of 8: relayed during the GEMMs,
        # the chain's fill is paid once, not for each of the 8 panels.
        with tempfile.TemporaryDirectory() as d:
            r = dict(record("scalapack", 4.8, 3670016, "8x1, auto: summa(C) 8x1; C-stationary"),
                     ranks=8, m=32768, n=2048, k=2048, grid="8x1", nb=256, operand_mesh="{x:8, y:1}")
            r["network"] = {"rate": "200mbit", "hosts": 4, "ranks_per_host": 2}
            with open(os.path.join(d, "tall.jsonl"), "w") as f:
                f.write(json.dumps(r) + "\n")
            with open(os.path.join(d, "profile-200mbit.json"), "w") as f:
                fast = {"f32": 2000, "f64": 1000, "c64": 2000, "c128": 1000}  # the words dominate
                json.dump(dict(PROFILE, bytes_per_s=1.087e7, latency_s=2.19e-3, gemm_gflops=fast), f)
            seconds = {}
            for relay in (False, True):
                points, profiles = scaling_model.load_cluster(d, gemms_relay=relay)
                (group, pts), = points.items()
                self.assertEqual(pts[0]["hosts"], 4 if relay else 1)
                pred, = scaling_model.predict_points(SHARDMM, pts, scaling_model.scaled_profile(profiles[group], 1, 1, d))
                self.assertEqual(pred["chosen"], "summa(C) 8x1")
                seconds[relay] = pred["predicted_s"]
            # 6 chunks of 32768 doubles per panel: 7 of the 8 panels' fills are saved
            self.assertAlmostEqual(seconds[False] - seconds[True], 7 * 6 * (32768 * 8 / 1.087e7 + 2.19e-3), places=6)

    def test_a_record_without_a_profile_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            fixture(d, profile=False)
            with self.assertRaises(SystemExit) as e:
                scaling_model.load_cluster(d)
            self.assertIn("no profile-tiny.json", str(e.exception))


if __name__ == "__main__":
    unittest.main()
