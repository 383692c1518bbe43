#!/usr/bin/env python3
"""The docs/PERFORMANCE.md table from a scripts/bench-vs-scalapack results.jsonl, with a previous
round's time ratio beside each row.

Usage: python3 scripts/lib/suite_table.py RESULTS.jsonl [PREVIOUS.jsonl] > table.md"""
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


def main():
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
