#!/usr/bin/env python3
"""The cost model against measurements, then extrapolated (docs/SCALING.md).

1. For every measured run (`shardmm bench --json` records of Auto), the planner's prediction
   with the network profile the run was made on (`shardmm plan --json --profile`): predicted
   vs measured time and words moved by the busiest rank.
2. Fit: one factor on the profile's bandwidth and one on its GEMM rate (least squares on the
   log of predicted / measured time, grid search), reported with the error before and after.
3. Predicted time and words for P = 2 .. 4096 on the reference network (bench/reference-
   network.json) with the fitted factors, for the shapes given.
Outputs JSON lines (OUT/model_points.jsonl, OUT/model_curves.jsonl) and a summary on stdout.
"""
import argparse
import json
import math
import os
import re
import subprocess
import tempfile


def plan(shardmm, m, n, k, ranks, profile, grid=None):
    cmd = [shardmm, "plan", "--m", str(m), "--n", str(n), "--k", str(k), "--ranks", str(ranks),
           "--profile", profile, "--json", "--rows", "200"]
    if grid:  # the run's inputs were block-cyclic on this grid, as gemm's Auto saw them
        cmd += ["--grid", grid]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def scaled_profile(base, bw_factor, gemm_factor, tmp):
    p = dict(base)
    p["bytes_per_s"] = base["bytes_per_s"] * bw_factor
    p["gemm_gflops"] = {t: g * gemm_factor for t, g in base["gemm_gflops"].items()}
    path = os.path.join(tmp, "profile_%g_%g.json" % (bw_factor, gemm_factor))
    with open(path, "w") as f:
        json.dump(p, f)
    return path


def predict_points(shardmm, points, profile_path):
    out = []
    for r in points:
        sizes = re.findall(r":(\d+)", r["mesh"])  # "{x:1, y:3}" -> 1x3
        p = plan(shardmm, r["m"], r["n"], r["k"], r["ranks"], profile_path, "x".join(sizes))
        # The candidate that ran ("1x3, auto: summa(A) 1x3; ..."), else the planner's choice now.
        ran = re.search(r"auto: ([^;]+);", r.get("plan", ""))
        c = next((x for x in p["candidates"] if ran and x["name"] == ran.group(1).strip()), p["chosen"])
        out.append({"case": "%dx%dx%d" % (r["m"], r["n"], r["k"]), "ranks": r["ranks"], "network": r["network"],
                    "measured_s": r["median_s"], "predicted_s": c["seconds"], "chosen": c["name"],
                    "measured_words": r["words_max"], "predicted_words": c["words"] + c["redist_words"],
                    "ran": r.get("plan", "")})
    return out


def log_error(preds):
    return math.sqrt(sum(math.log(p["predicted_s"] / p["measured_s"]) ** 2 for p in preds) / len(preds))


def fit(shardmm, points_by_net, profiles, tmp):
    """Grid search of (bandwidth factor, GEMM factor) minimising the RMS log time error."""
    best = None
    for bw in (0.25, 0.35, 0.5, 0.7, 1.0, 1.4):
        for g in (0.6, 0.7, 0.8, 0.9, 1.0, 1.1):
            preds = []
            for net, pts in points_by_net.items():
                preds += predict_points(shardmm, pts, scaled_profile(profiles[net], bw, g, tmp))
            err = log_error(preds)
            if best is None or err < best[0]:
                best = (err, bw, g, preds)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shardmm", required=True)
    ap.add_argument("--measured", required=True, help="bench --json records; field 'network' names the profile")
    ap.add_argument("--profile", action="append", required=True, help="NAME=profile.json (calibrated)")
    ap.add_argument("--reference", required=True, help="reference network profile JSON")
    ap.add_argument("--shapes", default="16384x16384x16384,65536x65536x65536,1048576x4096x4096")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    profiles = {}
    for spec in args.profile:
        name, _, path = spec.partition("=")
        profiles[name] = json.load(open(path))
    points_by_net = {}
    for line in open(args.measured):
        r = json.loads(line)
        if r.get("algorithm") == "auto":
            points_by_net.setdefault(r["network"], []).append(r)
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        raw = []
        for net, pts in points_by_net.items():
            raw += predict_points(args.shardmm, pts, scaled_profile(profiles[net], 1.0, 1.0, tmp))
        err, bw, g, fitted = fit(args.shardmm, points_by_net, profiles, tmp)
        ref = json.load(open(args.reference))
        ref_path = scaled_profile(ref, bw, g, tmp)
        curves = []
        for shape in args.shapes.split(","):
            m, n, k = (int(x) for x in shape.split("x"))
            for e in range(1, 13):
                p = plan(args.shardmm, m, n, k, 2 ** e, ref_path)
                c = p["chosen"]
                curves.append({"shape": shape, "ranks": 2 ** e, "predicted_s": c["seconds"], "chosen": c["name"],
                               "words": c["words"], "redist_words": c["redist_words"],
                               "lower_bound_words": p["lower_bound_words"], "memory_bytes": c["memory_bytes"]})
    with open(os.path.join(args.out, "model_points.jsonl"), "w") as f:
        for a, b in zip(raw, fitted):
            f.write(json.dumps(dict(b, unfitted_predicted_s=a["predicted_s"])) + "\n")
    with open(os.path.join(args.out, "model_curves.jsonl"), "w") as f:
        for c in curves:
            f.write(json.dumps(c) + "\n")
    print("measured points: %d; RMS log time error unfitted %.3f, fitted %.3f (bandwidth x%g, GEMM rate x%g)"
          % (len(raw), log_error(raw), err, bw, g))
    print("%-16s %3s %-9s %10s %10s %7s %12s %12s %7s  %s" % ("case", "P", "network", "measured", "predicted",
                                                               "err", "words_meas", "words_pred", "err", "chosen"))
    for p in fitted:
        print("%-16s %3d %-9s %10.4f %10.4f %+6.1f%% %12d %12d %+6.1f%%  %s" % (
            p["case"], p["ranks"], p["network"], p["measured_s"], p["predicted_s"],
            100 * (p["predicted_s"] / p["measured_s"] - 1), p["measured_words"], p["predicted_words"],
            100 * (p["predicted_words"] / p["measured_words"] - 1) if p["measured_words"] else 0, p["chosen"]))


if __name__ == "__main__":
    main()
