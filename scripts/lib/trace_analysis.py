"""Reading a shardmm trace (Chrome trace-event JSON, one pid per rank; docs/PROFILING.md).

load() checks the file and returns the ranks' span trees; summarize() computes per rank and
per phase totals, load imbalance, communication exposed versus hidden behind local GEMMs and
the longest waits with the rank each waited for. Standard library only."""
import collections
import json
import re

BLOCKING = {"comm", "wait"}  # span categories in which a rank waits for others (outermost)


class TraceError(Exception):
    """The file is not a well-formed shardmm trace; the message says where."""


class Span:
    __slots__ = ("name", "cat", "ts", "end", "args", "children", "parent", "pid")

    def __init__(self, e):
        self.name, self.cat, self.pid = e["name"], e.get("cat", ""), e["pid"]
        self.ts, self.end = float(e["ts"]), float(e["ts"]) + float(e["dur"])
        self.args, self.children, self.parent = e.get("args", {}), [], None

    @property
    def dur(self):
        return self.end - self.ts

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()


class Trace:
    def __init__(self):
        self.names = {}                           # pid -> track name (process_name)
        self.roots = collections.defaultdict(list)  # pid -> top-level spans, in time order
        self.flights = collections.defaultdict(list)  # pid -> (name, start, end, args)
        self.counters = collections.defaultdict(list)  # pid -> (name, ts, value)

    @property
    def ranks(self):
        return sorted(set(self.roots) | set(self.names))


def _number(e, key, where):
    v = e.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise TraceError("%s: '%s' is not a number" % (where, key))
    return v


def _nest(spans, pid):
    """Top-level spans of one track with children attached; TraceError unless they nest."""
    spans.sort(key=lambda s: (s.ts, -s.dur))
    roots, stack = [], []
    for s in spans:
        while stack and s.ts >= stack[-1].end:
            stack.pop()
        if stack:
            if s.end > stack[-1].end:
                raise TraceError("rank %s: span '%s' [%.3f, %.3f] us overlaps '%s' [%.3f, %.3f] us "
                                 "without nesting in it" % (pid, s.name, s.ts, s.end, stack[-1].name,
                                                            stack[-1].ts, stack[-1].end))
            s.parent = stack[-1]
            stack[-1].children.append(s)
        else:
            roots.append(s)
        stack.append(s)
    return roots


