#!/usr/bin/env python3
"""The cost model against measurements, then extrapolated (docs/SCALING.md).

1. For every measured run of Auto, the planner's prediction with the network profile the run
   was made on (`shardmm plan --json --profile`, with the run's input layouts): predicted vs
   measured time and words received by the busiest rank, for the candidate that ran.
2. Fit: one factor on the profile's bandwidth and one on its GEMM rate (least squares on the
   log of predicted / measured time, grid search), reported with the error before and after.
3. Predicted time and words for P = 2 .. 4096 on the reference network (bench/reference-
   network.json) with the fitted factors, for the shapes given.
Two kinds of runs: `--measured` takes `shardmm bench --json` records (scripts/bench/scaling-run),
`--cluster DIR` takes scripts/bench/bench-vs-scalapack's records (DIR/*.jsonl, the profiles
DIR/profile-NAME.json, NAME a file's name or its network's rate), drop-in and native inputs;
`--network-profile RATE=FILE` prices every record of that link rate with FILE instead (one
profile per network, e.g. re-measured by today's `calibrate`; the records stay as they are).
Outputs JSON lines (OUT/model_points.jsonl, OUT/model_curves.jsonl unless --no-curves) and a
summary on stdout.
"""
import argparse
import concurrent.futures
import glob
import json
import math
import os
import re
import statistics
import subprocess
import tempfile

def plan(shardmm, m, n, k, ranks, profile, grid=None, nb=None, layouts=None, hosts=1):
    # hosts > 1: the run's GEMMs relayed the chain broadcasts (its mesh spanned nodes)
    cmd = [shardmm, "plan", "--m", str(m), "--n", str(n), "--k", str(k), "--ranks", str(ranks),
           "--profile", profile, "--json", "--rows", "200", "--hosts", str(hosts)]
    if grid:  # the run's inputs were on this grid (bc(nb,nb) unless layouts), as gemm's Auto saw them
        cmd += ["--grid", grid] + (["--nb", str(nb)] if nb else [])
        for flag, spec in zip(("--layout-a", "--layout-b", "--layout-c"), layouts or ()):
            cmd += [flag, spec]
    out = subprocess.run(cmd, capture_output=True, text=True)  # outside mpirun: no MPI started
    if out.returncode == 0:
        return json.loads(out.stdout)
    raise SystemExit("scaling_model: %s failed: %s" % (" ".join(cmd), out.stderr.strip()))


def scaled_profile(base, bw_factor, gemm_factor, tmp, exposed=None):
    p = dict(base)
    p["bytes_per_s"] = base["bytes_per_s"] * bw_factor
    p["gemm_gflops"] = {t: g * gemm_factor for t, g in base["gemm_gflops"].items()}
    if exposed is not None:
        p["overlap_exposed"] = exposed
    fd, path = tempfile.mkstemp(suffix=".json", dir=tmp)
    with os.fdopen(fd, "w") as f:
        json.dump(p, f)
    return path


def mesh_grid(mesh):
    """"{x:1, y:3}" -> "1x3"; a line "{x:8}" -> "8x1" (plan's meshes are x by y)."""
    sizes = re.findall(r":(\d+)", mesh)
    return "x".join(sizes + ["1"] * (2 - len(sizes)))


def ran_name(plan_text):
    """The candidate that ran: "1x3, auto: summa(A) 1x3; ..." -> "summa(A) 1x3"."""
    ran = re.search(r"auto: ([^;]+);", plan_text or "")
    return ran.group(1).strip() if ran else None


def bench_point(r, hosts=1):
    """A `shardmm bench --json` record of Auto (bc(nb,nb) inputs on its mesh)."""
    return {"case": "%dx%dx%d" % (r["m"], r["n"], r["k"]), "m": r["m"], "n": r["n"], "k": r["k"],
            "ranks": r["ranks"], "network": r["network"], "grid": mesh_grid(r["mesh"]), "nb": r.get("nb"),
            "layouts": None, "measured_s": r["median_s"], "measured_words": r["words_max"],
            # hosts 1 unless --gemms-relay: docs/data/scaling's runs (3 hosts) predate GEMMs that
            # poll, so their relays waited for MPI calls, as on one host
            "ran": r.get("plan", ""), "hosts": hosts}


