#!/usr/bin/env python3
"""The docs/PERFORMANCE.md tables from a scripts/bench/bench-vs-scalapack results.jsonl.

  suite_table.py RESULTS.jsonl [PREVIOUS.jsonl]   the suite table; with a second run's records,
                                                  that run's time ratio beside each row
  suite_table.py --targets RESULTS.jsonl          the suite's targets, case by case: measured,
                                                  required, met or missed, and the floor
  suite_table.py --cluster RESULTS.jsonl...       the cluster's side-by-side table of --cluster
                                                  runs, with the targets' verdicts

The floor of a time ratio is ScaLAPACK's fraction of the P-core ceiling (cores_median_s, timed
in the same alternation): shardmm cannot beat the ceiling, so shardmm / ScaLAPACK >= ceiling /
ScaLAPACK. A ratio target below that floor cannot be met by any implementation on that run."""
import json
import re
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def key(r):
    return (r["case"], r["ranks"])


def pct(x):
    return "%.0f%%" % (100 * x) if x is not None else "-"


def mem(x):
    return "%.2f" % x if x is not None and x >= 0 else "-"


def row(r, prev):
    words_us = max(r["shardmm_words"]["received_words"])
    words_sc = max(r["scalapack_words"]["received_words"])
    # The previous run's column only when the caller gave one (prev is False without it).
    previous = "" if prev is False else "%s | " % ("%.2f" % prev["time_ratio"] if prev else "-")
    return "| %s | %d | %dx%dx%d %s | %s, %d | %.3f | %.3f | **%.2f** | %s%s | %s | %d | %d | %.2f | %s / %s | %s |" % (
        r["case"], r["ranks"], r["m"], r["n"], r["k"], r["op"], r["grid"], r["nb"],
        r["shardmm_median_s"], r["scalapack_median_s"], r["time_ratio"], previous,
        pct(r.get("shardmm_fraction_of_P_cores")), pct(r.get("scalapack_fraction_of_P_cores")),
        words_us, words_sc, r["shardmm_words_over_lb"] or 0,
        mem(r.get("shardmm_extra_over_local_abc")), mem(r.get("scalapack_extra_over_local_abc")),
        r["plan"].split("auto: ")[-1].split(";")[0])


# The suite's targets: (name, applies to record, measured value, required, higher is better).
TARGETS = [
    ("compute-bound square at P = 2: % of the P-core ceiling",
     lambda r: r["case"].startswith("square") and r["ranks"] == 2 and r["op"] == "NN",
     lambda r: r.get("shardmm_fraction_of_P_cores"), 0.97, True),
    ("communication-heavy: time ratio",
     lambda r: r["op"] == "NN" and (r["case"] in ("largek", "tallskinny") or r["ranks"] in (4, 6)),
     lambda r: r["time_ratio"], 0.75, False),
    ("transposed operands: time ratio",
     lambda r: r["op"] != "NN", lambda r: r["time_ratio"], 0.70, False),
    ("words moved / lower bound", lambda r: True, lambda r: r.get("shardmm_words_over_lb"), 1.10, False),
    ("peak memory / (local A + B + C)", lambda r: True,
     lambda r: 1 + r["shardmm_extra_over_local_abc"] if r.get("shardmm_extra_over_local_abc") is not None
     else None, 1.30, False),
]


def floor(name, r):
    """What no implementation can beat on this run (time ratios), or ScaLAPACK's figure on the
    same layout (words), as text; '-' where there is none."""
    if name.endswith("time ratio") and r.get("scalapack_fraction_of_P_cores"):
        return "%.2f" % r["scalapack_fraction_of_P_cores"]
    if name.startswith("words") and r.get("scalapack_words_over_lb"):
        return "ScaLAPACK %.2f" % r["scalapack_words_over_lb"]
    return "-"


def verdict(name, value, required, higher, r):
    if value is None:
        return "not measured"
    if (value >= required) if higher else (value <= required):
        return "met"
    if name.endswith("time ratio") and r.get("scalapack_fraction_of_P_cores", 0) > required:
        return "missed, floor above target"
    return "missed"


def targets(rows, out=None):
    out = out or sys.stdout  # looked up per call (redirect_stdout)
    print("| target | case | P | op | measured | required | verdict | floor |", file=out)
    print("|---|---|---|---|---|---|---|---|", file=out)
    for name, applies, measure, required, higher in TARGETS:
        for r in filter(applies, rows):
            value = measure(r)
            print("| %s | %s | %d | %s | %s | %s %.2f | %s | %s |" % (
                name, r["case"], r["ranks"], r["op"], "-" if value is None else "%.2f" % value,
                ">=" if higher else "<=", required, verdict(name, value, required, higher, r), floor(name, r)),
                file=out)


