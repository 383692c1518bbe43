#!/usr/bin/env python3
"""Driver of scripts/bench-vs-scalapack: tune ScaLAPACK, time both sides alternately in one
mpirun, count words with Open MPI's pml monitoring, print and record the comparison."""
import argparse
import glob
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

import suite_table  # same directory: the targets' verdicts

ELEM = {"f32": 4, "f64": 8, "c64": 8, "c128": 16}


def parse_suite(path):
    cases = []
    for line in open(path):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        name, ranks, m, n, k, op, grid = line
        cases.append({"name": name, "ranks": int(ranks), "m": int(m), "n": int(n), "k": int(k),
                      "transa": op[0], "transb": op[1], "grid": None if grid == "-" else grid})
    return cases


class Runner:
    def __init__(self, args, log):
        self.args, self.log = args, log
        self.env = dict(os.environ)
        for kv in shlex.split(os.environ.get("SHARDMM_BENCH_ENV", "")):
            key, _, value = kv.partition("=")
            self.env[key] = value

    def mpirun(self, ranks, bench_args, mca=()):
        cmd = ["mpirun", "-n", str(ranks)] + shlex.split(self.args.mpirun_flags) + list(mca)
        cmd += [self.args.shardmm, "bench"] + bench_args
        self.log.write("+ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        self.log.flush()
        out = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=3600)
        self.log.write(out.stdout + out.stderr)
        if out.returncode != 0:
            raise RuntimeError("exit %d: %s\n%s" % (out.returncode, " ".join(cmd), out.stderr[-2000:]))
        return out.stdout


def shape_args(c, dtype):
    return ["--m", str(c["m"]), "--n", str(c["n"]), "--k", str(c["k"]), "--transa", c["transa"],
            "--transb", c["transb"], "--dtype", dtype]


def tune(run, c, dtype):
    """ScaLAPACK's best grid and nb (the grid is fixed when the suite names one)."""
    out = run.mpirun(c["ranks"], shape_args(c, dtype) + ["--tune-scalapack", "--reps", "1"])
    rows = re.findall(r"scalapack grid (\d+)x(\d+) nb (\d+): median ([\d.]+) s", out)
    if c["grid"]:
        p, q = c["grid"].split("x")
        rows = [r for r in rows if r[0] == p and r[1] == q]
    best = min(rows, key=lambda r: float(r[3]))
    return "%sx%s" % (best[0], best[1]), int(best[2]), [list(r) for r in rows]


def read_pml(prefix):
    """{(src, dst): bytes} from the E (point-to-point) and I (collectives' internal
    point-to-point) lines of every rank's PREFIX.<rank>.prof."""
    traffic = {}
    for path in glob.glob(prefix + ".*.prof"):
        for line in open(path):
            f = line.split("\t")
            if len(f) >= 4 and f[0] in ("E", "I"):
                key = (int(f[1]), int(f[2]))
                traffic[key] = traffic.get(key, 0) + int(f[3].split()[0])
    return traffic


def call_traffic(run, c, dtype, grid, nb, algo, tmp):
    """Bytes per (src, dst) of one call: a --bare run of 2 calls minus one of 1 call."""
    counts = []
    for reps in (1, 2):
        prefix = os.path.join(tmp, "%s_%s_%d_%d" % (c["name"], algo, c["ranks"], reps))
        mca = ["--mca", "pml_monitoring_enable", "2", "--mca", "pml_monitoring_enable_output", "3",
               "--mca", "pml_monitoring_filename", prefix]
        run.mpirun(c["ranks"], shape_args(c, dtype) + ["--grid", grid, "--nb", str(nb), "--algo", algo,
                                                       "--bare", "--reps", str(reps)], mca)
        counts.append(read_pml(prefix))
    keys = set(counts[0]) | set(counts[1])
    return {k: counts[1].get(k, 0) - counts[0].get(k, 0) for k in keys}


