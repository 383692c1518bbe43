#!/usr/bin/env python3
"""The docs/PERFORMANCE.md tables from a scripts/bench-vs-scalapack results.jsonl.

  suite_table.py RESULTS.jsonl [PREVIOUS.jsonl]   the suite table, a previous round's time ratio
                                                  beside each row
  suite_table.py --targets RESULTS.jsonl          issue 9's targets, case by case: measured,
                                                  required, met or missed, and the floor

The floor of a time ratio is ScaLAPACK's fraction of the P-core ceiling (cores_median_s, timed
in the same alternation): shardmm cannot beat the ceiling, so shardmm / ScaLAPACK >= ceiling /
ScaLAPACK. A ratio target below that floor cannot be met by any implementation on that run."""
import json
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
    return "| %s | %d | %dx%dx%d %s | %s, %d | %.3f | %.3f | **%.2f** | %s | %s | %s | %d | %d | %.2f | %s / %s | %s |" % (
        r["case"], r["ranks"], r["m"], r["n"], r["k"], r["op"], r["grid"], r["nb"],
        r["shardmm_median_s"], r["scalapack_median_s"], r["time_ratio"],
        "%.2f" % prev["time_ratio"] if prev else "-",
        pct(r.get("shardmm_fraction_of_P_cores")), pct(r.get("scalapack_fraction_of_P_cores")),
        words_us, words_sc, r["shardmm_words_over_lb"] or 0,
        mem(r.get("shardmm_extra_over_local_abc")), mem(r.get("scalapack_extra_over_local_abc")),
        r["plan"].split("auto: ")[-1].split(";")[0])


# Issue 9's targets: (name, applies to record, measured value, required, higher is better).
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


def main():
    if sys.argv[1] == "--targets":
        targets(load(sys.argv[2]))
        return
    rows = load(sys.argv[1])
    prev = {key(r): r for r in load(sys.argv[2])} if len(sys.argv) > 2 else {}
    print("| case | P | m x n x k, op | ScaLAPACK's best grid, nb | shardmm s | ScaLAPACK s | time ratio "
          "| previous | shardmm % of P cores | ScaLAPACK % of P cores | words/rank shardmm (pml) "
          "| words/rank ScaLAPACK (pml) | shardmm / LB | added memory shardmm / ScaLAPACK | shardmm plan |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(row(r, prev.get(key(r))))


if __name__ == "__main__":
    main()
