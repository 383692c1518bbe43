#!/usr/bin/env python3
"""Driver of scripts/report/plot: JSON lines from `shardmm bench --json` (or scripts/bench/bench-sweep) or a
scripts/bench/bench-vs-scalapack results.jsonl -> gnuplot PNGs (see scripts/report/plot --help)."""
import collections
import json
import math
import os
import subprocess
import sys
import tempfile

from plot_style import algorithm_colour, algorithm_rank, algorithm_style, quote, rank_axis


def load(path):
    bench, suite = [], []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if "case" in r and r.get("cores_median_s"):
                suite.append(r)
            elif "algorithm" in r and "ranks" in r:
                bench.append(r)
    return bench, suite


def panel_key(r):
    """(shape, op, dtype): one panel per problem."""
    return ("%sx%sx%s" % (r["m"], r["n"], r["k"]), r.get("transa", "N") + r.get("transb", "N"),
            r.get("dtype", "?"))


def series_by_panel(bench, value):
    """{panel: {algorithm: [(ranks, value)]}}, values that are None or NaN left out; a repeated
    (panel, algorithm, ranks) keeps the last record."""
    panels = collections.defaultdict(lambda: collections.defaultdict(dict))
    for r in bench:
        v = value(r)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        panels[panel_key(r)][r["algorithm"]][int(r["ranks"])] = v
    return {p: {a: sorted(pts.items()) for a, pts in algos.items()} for p, algos in panels.items()}


def words_over_lb(r):
    if r["algorithm"] in ("scalapack", "cores"):
        return None  # no counters inside ScaLAPACK; cores moves nothing
    lb = r.get("lower_bound_words") or 0
    words = r.get("algo_words_max", r.get("words_max"))  # inside the algorithm, not layout moves
    return words / lb if lb and words else None


def shape_order(panel):
    shape, op, dtype = panel
    m, n, k = (int(x) for x in shape.split("x"))
    return (dtype, m * n * k, shape, op)


def grid_plot(panels, tmp, out, title, ylabel, yrange):
    """One panel per problem (title: shape, op, dtype), one series per algorithm."""
    keys = sorted(panels, key=shape_order)
    cols = min(3, len(keys))
    rows = (len(keys) + cols - 1) // cols
    lines = ["set terminal pngcairo size %d,%d font ',10' noenhanced" % (540 * cols, 340 * rows + 40),
             "set output %s" % quote(out),
             "set multiplot layout %d,%d title %s font ',12'" % (rows, cols, quote(title)),
             "set grid", "set xlabel 'ranks P'", "set ylabel %s" % quote(ylabel),
             "set key outside right top vertical samplen 2.5 font ',9'", "set bars small"]
    for i, p in enumerate(keys):
        algos = sorted(panels[p], key=algorithm_rank)
        lines.append("set title %s" % quote("%s %s, %s" % p))
        lines.append(rank_axis([r for a in algos for r, _ in panels[p][a]]))
        lines.append("set yrange %s" % yrange)
        parts = []
        for a in algos:
            dat = os.path.join(tmp, "%s.p%d.%s.dat" % (os.path.basename(out), i, a))
            with open(dat, "w") as f:
                f.writelines("%d %.9g\n" % pt for pt in panels[p][a])
            parts.append("%s using 1:2 with linespoints %s title %s" % (quote(dat), algorithm_style(a), quote(a)))
        lines.append("plot " + ", \\\n     ".join(parts))
    lines.append("unset multiplot")
    return "\n".join(lines) + "\n"


def suite_plot(records, tmp, out):
    """Clustered bars: per case shardmm's and ScaLAPACK's speed as % of the P-core ceiling."""
    dat = os.path.join(tmp, "suite.dat")
    with open(dat, "w") as f:
        for r in records:
            label = "%s P%d %s %dx%dx%d" % (r["case"], r["ranks"], r["op"], r["m"], r["n"], r["k"])
            f.write('"%s" %.1f %.1f %.2f\n' % (label, 100 * r["shardmm_fraction_of_P_cores"],
                                                100 * r["scalapack_fraction_of_P_cores"], r["time_ratio"]))
    dtypes = sorted({r["dtype"] for r in records if "dtype" in r})
    dtype = ", ".join(dtypes) if dtypes else "dtype not recorded"
    auto, scalapack = ("lc rgb '%s'" % algorithm_colour(a) for a in ("auto", "scalapack"))
    return """set terminal pngcairo size %d,700 font ',10' noenhanced
set output %s
set title %s font ',12'
set ylabel '%% of P concurrent single-core GEMMs (same run)'
set yrange [0:130]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -40 font ',9'
set rmargin 14
set key top left horizontal
set grid ytics
plot %s using 2:xtic(1) %s title 'shardmm (auto)', '' using 3 %s title 'ScaLAPACK (best grid, nb)', \\
     '' using 0:($2 > $3 ? $2 + 7 : $3 + 7):(sprintf('%%.2f', $4)) with labels notitle, \\
     97 with lines dashtype 2 lc rgb '#555555' title '97 %% target (P = 2 squares)'
""" % (max(1100, 80 * len(records)), quote(out),
       quote("shardmm and ScaLAPACK p?gemm side by side (%s): %% of the P-core ceiling; label: time ratio" % dtype),
       quote(dat), auto, scalapack)


def main():
    src, out = sys.argv[1], sys.argv[2]
    bench, suite = load(src)
    if not bench and not suite:
        sys.exit("scripts/report/plot: no bench or suite records in %s" % src)
    name = os.path.basename(src)
    with tempfile.TemporaryDirectory() as tmp:
        script, wrote = "", []
        if suite:
            wrote.append(os.path.join(out, "suite.png"))
            script += suite_plot(suite, tmp, wrote[-1])
        if bench:
            gflops = series_by_panel(bench, lambda r: r.get("gflops"))
            words = series_by_panel(bench, words_over_lb)
            if gflops:
                wrote.append(os.path.join(out, "gflops.png"))
                script += grid_plot(gflops, tmp, wrote[-1], "GFLOP/s against ranks P (%s)" % name,
                                    "GFLOP/s", "[0:*]")
            if words:
                wrote.append(os.path.join(out, "words_lb.png"))
                script += grid_plot(words, tmp, wrote[-1],
                                    "words the algorithm moved to the busiest rank / lower bound (%s)" % name,
                                    "words / lower bound", "[0:*]")
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
    print("wrote " + " ".join(wrote))


if __name__ == "__main__":
    main()