def rate_bits(rate):
    """tc's rate (200mbit, 1gbit, 10mbps) in bit/s; None for none or no limit."""
    m = re.fullmatch(r"([\d.]+)([kmg]?)(bit|bps)?", str(rate).lower())
    if not m:
        return None
    bits = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    return bits * 8 if m.group(3) == "bps" else bits


def cluster_verdicts(r):
    """The cluster targets of a --cluster record: (time limit, time verdict, words verdict). Time
    <= 0.5 x ScaLAPACK's at 200 Mbit/s or less, else 0.75 x, where ScaLAPACK is communication-
    bound (its time over twice the P-core ceiling's); words <= 1.10 x the lower bound."""
    bits = rate_bits((r.get("network") or {}).get("rate"))
    limit = 0.5 if bits is not None and bits <= 200e6 else 0.75
    if not r["scalapack_comm_bound"]:
        time_ok = "n/a (not comm-bound)"
    else:
        time_ok = "met" if r["time_ratio"] <= limit else "missed"
    words = r["shardmm_words_over_lb"]
    return limit, time_ok, "met" if words is not None and words <= 1.10 else "missed"


def inputs_label(r):
    """The record's input mode, one series per mode: "scalapack", "native preferred" (the
    layouts shardmm prefers for each case), or "native" with the given layouts' sharding
    ("native [I_x,J_y]")."""
    if r["inputs"] != "native":
        return r["inputs"]
    if r.get("native_layouts") == "preferred":
        return "native preferred"
    m = re.search(r"\[[^\]]*\]", r.get("layouts", ""))
    return "native " + m.group(0) if m else "native"


def inputs_cell(r):
    """inputs_label, with the layouts and mesh of preferred inputs (they differ per case):
    "native preferred A[I_x,K] B[K,J_x] C[I_x,J] on {x:8}"."""
    label = inputs_label(r)
    if r.get("native_layouts") != "preferred":
        return label
    return "%s %s on %s" % (label, r.get("layouts", "?"), r.get("operand_mesh", "?"))


def cluster_table(rows, out=None):
    out = out or sys.stdout
    print("| network | case | inputs | shardmm s | ScaLAPACK s (grid, nb) | ratio | target | P-core "
          "ceiling s | words/rank shardmm / ScaLAPACK (x LB) | words target | shardmm plan |", file=out)
    print("|---|---|---|---|---|---|---|---|---|---|---|", file=out)
    for r in rows:
        n = r.get("network") or {}
        limit, time_ok, words_ok = cluster_verdicts(r)
        print("| %sx%s, %s + %s | %s | %s | %.2f | %.2f (%s, %d) | %.2f | <= %.2f %s | %.2f | %.3g / %.3g (%.2f / %.2f) "
              "| %s | %s |" % (
                  n.get("hosts"), n.get("ranks_per_host"), n.get("rate"), n.get("delay"), r["case"], inputs_cell(r),
                  r["shardmm_median_s"], r["scalapack_median_s"], r["grid"], r["nb"], r["time_ratio"], limit, time_ok,
                  r["cores_median_s"], max(r["shardmm_words"]["received_words"]),
                  max(r["scalapack_words"]["received_words"]), r["shardmm_words_over_lb"] or 0,
                  r["scalapack_words_over_lb"] or 0, words_ok, r["plan"].split("auto: ")[-1].split(";")[0]),
              file=out)


def main():
    if sys.argv[1] == "--targets":
        targets(load(sys.argv[2]))
        return
    if sys.argv[1] == "--cluster":
        cluster_table([r for path in sys.argv[2:] for r in load(path)])
        return
    rows = load(sys.argv[1])
    prev = {key(r): r for r in load(sys.argv[2])} if len(sys.argv) > 2 else None
    print("| case | P | m x n x k, op | ScaLAPACK's best grid, nb | shardmm s | ScaLAPACK s | time ratio "
          + ("| previous run " if prev is not None else "")
          + "| shardmm % of P cores | ScaLAPACK % of P cores | words/rank shardmm (pml) "
          "| words/rank ScaLAPACK (pml) | shardmm / LB | added memory shardmm / ScaLAPACK | shardmm plan |")
    print("|" + "---|" * (15 if prev is not None else 14))
    for r in rows:
        print(row(r, prev.get(key(r)) if prev is not None else False))


if __name__ == "__main__":
    main()