def per_rank_words(traffic, ranks, elem):
    sent = [0] * ranks
    recv = [0] * ranks
    for (s, d), b in traffic.items():
        sent[s] += b
        recv[d] += b
    return {"sent_words": [x // elem for x in sent], "received_words": [x // elem for x in recv],
            "sent_bytes": sent, "received_bytes": recv}


def scalapack_extra(run, c, args, grid, nb):
    """Resident memory ScaLAPACK's first call adds, over local A + B + C: bench measures the
    first contender's own, so one call each with ScaLAPACK first (not timed)."""
    out = os.path.join(args.out, "memory-scalapack-first.jsonl")
    before = sum(1 for _ in open(out)) if os.path.exists(out) else 0
    run.mpirun(c["ranks"], shape_args(c, args.dtype) + [
        "--grid", grid, "--nb", str(nb), "--algo", "scalapack,auto", "--reps", "1", "--warmup", "0",
        "--no-check", "--json", out, "--quiet"])
    recs = [json.loads(l) for l in open(out)][before:]
    return next(r for r in recs if r["algorithm"] == "scalapack").get("own_extra_over_local_abc")


def run_case(run, c, args, tmp):
    grid, nb, tuning = tune(run, c, args.dtype)
    jsonl = os.path.join(args.out, "bench.jsonl")
    before = sum(1 for _ in open(jsonl)) if os.path.exists(jsonl) else 0
    run.mpirun(c["ranks"], shape_args(c, args.dtype) + [
        "--grid", grid, "--nb", str(nb), "--algo", "auto,scalapack,cores", "--reps", str(args.reps),
        "--warmup", "1", "--json", jsonl, "--quiet"])
    recs = [json.loads(l) for l in open(jsonl)][before:]
    ours = next(r for r in recs if r["algorithm"] == "auto")
    ref = next(r for r in recs if r["algorithm"] == "scalapack")
    cores = next(r for r in recs if r["algorithm"] == "cores")
    ref_extra = scalapack_extra(run, c, args, grid, nb)
    elem = ELEM[args.dtype]
    words = {a: per_rank_words(call_traffic(run, c, args.dtype, grid, nb, a, tmp), c["ranks"], elem)
             for a in ("auto", "scalapack")}
    lb = ours["lower_bound_words"]
    return {
        "case": c["name"], "ranks": c["ranks"], "m": c["m"], "n": c["n"], "k": c["k"],
        "dtype": args.dtype, "op": c["transa"] + c["transb"], "grid": grid, "nb": nb, "scalapack_tuning": tuning,
        "shardmm_median_s": ours["median_s"], "scalapack_median_s": ref["median_s"],
        "time_ratio": ours["median_s"] / ref["median_s"],
        "shardmm_gflops": ours["gflops"], "scalapack_gflops": ref["gflops"],
        "local_gemm_gflops": ours["local_gemm_gflops"],
        # the P-core ceiling timed in the same alternation: each rank's share as one local GEMM
        "cores_median_s": cores["median_s"],
        "shardmm_fraction_of_P_cores": cores["median_s"] / ours["median_s"],
        "scalapack_fraction_of_P_cores": cores["median_s"] / ref["median_s"],
        # rounds 1-6: against one core's best-of-3 rate measured after the calls
        "shardmm_fraction_of_local_rate": ours["gflops"] / (ours["local_gemm_gflops"] * c["ranks"]),
        "lower_bound_words": lb,
        "shardmm_words": words["auto"], "scalapack_words": words["scalapack"],
        "shardmm_counter_words_max": ours["words_max"],
        "shardmm_words_over_lb": max(words["auto"]["received_words"]) / lb if lb else None,
        "scalapack_words_over_lb": max(words["scalapack"]["received_words"]) / lb if lb else None,
        "shardmm_peak_rss_kib": ours["peak_rss_kib"], "plan": ours["plan"],
        # resident memory shardmm's first call added, over the rank's local A + B + C
        "shardmm_extra_over_local_abc": ours.get("own_extra_over_local_abc"),
        "scalapack_extra_over_local_abc": ref_extra,
        "env": os.environ.get("SHARDMM_BENCH_ENV", ""),
    }


def fmt_mem(x):
    return "%.2f" % x if x is not None and x >= 0 else "-"


def print_row(r):
    print("%-11s P=%d %-5s nb=%-3d %8.3f %8.3f  %5.3f  %7.1f %7.1f  %5.1f%%  %10d %10d %10d  %5.3f %5.3f  %s %s"
          % (r["case"], r["ranks"], r["grid"], r["nb"], r["shardmm_median_s"], r["scalapack_median_s"],
             r["time_ratio"], r["shardmm_gflops"], r["scalapack_gflops"],
             100 * r["shardmm_fraction_of_P_cores"], max(r["shardmm_words"]["received_words"]),
             int(r["shardmm_counter_words_max"]), max(r["scalapack_words"]["received_words"]),
             r["shardmm_words_over_lb"] or 0, r["scalapack_words_over_lb"] or 0,
             fmt_mem(r.get("shardmm_extra_over_local_abc")), fmt_mem(r.get("scalapack_extra_over_local_abc"))),
          flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shardmm", required=True)
    ap.add_argument("--suite", required=True)
    ap.add_argument("--mpirun-flags", default="")
    ap.add_argument("--out", default="bench-vs-scalapack-out")
    ap.add_argument("--dtype", default="f64")
    ap.add_argument("--reps", type=int, default=int(os.environ.get("SHARDMM_BENCH_REPS", "5")))
    ap.add_argument("cases", nargs="*", help="case names (default: all), or name@ranks")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases = parse_suite(args.suite)
    if args.cases:
        cases = [c for c in cases if c["name"] in args.cases or "%s@%d" % (c["name"], c["ranks"]) in args.cases]
    print("case        P  grid  nb     ours_s   scal_s  ratio  GF/s_us GF/s_sc  %Pcore  "
          "words_us(pml) (counter)  words_sc  us/LB sc/LB  mem_us mem_sc")
    failed = 0
    done = []
    with open(os.path.join(args.out, "log"), "a") as log, tempfile.TemporaryDirectory() as tmp:
        run = Runner(args, log)
        for c in cases:
            try:
                r = run_case(run, c, args, tmp)
            except (RuntimeError, subprocess.TimeoutExpired, StopIteration, ValueError) as e:
                print("%s P=%d: FAILED: %s" % (c["name"], c["ranks"], e), flush=True)
                failed += 1
                continue
            with open(os.path.join(args.out, "results.jsonl"), "a") as f:
                f.write(json.dumps(r) + "\n")
            print_row(r)
            done.append(r)
    report_targets(done, os.path.join(args.out, "targets.md"))
    return 1 if failed else 0


def report_targets(results, path):
    """Issue 9's targets for this run's cases (suite_table.py --targets), to stdout and PATH."""
    table = io.StringIO()
    suite_table.targets(results, table)
    with open(path, "w") as f:
        f.write(table.getvalue())
    print("\n" + table.getvalue(), end="")


if __name__ == "__main__":
    sys.exit(main())
