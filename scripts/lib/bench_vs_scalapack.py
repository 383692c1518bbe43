#!/usr/bin/env python3
"""Driver of scripts/bench/bench-vs-scalapack: tune ScaLAPACK, time both sides alternately in one
mpirun, count words with Open MPI's pml monitoring, print and record the comparison. With
--cluster it runs on node1 of scripts/cluster/cluster-sim and launches with $CLUSTER_MPIRUN."""
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
import time

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

    def launcher(self, ranks):
        """mpirun and its flags for RANKS ranks (on the cluster: $CLUSTER_MPIRUN, whose -np is
        fixed, and the machine profile of this network for every rank)."""
        if not self.args.cluster:
            return ["mpirun", "-n", str(ranks)] + shlex.split(self.args.mpirun_flags)
        if ranks != int(os.environ["CLUSTER_NP"]):
            raise ValueError("the cluster has %s ranks, the case %d" % (os.environ["CLUSTER_NP"], ranks))
        cmd = shlex.split(os.environ["CLUSTER_MPIRUN"])
        if "SHARDMM_PROFILE" in self.env:
            cmd += ["-x", "SHARDMM_PROFILE"]
        return cmd

    def mpirun(self, ranks, bench_args, mca=(), command="bench"):
        cmd = self.launcher(ranks) + list(mca) + [self.args.shardmm, command] + bench_args
        self.log.write("+ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        self.log.flush()
        start = time.time()
        out = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=3600)
        self.log.write(out.stdout + out.stderr + "(%.1f s)\n" % (time.time() - start))
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


def call_traffic(run, c, dtype, algo, tmp, lay):
    """Bytes per (src, dst) of one call: a --bare run of 2 calls minus one of 1 call (inputs on
    the grid and in the layouts of bench options LAY)."""
    counts = []
    for reps in (1, 2):
        prefix = os.path.join(tmp, "%s_%s_%d_%d_%d" % (c["name"], algo, c["ranks"], reps, len(lay)))
        mca = ["--mca", "pml_monitoring_enable", "2", "--mca", "pml_monitoring_enable_output", "3",
               "--mca", "pml_monitoring_filename", prefix]
        run.mpirun(c["ranks"], shape_args(c, dtype) + lay + ["--algo", algo, "--bare", "--reps", str(reps)], mca)
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


def split_layouts(text):
    """"A[I_x,J_y],B[I_x,J_y],C[I_x,J_y]" -> its layouts (commas outside brackets separate)."""
    return re.split(r",(?![^\[]*\])", text)


def layout_args(args, inputs, grid, nb):
    """bench's grid and layout options for INPUTS: ScaLAPACK's bc(nb,nb) on its grid, or native
    inputs, ScaLAPACK getting bc copies on its grid: on the mesh and in the layouts shardmm
    prefers for the case (`bench --layouts preferred`), or --native-layouts on bench's default
    (near-square) mesh."""
    if inputs == "scalapack":
        return ["--grid", grid, "--nb", str(nb)]
    if not args.native_layouts:
        return ["--layouts", "preferred", "--scalapack-grid", grid, "--nb", str(nb)]
    a, b, c = split_layouts(args.native_layouts)
    return ["--layout-a", a, "--layout-b", b, "--layout-c", c, "--scalapack-grid", grid, "--nb", str(nb)]


def layouts_used(rec):
    """The inputs' layouts a bench record names ("A[I_x,K] B[K,J_x] C[I_x,J]")."""
    return " ".join(x + rec.get("layout_" + x.lower(), "?") for x in "ABC")


