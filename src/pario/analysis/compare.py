"""Two runs point by point: the ratio of their best values and a verdict.

Points match when they are the same point measuring the same thing: the
identity its study kind gives it (pario.studies: the plan point's
parameters, test, ranks, block, size, layout, api, backend options,
stripes, loaders ... whatever the planner put there, taken generically
so a parameter added later separates points too) and what it measured
("block write", "read", "T_T").  Points left over match again without the
test's name and group, so a grouped run can be held against an ungrouped
one.  The trials of one point (a kernel's rounds) arrive pooled
(pario.runs).

A row's label names the test, what was measured, and only the parameters
that tell apart the points of that test and measure ("2 ranks, block
1 MiB"): no two rows read alike, and nothing equal for all of them is
repeated.

The verdict asks how likely an unchanged point is to split its trials
between the runs as they split (pario.analysis.significance): an exact
rank test gives each point its chance p, and the points of the two runs
share one 5 % budget for false calls (Benjamini-Hochberg), so on an
unchanged system the chance that any point is called is at most 5 %.  A
point is "faster" or "slower" when its p passes that bar and its best
trials differ by more than NOISE_FLOOR; "same within noise" when its
trials could have passed and did not; "too few trials" when even every
trial of B beyond every trial of A could not pass (3 trials a side: a
chance of 2 / C(6, 3) = 10 %, never below 5 %; one trial: 100 %).  The
run as a whole is judged by the median ratio over its points with the
interval that holds the true median with 95 % whatever the ratios'
distribution.  Times (lower is better: BTIO's T_T, a probe's overheads)
are judged as speeds, 1/time.  The noise band shown is the wider relative
range of the two runs' trials.  Two predictions have no noise at all: any
difference is the model's, and equal values are "equal"."""

from dataclasses import dataclass

from .significance import ALPHA, discoveries, median_interval, rank_test, smallest_chance

NOISE_FLOOR = 0.05
# Two predictions closer than this (relative) are the same number.
EXACT = 1e-9

FASTER, SLOWER, SAME, EQUAL = "faster", "slower", "same within noise", "equal"
FEW = "too few trials"


@dataclass
class ComparedPoint:
    key: tuple          # what matched
    label: str
    a: object           # MeasuredPoint of run A
    b: object           # MeasuredPoint of run B
    ratio: float        # B over A as speeds: above 1, B is better
    band: object        # the noise band from the trials, or None (one trial, predictions)
    verdict: str
    chance: object = None   # the rank test's two-sided p, or None (predictions)


# Plan parameters that do not make a point a different test: its title,
# how many trials it ran, and its list of phases (each phase is a point).
NOT_IDENTITY = ("title", "iterations", "phases", "trial", "figure")


def identity(p):
    """What makes a point what it is: the identity its kind gave it
    (pario.runs), else the plan point's parameters, else what its result
    document says (a point stored before plans were kept)."""
    if p.identity:
        return p.identity
    plan = {k: v for k, v in p.plan.items() if k not in NOT_IDENTITY}
    if not plan:
        prm = p.params()
        plan = {"block": prm.get("block_bytes"), "size": prm.get("size_bytes"),
                "layout": prm.get("layout"), "files": prm.get("files"), "api": prm.get("api"),
                "group": prm.get("group", 0)}
    return {**plan, "test": p.test, "ranks": p.ranks}


def measure_of(p):
    """What a point measured: its kind's name for it, else its phase."""
    return p.measure or p.phase


def frozen(value):
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, frozen(v)) for k, v in value.items()))
    return value


def _full_key(p):
    return frozen(identity(p)), measure_of(p)


def _loose_key(p):
    """Without the test's name and group: a grouped run against an ungrouped one."""
    return frozen({k: v for k, v in identity(p).items() if k not in ("test", "group")}), measure_of(p)


def _shown(value):
    if isinstance(value, (list, tuple)):
        return " ".join(map(str, value)) or "-"
    return "-" if value in ("", None) else str(value)


def _part(key, value, params):
    """One parameter in a row label, as its kind's Param prints it."""
    if key == "ranks":
        return f"{value} rank{'s' if value != 1 else ''}"
    prm = params.get(key)
    text = _shown(value)
    if prm and value not in ("", None, [], ()):
        try:
            text = prm.fmt(value)
        except (TypeError, ValueError, KeyError):
            pass
    if prm is not None and not prm.named:
        return text
    return f"{prm.label if prm else key.replace('_', ' ')} {text}"


