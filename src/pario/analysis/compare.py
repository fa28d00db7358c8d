"""Two runs point by point: the ratio of their best rates and a verdict.

Points match when every parameter that makes them what they are matches:
the plan point's parameters (test, ranks, block, size, layout, files, api,
backend options, stripe targets, loaders, fsync/evict flags ... whatever
the study kind's planner put there), taken generically so a parameter
added later separates points too; points left over match again without
the test's name and group, so a grouped run can be held against an
ungrouped one.  Row labels name every parameter that varies among the
points, so no two rows read alike.

The verdict uses the noise each run's iterations show: a change counts
only when the two runs' trials do not overlap.  B is "faster" when its
slowest trial beats A's fastest by more than NOISE_FLOOR, "slower" when its
fastest trial falls below A's slowest by more than NOISE_FLOOR, and "same
within noise" otherwise.  On a shared or noisy machine wide trials make
"same" the honest answer; more iterations narrow it."""

from dataclasses import dataclass


NOISE_FLOOR = 0.05

FASTER, SLOWER, SAME = "faster", "slower", "same within noise"


@dataclass
class ComparedPoint:
    key: tuple          # what matched
    label: str
    a: object           # MeasuredPoint of run A
    b: object           # MeasuredPoint of run B
    ratio: float        # best of B / best of A
    band: float         # the noise band used
    verdict: str


# Plan parameters that do not make a point a different test: its title,
# how many trials it ran, and its list of phases (each phase is a point).
NOT_IDENTITY = ("title", "iterations", "phases")
# Parameters every row label shows already (test and phase, then "4 ranks,
# 64 KiB": the ranks and the series, which is the block size).
IN_LABEL = ("test", "phase", "ranks", "block")


def identity(p):
    """Every parameter that makes a point what it is: the plan point's
    parameters as the planner made them (the same for a measured run and
    its prediction), whatever the study kind; a point stored without them
    falls back to what its result document says."""
    plan = {k: v for k, v in p.plan.items() if k not in NOT_IDENTITY}
    if not plan:
        prm = p.params()
        plan = {"block": prm.get("block_bytes"), "size": prm.get("size_bytes"),
                "layout": prm.get("layout"), "files": prm.get("files"), "api": prm.get("api"),
                "group": prm.get("group", 0)}
    return {**plan, "test": p.test, "phase": p.phase, "ranks": p.ranks}


def _frozen(value):
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return value


def _full_key(p):
    return _frozen(identity(p))


def _loose_key(p):
    """Without the test's name and group: a grouped run against an ungrouped one."""
    return _frozen({k: v for k, v in identity(p).items() if k not in ("test", "group")})


def _shown(value):
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value)) or "-"
    return "-" if value in ("", None) else str(value)


def labeller(points):
    """A function naming a point by its test, phase, ranks and series plus
    every other parameter whose value differs among `points`, so no two
    different points read alike."""
    ids = [identity(p) for p in points]
    keys = list(dict.fromkeys(k for i in ids for k in i))
    varying = [k for k in keys if k not in IN_LABEL
               and len({_frozen(i.get(k)) for i in ids}) > 1]

    def name(p):
        i = identity(p)
        extra = "".join(f", {k}={_shown(i.get(k))}" for k in varying)
        return f"{p.test} {p.phase}, {p.label}{extra}".strip()
    return name


def verdict(a_rates, b_rates):
    """(ratio of bests B/A, noise band, verdict).  The band is the wider
    relative range (best - worst) / best of the two runs' trials."""
    a_best, b_best = max(a_rates), max(b_rates)
    a_worst, b_worst = min(a_rates), min(b_rates)
    band = max(NOISE_FLOOR, (a_best - a_worst) / a_best if a_best > 0 else 0,
               (b_best - b_worst) / b_best if b_best > 0 else 0)
    ratio = b_best / a_best if a_best > 0 else float("inf")
    if b_worst > a_best * (1 + NOISE_FLOOR):
        return ratio, band, FASTER
    if b_best * (1 + NOISE_FLOOR) < a_worst:
        return ratio, band, SLOWER
    return ratio, band, SAME


def match(points_a, points_b):
    """Pairs (a, b) of matching points, then the unmatched of A and of B."""
    pairs = []
    left_a, left_b = list(points_a), list(points_b)
    for keyf in (_full_key, _loose_key):
        index = {}
        for p in left_b:
            index.setdefault(keyf(p), []).append(p)
        still_a = []
        for p in left_a:
            candidates = index.get(keyf(p))
            if candidates:
                q = candidates.pop(0)
                pairs.append((p, q))
                left_b.remove(q)
            else:
                still_a.append(p)
        left_a = still_a
    return pairs, left_a, left_b


def compare(points_a, points_b):
    """ComparedPoint for every matched pair, in A's order; plus the
    labels of points only one run has."""
    pairs, only_a, only_b = match(points_a, points_b)
    order = {id(p): i for i, p in enumerate(points_a)}
    pairs.sort(key=lambda ab: order[id(ab[0])])
    _name = labeller(list(points_a) + list(points_b))
    out = []
    for a, b in pairs:
        ratio, band, v = verdict(a.rates, b.rates)
        out.append(ComparedPoint(_loose_key(a), _name(a), a, b, ratio, band, v))
    return out, [_name(p) for p in only_a], [_name(p) for p in only_b]


def regressions(compared, fail_below):
    """Points slower than the noise and below the ratio a site accepts."""
    return [c for c in compared if c.verdict == SLOWER and c.ratio < fail_below]


# A prediction counts as right when it lies within this fraction of the
# measured rate (issue 12: "within 25 %").
TOLERANCE = 0.25


@dataclass
class PredictedPoint:
    label: str
    measured: object     # MeasuredPoint of the measured run
    predicted: object    # MeasuredPoint of the predicted run
    ratio: float         # predicted / measured (best of each)
    within: bool         # |ratio - 1| <= TOLERANCE
    bound: str           # what the model says bounded the point


def against_prediction(measured, predicted):
    """Each measured point beside the model's prediction of it, in the
    measured run's order; plus the labels of points only one run has."""
    pairs, only_m, only_p = match(measured, predicted)
    order = {id(p): i for i, p in enumerate(measured)}
    pairs.sort(key=lambda ab: order[id(ab[0])])
    _name = labeller(list(measured) + list(predicted))
    out = []
    for m, p in pairs:
        ratio = p.best / m.best if m.best > 0 else float("inf")
        why = p.phase_doc().get("explanation") or {}
        out.append(PredictedPoint(_name(m), m, p, ratio, abs(ratio - 1) <= TOLERANCE,
                                  why.get("bound", "")))
    return out, [_name(p) for p in only_m], [_name(p) for p in only_p]