def cluster_point(r, network, gemms_relay=False):
    """A bench-vs-scalapack record: shardmm's median, the most words a rank received (Open
    MPI's monitoring), inputs in ScaLAPACK's bc(nb,nb) on its grid or native on bench's mesh.
    gemms_relay: the run's GEMMs polled the messages in flight (builds from d182c73 on), so
    it is priced on its hosts; else as on one host (relays waiting for MPI calls)."""
    native = r["inputs"] == "native"
    mesh = r.get("operand_mesh") or ("" if native else r["grid"])
    grid = mesh_grid(mesh) if mesh.startswith("{") else mesh
    if native and not grid:  # bench's near-square mesh
        grid = "x".join(str(d) for d in near_square(r["ranks"]))
    label = "native " + r["layouts"].split()[0][1:] if native else "drop-in"  # "native [I_x,J_y]"
    return {"case": r["case"] + " " + label, "m": r["m"], "n": r["n"], "k": r["k"],
            "ranks": r["ranks"], "network": network, "grid": grid, "nb": r["nb"],
            "layouts": r["layouts"].split() if native else None, "measured_s": r["shardmm_median_s"],
            "measured_words": max(r["shardmm_words"]["received_words"]), "ran": r.get("plan", ""),
            "hosts": r["network"].get("hosts", 1) if gemms_relay else 1}


def near_square(p):
    q = int(math.isqrt(p))
    while p % q:
        q -= 1
    return q, p // q


def predict_points(shardmm, points, profile_path):
    # One launcher per point, several at once: each spends most of its time starting MPI.
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        plans = list(pool.map(lambda r: plan(shardmm, r["m"], r["n"], r["k"], r["ranks"], profile_path, r["grid"],
                                             r["nb"], r["layouts"], r.get("hosts", 1)), points))
    out = []
    for r, p in zip(points, plans):
        # The candidate that ran, else the planner's choice now.
        ran = ran_name(r["ran"])
        c = next((x for x in p["candidates"] if x["name"] == ran), p["chosen"])
        out.append({"case": r["case"], "ranks": r["ranks"], "network": r["network"],
                    "measured_s": r["measured_s"], "predicted_s": c["seconds"], "chosen": c["name"],
                    "measured_words": r["measured_words"], "predicted_words": c["words"] + c["redist_words"],
                    "ran": r["ran"]})
    return out


def log_error(preds):
    return math.sqrt(sum(math.log(p["predicted_s"] / p["measured_s"]) ** 2 for p in preds) / len(preds))


def time_error(p):
    return p["predicted_s"] / p["measured_s"] - 1


def words_error(p):
    return p["predicted_words"] / p["measured_words"] - 1 if p["measured_words"] else 0.0


def summary(preds):
    """Median |error| and the range of time and words errors, as fractions."""
    t, w = [time_error(p) for p in preds], [words_error(p) for p in preds]
    return {"points": len(preds), "rms_log_time": log_error(preds),
            "time_median_abs": statistics.median(abs(e) for e in t), "time_min": min(t), "time_max": max(t),
            "words_median_abs": statistics.median(abs(e) for e in w), "words_min": min(w), "words_max": max(w)}


def summary_line(s):
    return ("time: RMS log %.3f, median |error| %.0f %%, %+.0f %% to %+.0f %%; words: median |error| %.1f %%, "
            "%+.1f %% to %+.1f %%" % (s["rms_log_time"], 100 * s["time_median_abs"], 100 * s["time_min"],
                                      100 * s["time_max"], 100 * s["words_median_abs"], 100 * s["words_min"],
                                      100 * s["words_max"]))


BW_FACTORS = (0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.85, 1.0, 1.2, 1.4)
GEMM_FACTORS = (0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.4, 1.6, 1.8, 2.0)
EXPOSED = (0.0, 0.25, 0.5, 0.75, 1.0)