def load(path):
    """The trace in PATH; TraceError when it does not parse or its spans do not nest."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        raise TraceError("%s: %s" % (path, e))
    events = data.get("traceEvents") if isinstance(data, dict) else None
    if not isinstance(events, list):
        raise TraceError("%s: no \"traceEvents\" list" % path)
    t = Trace()
    spans, opened = collections.defaultdict(list), {}
    for i, e in enumerate(events):
        where = "%s: event %d" % (path, i)
        if not isinstance(e, dict) or "ph" not in e or "pid" not in e:
            raise TraceError("%s: not an event with \"ph\" and \"pid\"" % where)
        ph, pid = e["ph"], e["pid"]
        if ph == "M":
            if e.get("name") == "process_name":
                t.names[pid] = e.get("args", {}).get("name", str(pid))
            continue
        ts = _number(e, "ts", where)
        if ph == "X":
            if _number(e, "dur", where) < 0:
                raise TraceError("%s: negative duration" % where)
            spans[(pid, e.get("tid", 0))].append(Span(e))
        elif ph == "C":
            for k, v in e.get("args", {}).items():
                t.counters[pid].append((k, ts, v))
        elif ph == "b":
            opened[(pid, e.get("id"))] = e
        elif ph == "e":
            b = opened.pop((pid, e.get("id")), None)
            if b is None:
                raise TraceError("%s: end of flight %s that never began" % (where, e.get("id")))
            t.flights[pid].append((b["name"], float(b["ts"]), float(ts), b.get("args", {})))
        else:
            raise TraceError("%s: unexpected phase '%s'" % (where, ph))
    if opened:
        raise TraceError("%s: %d flights never end" % (path, len(opened)))
    for (pid, _tid), ss in spans.items():
        t.roots[pid].extend(_nest(ss, pid))
    for pid in t.roots:
        t.roots[pid].sort(key=lambda s: s.ts)
    return t


def check(t, ranks=None):
    """Problems with a loaded trace (empty when fine): every rank 0..ranks-1 has a named track
    with spans, and nothing else does."""
    problems = []
    want = range(ranks) if ranks else t.ranks
    for r in want:
        if r not in t.names:
            problems.append("rank %d has no track name (process_name)" % r)
        if not t.roots.get(r):
            problems.append("rank %d has no spans" % r)
    if ranks:
        extra = [p for p in t.ranks if p not in range(ranks)]
        if extra:
            problems.append("tracks of ranks outside 0..%d: %s" % (ranks - 1, extra))
    return problems


def outermost(span, cats):
    """Spans under SPAN (itself included) of categories CATS, not inside another such one."""
    if span.cat in cats:
        return [span]
    return [s for c in span.children for s in outermost(c, cats)]


def _union(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def _overlap(a, b):
    """Length of the intersection of two sorted disjoint interval lists."""
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0.0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def members(label):
    """World ranks of a communicator label ("ranks 0-3", "ranks 0,2"); None when shortened."""
    m = re.fullmatch(r"ranks (\d+)-(\d+)", label or "")
    if m:
        return list(range(int(m.group(1)), int(m.group(2)) + 1))
    m = re.fullmatch(r"ranks ([\d,]+)", label or "")
    return [int(x) for x in m.group(1).split(",")] if m else None


def _waited_for(t, span, calls):
    """Who SPAN (a wait) waited for: the listed peers, or the member of its communicator that
    entered the same collective last (matched by its order on that communicator)."""
    a = span.args
    if a.get("peers"):
        return "rank" + ("s " if "," in a["peers"] else " ") + a["peers"]
    group = members(a.get("comm"))
    if not group:
        return ""
    key = (span.name, a.get("comm"), a.get("on"))

    def same(pid):
        return [s for root in calls.get(pid, []) for s in root.walk()
                if (s.name, s.args.get("comm"), s.args.get("on")) == key]
    mine = same(span.pid)
    k = next((i for i, s in enumerate(mine) if s is span), None)
    last, when = None, span.ts
    for r in group:
        theirs = same(r)
        if r != span.pid and k is not None and k < len(theirs) and theirs[k].ts > when:
            last, when = r, theirs[k].ts
    return "rank %d (arrived %.3f ms later)" % (last, (when - span.ts) / 1e3) if last is not None else ""


def _step(span):
    """The algorithm step SPAN belongs to (its nearest ancestor's "step"), or None."""
    while span is not None and "step" not in span.args:
        span = span.parent
    return span.args["step"] if span is not None else None


def select_calls(t, which=None):
    """{pid: [top-level spans]} of call index WHICH (Python index into each rank's calls), or all."""
    if which is None:
        return {p: list(r) for p, r in t.roots.items()}
    out = {}
    for p, r in t.roots.items():
        try:
            out[p] = [r[which]]
        except IndexError:
            out[p] = []
    return out


def summarize(t, which=None, top=5):
    """Totals per rank (seconds), imbalance, exposed/hidden communication and longest waits."""
    calls = select_calls(t, which)
    per_rank, phases = {}, collections.OrderedDict()
    waits = []
    for pid, roots in sorted(calls.items()):
        row = collections.OrderedDict(calls=len(roots), total=0.0)
        blas, blocked = [], []
        for root in roots:
            row["total"] += root.dur / 1e6
            for c in root.children:
                if c.cat in ("phase", "call"):
                    phases.setdefault(c.name, None)
                    row[c.name] = row.get(c.name, 0.0) + c.dur / 1e6
            blas += [[s.ts, s.end] for s in root.walk() if s.cat == "blas"]
            for s in outermost(root, BLOCKING):
                blocked.append([s.ts, s.end])
                if s.cat == "wait" or s.args.get("op"):
                    waits.append(s)
        windows = [[r.ts, r.end] for r in roots]
        flights = _union([[a, b] for (_n, a, b, _x) in t.flights.get(pid, [])
                          if any(w[0] <= a <= w[1] for w in windows)])
        blas_u = _union(blas)
        row["compute"] = sum(b - a for a, b in blas_u) / 1e6
        row["exposed_comm"] = sum(b - a for a, b in _union(blocked)) / 1e6
        row["in_flight"] = sum(b - a for a, b in flights) / 1e6
        row["hidden_comm"] = _overlap(flights, blas_u) / 1e6
        per_rank[pid] = row
    keys = ["total"] + list(phases) + ["compute", "exposed_comm", "hidden_comm"]
    imbalance = {}
    for k in keys:
        vals = [r.get(k, 0.0) for r in per_rank.values()]
        mean = sum(vals) / len(vals) if vals else 0
        imbalance[k] = max(vals) / mean if mean > 0 else 1.0
    waits.sort(key=lambda s: -s.dur)
    longest = [dict(rank=s.pid, name=s.name, seconds=s.dur / 1e6, step=_step(s),
                    on=s.args.get("on", ""), waited_for=_waited_for(t, s, calls))
               for s in waits[:top]]
    return dict(ranks=per_rank, phases=list(phases), imbalance=imbalance, longest_waits=longest)


def describe_call(span):
    a = span.args
    shape = "%sx%sx%s" % (a["m"], a["n"], a["k"]) if "m" in a else ""
    parts = [span.name, shape, a.get("dtype", ""), a.get("algorithm", ""),
             ("on " + a["grid"]) if a.get("grid") else ""]
    return " ".join(p for p in parts if p)
