"""Two runs point by point: the ratio of their best rates and a verdict.

Points match on what was measured (test, phase, ranks, block, size,
layout, files, api); points left over match again without the test's name
and group, so a grouped run can be held against an ungrouped one.

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


def _full_key(p):
    prm = p.params()
    return (p.test, p.phase, p.ranks, prm.get("block_bytes"),
            prm.get("size_bytes"), prm.get("layout"), prm.get("files"), prm.get("api"),
            prm.get("group", 0))


def _loose_key(p):
    k = _full_key(p)
    return k[1:8]


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
    out = []
    for a, b in pairs:
        ratio, band, v = verdict(a.rates, b.rates)
        out.append(ComparedPoint(_loose_key(a), _name(a), a, b, ratio, band, v))
    return out, [_name(p) for p in only_a], [_name(p) for p in only_b]


def _name(p):
    return f"{p.test} {p.phase}, {p.label}".strip()


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
    out = []
    for m, p in pairs:
        ratio = p.best / m.best if m.best > 0 else float("inf")
        why = p.phase_doc().get("explanation") or {}
        out.append(PredictedPoint(_name(m), m, p, ratio, abs(ratio - 1) <= TOLERANCE,
                                  why.get("bound", "")))
    return out, [_name(p) for p in only_m], [_name(p) for p in only_p]