def fit(shardmm, points_by_net, profiles, tmp, fit_exposed=False):
    """(bandwidth factor, GEMM factor[, overlap_exposed]) minimising the RMS log time error:
    each in turn over its grid with the others held, until none moves, from a few starts (the
    first are the profiles as they are); the best end wins."""
    cache = {}

    def evaluate(x):
        if x not in cache:
            preds = []
            for net, pts in points_by_net.items():
                preds += predict_points(shardmm, pts, scaled_profile(profiles[net], x[0], x[1], tmp, x[2]))
            cache[x] = (log_error(preds), preds)
        return cache[x][0]

    grids = (BW_FACTORS, GEMM_FACTORS, EXPOSED if fit_exposed else (None,))

    def descend(best):
        while True:
            moved = False
            for i, grid in enumerate(grids):
                top = min((best[:i] + (v,) + best[i + 1:] for v in grid), key=evaluate)
                moved |= evaluate(top) < evaluate(best)
                best = top if evaluate(top) < evaluate(best) else best
            if not moved:
                return best

    # The profiles as they are, with the default overlap share and with none; then far ends.
    starts = ([(1.0, 1.0, 0.25), (1.0, 1.0, 1.0), (0.5, 1.4, 1.0), (0.35, 0.8, 0.5)] if fit_exposed
              else [(1.0, 1.0, None), (0.35, 0.8, None)])
    best = min((descend(tuple(x if x in g else g[0] for x, g in zip(s, grids))) for s in starts), key=evaluate)
    return cache[best][0], best, cache[best][1]


def load_measured(path, hosts=1):
    """bench --json records of Auto by network, made on `hosts` hosts (as the model prices them)."""
    points_by_net = {}
    for line in open(path):
        r = json.loads(line)
        if r.get("algorithm") == "auto":
            points_by_net.setdefault(r["network"], []).append(bench_point(r, hosts))
    return points_by_net


def rate_bytes_per_s(rate):
    """tc's "200mbit" / "1gbit" -> bytes per second (None when not given)."""
    m = re.fullmatch(r"([\d.]+)([kmg]?)bit", rate or "")
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)] / 8 if m else None


def record_profile(directory, net, r, network_profiles, shared_links):
    """The profile for record r of file NET.jsonl: the network profile of its link rate as it is, else DIR/profile-NET.json (or of its rate) with
    the latency and bandwidth the run itself was planned with, divided by the ranks per host
    under shared_links when above the link's share."""
    rate = r["network"].get("rate")
    if rate in network_profiles:
        return dict(json.load(open(network_profiles[rate])))
    base = next((os.path.join(directory, "profile-%s.json" % n) for n in (net, rate)
                 if os.path.exists(os.path.join(directory, "profile-%s.json" % n))), None)
    if base is None:
        raise SystemExit("scaling_model: no profile-%s.json (or of its rate) in %s" % (net, directory))
    prof = dict(json.load(open(base)))
    for key in ("latency_s", "bytes_per_s"):  # as this run's Auto had them
        prof[key] = r["network"].get(key, prof[key])
    per_host, link = r["network"].get("ranks_per_host", 1), rate_bytes_per_s(rate)
    if shared_links and per_host > 1 and (link is None or prof["bytes_per_s"] > link / per_host):
        prof["bytes_per_s"] /= per_host
    return prof