def labeller(points, params=None):
    """A function naming a point: its test (and its note), what it
    measured, then each parameter that differs between points of the same
    test and measure, as the point's kind names it (`MeasuredPoint.names`,
    else `params`: {key: figures.Param})."""
    params = params or {}
    ids = [identity(p) for p in points]
    groups = {}
    for p, i in zip(points, ids):
        groups.setdefault((p.test, measure_of(p)), []).append(i)
    keys = list(dict.fromkeys(k for i in ids for k in i))
    order = [k for k in dict.fromkeys(["ranks", *params, *(k for p in points for k in p.names), *keys])
             if k != "test" and k in keys]
    shown = {g: [k for k in order if len({frozen(i.get(k)) for i in members}) > 1]
             for g, members in groups.items()}

    def name(p):
        i = identity(p)
        parts = [" ".join(x for x in (p.test, measure_of(p)) if x)]
        parts += [_part(k, i.get(k), p.names or params)
                  for k in shown.get((p.test, measure_of(p)), []) if k in i]
        label = ", ".join(x for x in parts if x)
        return f"{label} ({p.note})" if p.note else label
    return name


def _speeds(values, better):
    """Values as speeds (higher is better): times become 1/time."""
    return [1 / v for v in values if v > 0] if better == "min" else list(values)


def ratio_of(a, b):
    """B over A as speeds, best trial of each: above 1, B is better."""
    sa, sb = _speeds(a.rates, a.better), _speeds(b.rates, b.better)
    a_best, b_best = max(sa, default=0), max(sb, default=0)
    return b_best / a_best if a_best > 0 else float("inf")


def _band(a, b):
    """The wider relative range (best - worst) / best of two runs' trials
    as speeds, at least NOISE_FLOOR; None when either has one trial."""
    if len(a) < 2 or len(b) < 2:
        return None
    return max(NOISE_FLOOR, *((max(x) - min(x)) / max(x) for x in (a, b) if max(x) > 0))


def _call(j, passed):
    """A measured point's verdict from its Judged numbers and whether its
    chance passed the bar shared by all points."""
    if smallest_chance(*j.trials) > ALPHA:
        return FEW
    if passed and j.side > 0 and j.ratio > 1 + NOISE_FLOOR:
        return FASTER
    if passed and j.side < 0 and j.ratio * (1 + NOISE_FLOOR) < 1:
        return SLOWER
    return SAME


@dataclass
class Judged:
    """One measured point's numbers before the verdict: the ratio of bests
    B/A as speeds, the noise band, the rank test's chance and side (+1:
    B's trials rank above A's), and how many trials each side had."""
    ratio: float
    band: object
    chance: float
    side: int
    trials: tuple


def judge(a_rates, b_rates, better="max"):
    """The Judged numbers of one measured point's trials in runs A and B."""
    a, b = _speeds(a_rates, better), _speeds(b_rates, better)
    a_best, b_best = max(a, default=0), max(b, default=0)
    ratio = b_best / a_best if a_best > 0 else float("inf")
    return Judged(ratio, _band(a, b), *rank_test(a, b), (len(a), len(b)))


def verdict(a_rates, b_rates, better="max", predicted=False, points=1):
    """(ratio of bests B/A as speeds, noise band or None, verdict, chance)
    of one point judged among `points` points that share the 5 % budget
    for false calls (the bar for one point alone: ALPHA / points)."""
    if predicted:
        a, b = _speeds(a_rates, better), _speeds(b_rates, better)
        a_best, b_best = max(a, default=0), max(b, default=0)
        ratio = b_best / a_best if a_best > 0 else float("inf")
        if abs(b_best - a_best) <= EXACT * max(a_best, b_best):
            return ratio, None, EQUAL, None
        return ratio, None, FASTER if b_best > a_best else SLOWER, None
    j = judge(a_rates, b_rates, better)
    return j.ratio, j.band, _call(j, j.chance <= ALPHA / points), j.chance


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


