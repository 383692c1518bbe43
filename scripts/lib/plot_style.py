"""Shared look of scripts/report/plot, plot-scaling and trace-summary: one fixed colour, point shape,
size and dash pattern per algorithm in every picture, so a series is recognised across pictures
and equal series stay visible on top of each other (hollow shapes drawn under small filled
ones, different dash patterns), and integer tick marks on rank axes."""
import math

# algorithm: (colour, gnuplot point type, point size, dash type, line width). Hollow, larger
# shapes and wider lines for some, drawn first; small filled shapes and thin solid lines for
# the others, drawn on top: where two series are equal, both stay visible (a filled point
# inside a hollow one, a thin line along a wide one).
ALGORITHMS = {
    "scalapack": ("#000000", 6, 2.6, 1, 3.0),   # black, hollow circle
    "ring":      ("#cc79a7", 12, 2.3, 4, 3.5),  # pink, hollow diamond
    "25d":       ("#56b4e9", 14, 2.2, 6, 3.5),  # sky blue, hollow pentagon
    "cannon":    ("#009e73", 8, 2.1, 3, 3.5),   # green, hollow triangle
    "summa":     ("#e69f00", 4, 1.9, 2, 4.0),   # orange, hollow square
    "local":     ("#8c564b", 1, 1.8, 7, 2.5),   # brown, plus
    "cores":     ("#7f7f7f", 2, 1.6, 2, 2.0),   # grey, cross
    "sharded":   ("#d55e00", 11, 1.1, 5, 1.5),  # vermillion, filled inverted triangle
    "auto":      ("#0072b2", 7, 1.0, 1, 1.5),   # blue, filled circle
}
UNKNOWN = ("#999999", 3, 1.6, 3, 2.0)  # an algorithm not in the map: grey star, dotted
# Series that are not algorithms (shapes, networks): distinct looks of the same kind, by index.
INDEXED = [("#0072b2", 7, 1.1, 1, 1.5), ("#e69f00", 4, 1.9, 2, 4.0), ("#009e73", 8, 2.1, 3, 3.0),
           ("#cc79a7", 12, 2.3, 4, 3.0), ("#d55e00", 11, 1.2, 5, 1.5), ("#56b4e9", 14, 2.2, 6, 3.0),
           ("#8c564b", 1, 1.8, 7, 2.5), ("#000000", 6, 2.6, 8, 2.0)]


def _style(look, lw=None):
    colour, pt, ps, dt, width = look
    return "lc rgb '%s' pt %d ps %g dt %d lw %g" % (colour, pt, ps, dt, width if lw is None else lw)


def algorithm_style(name, lw=None):
    """gnuplot style (lc pt ps dt lw) of algorithm NAME, the same in every picture."""
    return _style(ALGORITHMS.get(name, UNKNOWN), lw)


def algorithm_colour(name):
    return ALGORITHMS.get(name, UNKNOWN)[0]


def indexed_style(i, lw=None):
    return _style(INDEXED[i % len(INDEXED)], lw)


def algorithm_rank(name):
    """Sort key: the map's order (wide lines and hollow shapes first, small filled ones on top),
    unknown algorithms last."""
    order = list(ALGORITHMS)
    return (order.index(name) if name in ALGORITHMS else len(order), name)


def rank_axis(ranks, axis="x"):
    """gnuplot commands for a rank axis: tick marks at the rank counts present (integers only),
    log2 scale when they span more than a factor 8, a margin so edge points are not cut."""
    ranks = sorted(set(int(r) for r in ranks))
    lo, hi = ranks[0], ranks[-1]
    if len(ranks) > 12:  # too many for a label each: the powers of two in the range
        ticks = [2 ** e for e in range(math.ceil(math.log2(max(lo, 1))), int(math.log2(hi)) + 1)]
    else:
        ticks = ranks
    cmds = ["set %stics (%s)" % (axis, ", ".join('"%d" %d' % (t, t) for t in ticks))]
    if lo > 0 and hi / lo > 8:
        cmds += ["set logscale %s 2" % axis, "set %srange [%g:%g]" % (axis, lo / 1.4, hi * 1.4)]
    else:
        pad = max(0.5, (hi - lo) * 0.08)
        cmds += ["unset logscale %s" % axis, "set %srange [%g:%g]" % (axis, lo - pad, hi + pad)]
    return "\n".join(cmds)


def quote(text):
    """A gnuplot single-quoted string."""
    return "'" + str(text).replace("'", "''") + "'"