def load_cluster(directory, run_gemm_rate=False, shared_links=False, network_profiles=None,
                 gemms_relay=False):
    """bench-vs-scalapack records (DIR/*.jsonl) by file and calibration, each with its profile:
    DIR/profile-NAME.json for the file NAME.jsonl, else for its network's rate (profile-200mbit.
    json), with the latency and bandwidth the run itself was planned with (its record's network).
    run_gemm_rate: the profile's GEMM rates scaled so that f64's is the median rate the runs
    measured (local_gemm_gflops: every rank's share as one local GEMM, all ranks at once).
    shared_links: a bandwidth above the link's rate / ranks per host was measured by one pair
    alone (calibrate before it shared the links); it is divided by the ranks per host.
    network_profiles: {link rate: profile JSON}; the records of that rate are priced with it as
    it is (latency, bandwidth and GEMM rates), not with what they carry."""
    points_by_net, profiles, rates = {}, {}, {}
    for path in sorted(glob.glob(os.path.join(directory, "*.jsonl"))):
        net = os.path.basename(path)[:-len(".jsonl")]
        for line in open(path):
            r = json.loads(line)
            if r.get("shardmm_median_s") is None or not r.get("plan"):
                continue
            prof = record_profile(directory, net, r, network_profiles or {}, shared_links)
            group = "%s@%g" % (net, prof["bytes_per_s"])
            profiles[group] = prof
            points_by_net.setdefault(group, []).append(cluster_point(r, net, gemms_relay))
            rates.setdefault(group, []).append(r.get("local_gemm_gflops"))
    for group in profiles:
        if run_gemm_rate and None not in rates[group]:
            f = statistics.median(rates[group]) / profiles[group]["gemm_gflops"]["f64"]
            profiles[group]["gemm_gflops"] = {t: g * f for t, g in profiles[group]["gemm_gflops"].items()}
    return points_by_net, profiles