def compare(points_a, points_b, params=None, predicted=False):
    """ComparedPoint for every matched pair, in A's order; plus (test,
    label) of the points only one run has.  `predicted`: both runs are
    predictions (no noise)."""
    pairs, only_a, only_b = match(points_a, points_b)
    order = {id(p): i for i, p in enumerate(points_a)}
    pairs.sort(key=lambda ab: order[id(ab[0])])
    _name = labeller(list(points_a) + list(points_b), params)
    out, judged = [], []
    for a, b in pairs:
        # matched without the test's name: the row names B's test too
        label = _name(a) if a.test == b.test else f"{_name(a)} (B: {b.test})"
        if predicted:
            ratio, band, v, chance = verdict(a.rates, b.rates, a.better, predicted=True)
        else:
            j = judge(a.rates, b.rates, a.better)
            judged.append(j)
            ratio, band, v, chance = j.ratio, j.band, None, j.chance
        out.append(ComparedPoint(_loose_key(a), label, a, b, ratio, band, v, chance))
    if judged:
        # the points share one budget for false calls (Benjamini-Hochberg)
        for c, j, passed in zip(out, judged, discoveries([j.chance for j in judged])):
            c.verdict = _call(j, passed)
    return out, [(p.test, _name(p)) for p in only_a], [(p.test, _name(p)) for p in only_b]


def differing(points_a, points_b):
    """The parameters no point of A shares a value of with any point of
    B (their runs share no point: this says why), e.g. ["direct", "size"]."""
    ids_a, ids_b = [identity(p) for p in points_a], [identity(p) for p in points_b]
    keys = dict.fromkeys(k for i in ids_a + ids_b for k in i if k != "test")
    return [k for k in keys
            if not {frozen(i.get(k)) for i in ids_a} & {frozen(i.get(k)) for i in ids_b}]


@dataclass
class WholeRun:
    """The run as a whole: the median ratio B/A over its points and the
    interval that holds the true median with 95 % (None: too few points)."""
    points: int
    median: float
    low: object
    high: object
    verdict: str


def whole_run(compared):
    """The two runs judged over all their matched points: "slower" when
    the median's whole interval lies more than NOISE_FLOOR below 1,
    "faster" when above, "too few trials" (points) without an interval."""
    ratios = [c.ratio for c in compared if c.ratio not in (0, float("inf"))]
    median, low, high = median_interval(ratios)
    if low is None:
        v = FEW
    elif high * (1 + NOISE_FLOOR) < 1:
        v = SLOWER
    elif low > 1 + NOISE_FLOOR:
        v = FASTER
    else:
        v = SAME
    return WholeRun(len(ratios), median, low, high, v)


def regressions(compared, fail_below):
    """Points called slower (their chance past the shared bar) and below
    the ratio a site accepts."""
    return [c for c in compared if c.verdict == SLOWER and c.ratio < fail_below]


def run_regressed(whole, fail_below):
    """Whether the whole run's median lies below the ratio a site accepts
    with 95 %: the top of its interval is below it."""
    return whole.high is not None and whole.high < fail_below


# A prediction counts as right when it lies within this fraction of the
# measured rate (issue 12: "within 25 %").
TOLERANCE = 0.25


@dataclass
class PredictedPoint:
    label: str
    measured: object     # MeasuredPoint of the measured run
    predicted: object    # MeasuredPoint of the predicted run
    ratio: float         # predicted / measured (best of each, as speeds)
    within: bool         # |ratio - 1| <= TOLERANCE
    bound: str           # what the model says bounded the point


def against_prediction(measured, predicted, params=None):
    """Each measured point beside the model's prediction of it, in the
    measured run's order; plus (test, label) of points only one run has."""
    pairs, only_m, only_p = match(measured, predicted)
    order = {id(p): i for i, p in enumerate(measured)}
    pairs.sort(key=lambda ab: order[id(ab[0])])
    _name = labeller(list(measured) + list(predicted), params)
    out = []
    for m, p in pairs:
        ratio = ratio_of(m, p)
        why = p.phase_doc().get("explanation") or {}
        out.append(PredictedPoint(_name(m), m, p, ratio, abs(ratio - 1) <= TOLERANCE,
                                  why.get("bound", "")))
    return out, [(p.test, _name(p)) for p in only_m], [(p.test, _name(p)) for p in only_p]