def run_case(run, c, args, tmp, inputs, cache):
    """One case with INPUTS; ScaLAPACK's tuning and traffic (always on its own bc(nb,nb)
    operands, the same for either input) are computed once per case, in CACHE."""
    key = (c["name"], c["ranks"])
    if key not in cache:
        cache[key] = {"tune": tune(run, c, args.dtype)}
    grid, nb, tuning = cache[key]["tune"]
    lay = layout_args(args, inputs, grid, nb)
    jsonl = os.path.join(args.out, "bench.jsonl")
    before = sum(1 for _ in open(jsonl)) if os.path.exists(jsonl) else 0
    run.mpirun(c["ranks"], shape_args(c, args.dtype) + lay + [
        "--algo", "auto,scalapack,cores", "--reps", str(args.reps),
        "--warmup", "1", "--json", jsonl, "--quiet"])
    recs = [json.loads(l) for l in open(jsonl)][before:]
    ours = next(r for r in recs if r["algorithm"] == "auto")
    ref = next(r for r in recs if r["algorithm"] == "scalapack")
    cores = next(r for r in recs if r["algorithm"] == "cores")
    ref_extra = None if args.cluster else scalapack_extra(run, c, args, grid, nb)
    elem = ELEM[args.dtype]
    if "scalapack_words" not in cache[key]:
        cache[key]["scalapack_words"] = per_rank_words(
            call_traffic(run, c, args.dtype, "scalapack", tmp, layout_args(args, "scalapack", grid, nb)),
            c["ranks"], elem)
    words = {"auto": per_rank_words(call_traffic(run, c, args.dtype, "auto", tmp, lay),
                                    c["ranks"], elem),
             "scalapack": cache[key]["scalapack_words"]}
    lb = ours["lower_bound_words"]
    return {
        "case": c["name"], "ranks": c["ranks"], "m": c["m"], "n": c["n"], "k": c["k"],
        "dtype": args.dtype, "op": c["transa"] + c["transb"], "inputs": inputs,
        # the inputs' layouts as bench made them, and how they were chosen (preferred: shardmm's
        # own for the case; given: --native-layouts; scalapack: ScaLAPACK's tuned bc(nb,nb))
        "layouts": layouts_used(ours) if inputs == "native" else "bc(%d,%d)" % (nb, nb),
        "native_layouts": None if inputs != "native" else "given" if args.native_layouts else "preferred",
        "operand_mesh": ours["mesh"], "network": run.network, "grid": grid, "nb": nb, "scalapack_tuning": tuning,
        "shardmm_median_s": ours["median_s"], "scalapack_median_s": ref["median_s"],
        "time_ratio": ours["median_s"] / ref["median_s"],
        "shardmm_gflops": ours["gflops"], "scalapack_gflops": ref["gflops"],
        "local_gemm_gflops": ours["local_gemm_gflops"],
        # the P-core ceiling timed in the same alternation: each rank's share as one local GEMM
        "cores_median_s": cores["median_s"],
        # shardmm's phases (bench's per-call means) and ScaLAPACK's time beyond the ceiling
        "shardmm_seconds": {p: ours.get("seconds_" + p) for p in ("redist", "comm", "gemm", "total")},
        "scalapack_comm_bound": ref["median_s"] > 2 * cores["median_s"],
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
    print("%-9s %-11s P=%d %-5s nb=%-3d %8.3f %8.3f  %5.3f  %7.1f %7.1f  %5.1f%%  %10d %10d %10d  %5.3f %5.3f  %s %s"
          % (r["inputs"], r["case"], r["ranks"], r["grid"], r["nb"], r["shardmm_median_s"], r["scalapack_median_s"],
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
    ap.add_argument("--inputs", default="scalapack", help="scalapack, native or scalapack,native")
    ap.add_argument("--native-layouts", default="",
                    help="A,B,C layouts of native inputs on bench's default mesh (default: the mesh "
                         "and layouts shardmm prefers for each case)")
    ap.add_argument("--cluster", help="HxR: running on node1 of scripts/cluster/cluster-sim")
    ap.add_argument("--rate", default="none")
    ap.add_argument("--delay", default="none")
    ap.add_argument("--reuse-tuning", action="store_true",
                    help="ScaLAPACK's grid, nb and words from OUT/results.jsonl's records of a case")
    ap.add_argument("cases", nargs="*", help="case names (default: all), or name@ranks")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases = parse_suite(args.suite)
    if args.cases:
        cases = [c for c in cases if c["name"] in args.cases or "%s@%d" % (c["name"], c["ranks"]) in args.cases]
    inputs = args.inputs.split(",")
    if not set(inputs) <= {"scalapack", "native"} or (
            args.native_layouts and len(split_layouts(args.native_layouts)) != 3):
        ap.error("--inputs wants scalapack and/or native, --native-layouts three layouts")
    print("inputs    case        P  grid  nb     ours_s   scal_s  ratio  GF/s_us GF/s_sc  %Pcore  "
          "words_us(pml) (counter)  words_sc  us/LB sc/LB  mem_us mem_sc")
    failed = 0
    done = []
    with open(os.path.join(args.out, "log"), "a") as log, tempfile.TemporaryDirectory() as tmp:
        run = Runner(args, log)
        run.network = calibrate(run, args) if args.cluster else None
        cache = earlier_tuning(args) if args.reuse_tuning else {}
        for c in cases:
            for mode in inputs:
                try:
                    r = run_case(run, c, args, tmp, mode, cache)
                except (RuntimeError, subprocess.TimeoutExpired, StopIteration, ValueError) as e:
                    print("%s P=%d %s: FAILED: %s" % (c["name"], c["ranks"], mode, e), flush=True)
                    failed += 1
                    continue
                with open(os.path.join(args.out, "results.jsonl"), "a") as f:
                    f.write(json.dumps(r) + "\n")
                print_row(r)
                done.append(r)
    report_targets(done, os.path.join(args.out, "targets.md"), bool(args.cluster))
    return 1 if failed else 0


def earlier_tuning(args):
    """The cache of run_case from the records of an earlier run in OUT/results.jsonl."""
    cache = {}
    path = os.path.join(args.out, "results.jsonl")
    for line in open(path) if os.path.exists(path) else []:
        r = json.loads(line)
        if r["dtype"] == args.dtype:
            cache[(r["case"], r["ranks"])] = {
                "tune": (r["grid"], r["nb"], r["scalapack_tuning"]), "scalapack_words": r["scalapack_words"]}
    return cache


def calibrate(run, args):
    """`shardmm calibrate` on the cluster; every later rank plans with its profile. Returns the
    network record (hosts, ranks, rate, delay, the measured latency and bandwidth)."""
    profile = os.path.join(args.out, "profile.json")
    hosts, per_host = (int(x) for x in args.cluster.split("x"))
    # --crossover-max 0: Strassen's crossover is a local GEMM race (kept at its default), not
    # the network's, and takes minutes with 8 ranks on a few cores
    run.mpirun(hosts * per_host, ["-o", profile, "--crossover-max", "0"], command="calibrate")
    run.env["SHARDMM_PROFILE"] = profile
    p = json.load(open(profile))
    net = {"hosts": hosts, "ranks_per_host": per_host, "rate": args.rate, "delay": args.delay,
           "latency_s": p["latency_s"], "bytes_per_s": p["bytes_per_s"]}
    print("network: %s hosts x %s ranks, rate %s, delay %s; calibrate: latency %.3g s, %.3g MB/s"
          % (hosts, per_host, args.rate, args.delay, p["latency_s"], p["bytes_per_s"] / 1e6), flush=True)
    return net


def report_targets(results, path, cluster):
    """The suite's targets for this run's cases (suite_table.py --targets), or on a cluster its
    targets (suite_table.py --cluster), to stdout and PATH."""
    table = io.StringIO()
    (suite_table.cluster_table if cluster else suite_table.targets)(results, table)
    with open(path, "w") as f:
        f.write(table.getvalue())
    print("\n" + table.getvalue(), end="")


if __name__ == "__main__":
    sys.exit(main())