def share_links(points_by_net, profiles, hosts):
    """Each profile's bandwidth divided by the ranks per host of its runs: the profiles measured
    one pair of ranks alone, while in a run the ranks of a host share its link (what `calibrate`
    now measures with a ring shift across hosts)."""
    for net, pts in points_by_net.items():
        per_host = max(1, pts[0]["ranks"] // hosts[net]) if hosts.get(net) else 1
        profiles[net] = dict(profiles[net], bytes_per_s=profiles[net]["bytes_per_s"] / per_host)


def curves_for(shardmm, shapes, ref_path):
    curves = []
    with open(ref_path) as f:
        per_node = json.load(f).get("ranks_per_node", 1 << 30)  # one rank per core
    for shape in shapes.split(","):
        m, n, k = (int(x) for x in shape.split("x"))
        for e in range(1, 13):
            p = plan(shardmm, m, n, k, 2 ** e, ref_path, hosts=-(-2 ** e // per_node))
            c = p["chosen"]
            curves.append({"shape": shape, "ranks": 2 ** e, "predicted_s": c["seconds"], "chosen": c["name"],
                           "words": c["words"], "redist_words": c["redist_words"],
                           "lower_bound_words": p["lower_bound_words"], "memory_bytes": c["memory_bytes"]})
    return curves


def write_jsonl(path, rows):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    os.replace(tmp, path)  # whole or not at all


def print_report(raw, err, factors, fitted):
    exposed = "" if factors[2] is None else ", overlap_exposed %g" % factors[2]
    print("measured points: %d; RMS log time error unfitted %.3f, fitted %.3f (bandwidth x%g, GEMM rate x%g%s)"
          % (len(raw), log_error(raw), err, factors[0], factors[1], exposed))
    print("unfitted: " + summary_line(summary(raw)))
    print("fitted:   " + summary_line(summary(fitted)))
    print("%-28s %3s %-13s %10s %10s %7s %12s %12s %7s  %s" % (
        "case", "P", "network", "measured", "predicted", "err", "words_meas", "words_pred", "err", "chosen"))
    for p in fitted:
        print("%-28s %3d %-13s %10.4f %10.4f %+6.1f%% %12d %12d %+6.1f%%  %s" % (
            p["case"], p["ranks"], p["network"], p["measured_s"], p["predicted_s"], 100 * time_error(p),
            p["measured_words"], p["predicted_words"], 100 * words_error(p), p["chosen"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shardmm", required=True, help="the shardmm launcher")
    ap.add_argument("--measured", help="bench --json records; field 'network' names the profile")
    ap.add_argument("--profile", action="append", default=[], help="NAME=profile.json (calibrated)")
    ap.add_argument("--cluster", metavar="DIR", help="bench-vs-scalapack records DIR/*.jsonl and DIR/profile-*.json")
    ap.add_argument("--run-gemm-rate", action="store_true",
                    help="--cluster: the GEMM rate the runs measured instead of the profiles' (calibrate's)")
    ap.add_argument("--fit-exposed", action="store_true",
                    help="fit the profiles' overlap_exposed too (the share of overlapped time not hidden)")
    ap.add_argument("--shared-links", action="store_true",
                    help="divide the profiles' bandwidth (one pair alone) by the runs' ranks per host")
    ap.add_argument("--network-profile", action="append", default=[], metavar="RATE=FILE",
                    help="--cluster: price every record of link rate RATE (e.g. 200mbit) with the profile FILE "
                         "as it is, instead of the profile and network the record carries")
    ap.add_argument("--hosts", type=int, help="--measured: hosts the runs were on (for --shared-links)")
    ap.add_argument("--gemms-relay", action="store_true",
                    help="the runs' GEMMs polled the messages in flight (builds from d182c73 on): chain "
                         "broadcasts priced as relayed during them on the runs' hosts (shardmm plan "
                         "--hosts; with --measured, --hosts says how many)")
    ap.add_argument("--factors", metavar="BW,GEMM[,EXPOSED]",
                    help="no fit: these factors (and overlap_exposed), e.g. fitted on other runs")
    ap.add_argument("--reference", help="reference network profile JSON (for the curves)")
    ap.add_argument("--shapes", default="16384x16384x16384,65536x65536x65536,1048576x4096x4096")
    ap.add_argument("--no-curves", action="store_true", help="compare and fit only")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if bool(args.measured) == bool(args.cluster):
        ap.error("give --measured (with --profile) or --cluster DIR")
    if not args.no_curves and not args.reference:
        ap.error("--reference is needed for the curves (or --no-curves)")
    if args.cluster:
        network_profiles = dict(spec.partition("=")[::2] for spec in args.network_profile)
        if not all(network_profiles.values()):
            ap.error("--network-profile takes RATE=FILE")
        points_by_net, profiles = load_cluster(args.cluster, args.run_gemm_rate, args.shared_links,
                                               network_profiles, args.gemms_relay)
    else:
        if args.gemms_relay and not args.hosts:
            ap.error("--measured with --gemms-relay needs --hosts (the runs' hosts)")
        points_by_net = load_measured(args.measured, args.hosts if args.gemms_relay else 1)
        profiles = {}
        for spec in args.profile:
            name, _, path = spec.partition("=")
            profiles[name] = json.load(open(path))
        if args.shared_links:  # these profiles measured one pair alone
            share_links(points_by_net, profiles, {net: args.hosts for net in points_by_net})
    if not points_by_net:
        ap.error("no measured runs of Auto")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        raw = []
        for net, pts in points_by_net.items():
            raw += predict_points(args.shardmm, pts, scaled_profile(profiles[net], 1.0, 1.0, tmp))
        if args.factors:  # no fit: the model with factors fitted elsewhere, on runs it has not seen
            f = [float(x) for x in args.factors.split(",")]
            factors = (f[0], f[1], f[2] if len(f) > 2 else None)
            fitted = []
            for net, pts in points_by_net.items():
                fitted += predict_points(args.shardmm, pts, scaled_profile(profiles[net], *factors[:2], tmp, factors[2]))
            err = log_error(fitted)
        else:
            err, factors, fitted = fit(args.shardmm, points_by_net, profiles, tmp, args.fit_exposed)
        if not args.no_curves:
            # The overlap share stays the reference's own: the fitted one is of ranks sharing cores.
            ref_path = scaled_profile(json.load(open(args.reference)), factors[0], factors[1], tmp)
            write_jsonl(os.path.join(args.out, "model_curves.jsonl"), curves_for(args.shardmm, args.shapes, ref_path))
    write_jsonl(os.path.join(args.out, "model_points.jsonl"),
                [dict(b, unfitted_predicted_s=a["predicted_s"]) for a, b in zip(raw, fitted)])
    print_report(raw, err, factors, fitted)


if __name__ == "__main__":
    main()
