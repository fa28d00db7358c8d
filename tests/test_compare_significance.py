"""`pario compare`'s verdicts are sound over many points (tester report 7,
item 8): the rank test's chances are exact, the points share one 5 %
budget so two samples of one distribution are flagged anywhere in a run
at most about 1 time in 20 (the old rule, "every trial of B beyond every
trial of A", flagged about 1 point in 10), a real slowdown is still
called, and the whole run's median ratio fails --fail-below only when its
interval lies below the bar."""

import itertools
import random
from math import comb

import pytest

from pario.analysis.compare import FEW, SAME, SLOWER, compare, regressions, run_regressed, whole_run
from pario.analysis.measured import MeasuredPoint
from pario.analysis.significance import (discoveries, median_interval, rank_test, smallest_chance,
                                         trials_needed)


def _brute_chance(a, b):
    """The two-sided chance by dealing the pooled trials every way."""
    pooled = list(a) + list(b)
    n = len(pooled)
    rank = {}
    for v in sorted(set(pooled)):
        below = sum(1 for x in pooled if x < v)
        same = sum(1 for x in pooled if x == v)
        rank[v] = below + (same + 1) / 2
    observed = sum(rank[v] for v in b)
    sums = [sum(rank[pooled[i]] for i in pick) for pick in itertools.combinations(range(n), len(b))]
    low = sum(1 for s in sums if s <= observed + 1e-9) / len(sums)
    high = sum(1 for s in sums if s >= observed - 1e-9) / len(sums)
    return min(1.0, 2 * min(low, high))


def test_rank_test_is_exact_with_and_without_ties():
    rng = random.Random(7)
    for _ in range(60):
        na, nb = rng.randint(1, 6), rng.randint(1, 6)
        a = [rng.choice([1, 2, 3, 4, 5, 6]) for _ in range(na)]    # many ties
        b = [rng.choice([1, 2, 3, 4, 5, 6, 7]) for _ in range(nb)]
        assert rank_test(a, b)[0] == pytest.approx(_brute_chance(a, b)), (a, b)
        c = [rng.random() for _ in range(na)]
        d = [rng.random() + 0.3 for _ in range(nb)]
        assert rank_test(c, d)[0] == pytest.approx(_brute_chance(c, d)), (c, d)
    assert rank_test([1, 2, 3], [4, 5, 6]) == (pytest.approx(0.1), 1)
    assert rank_test([4, 5, 6], [1, 2, 3]) == (pytest.approx(0.1), -1)
    assert rank_test([1, 2], [1, 2]) == (1.0, 0)
    assert rank_test([], [1]) == (1.0, 0)


def test_how_many_trials_a_point_needs():
    assert smallest_chance(3, 3) == pytest.approx(2 / comb(6, 3))      # the 10 % of the report
    assert smallest_chance(1, 1) == 1.0 and smallest_chance(1, 5) == pytest.approx(1 / 3)
    assert trials_needed(1) == 4          # 2/70 < 5 %
    assert trials_needed(81) == 7         # 2/3432 < 5 % / 81; 2/924 is not
    assert smallest_chance(6, 6) > 0.05 / 81 > smallest_chance(7, 7)


def test_benjamini_hochberg_shares_the_budget():
    # 5 trials a side, every trial apart: chance 2/252 = 0.8 %, above 5 %/8 alone...
    assert discoveries([2 / 252] + [0.5] * 7) == [False] + [False] * 7
    # ...but four such points among eight pass the bar 4 x 5 % / 8
    assert discoveries([2 / 252] * 4 + [0.5] * 4) == [True] * 4 + [False] * 4
    assert discoveries([]) == []


def test_median_interval_is_distribution_free():
    assert median_interval([1, 2, 3, 4, 5]) == (3, None, None)     # 5 values: no 95 % interval
    assert median_interval([1, 2, 3, 4, 5, 6]) == (3.5, 1, 6)
    assert median_interval([]) == (None, None, None)
    # coverage: the interval holds the true median at least 95 % of the time
    rng = random.Random(3)
    held = sum(lo <= 1.0 <= hi for lo, hi in (median_interval([rng.lognormvariate(0, 0.3)
                                                               for _ in range(40)])[1:]
                                              for _ in range(400)))
    assert held >= 0.93 * 400


def _point(rates, block):
    p = MeasuredPoint(phase="read", ranks=1, series="", rates=rates, doc={"params": {}}, test="t",
                      identity={"test": "t", "ranks": 1, "block": block}, measure="read")
    return p


def _runs(rng, points, trials, slow=1.0):
    """Two runs of `points` points, each point's trials from one lognormal
    around its own rate (10 % spread); B's rates multiplied by `slow`."""
    rates = [rng.uniform(100, 2000) for _ in range(points)]
    a = [_point([r * rng.lognormvariate(0, 0.1) for _ in range(trials)], i) for i, r in enumerate(rates)]
    b = [_point([slow * r * rng.lognormvariate(0, 0.1) for _ in range(trials)], i)
         for i, r in enumerate(rates)]
    return compare(a, b)[0]


def _old_rule_flags(got):
    """The rule before: every trial of B beyond every trial of A by 5 %."""
    return sum(1 for c in got if max(c.b.rates) * 1.05 < min(c.a.rates)
               or min(c.b.rates) > max(c.a.rates) * 1.05)


def test_unchanged_runs_are_flagged_rarely_and_a_slowdown_is_caught():
    rng = random.Random(12)
    # 3 trials a side, 81 points: no point can be called, the old rule flagged some
    flagged_before, failed = 0, 0
    for _ in range(40):
        got = _runs(rng, 81, 3)
        assert all(c.verdict == FEW for c in got)
        flagged_before += _old_rule_flags(got)
        failed += bool(regressions(got, 0.9)) or run_regressed(whole_run(got), 0.9)
    assert failed == 0 and flagged_before > 0
    # 7 trials a side, 30 points, 60 pairs of unchanged runs: any false call in at most ~5 %
    with_a_call = sum(any(c.verdict != SAME for c in _runs(rng, 30, 7)) for _ in range(60))
    assert with_a_call <= 6
    # a 30 % slowdown of every point: called point by point with 7 trials ...
    got = _runs(rng, 30, 7, slow=0.7)
    assert sum(c.verdict == SLOWER for c in got) >= 25 and len(regressions(got, 0.9)) >= 25
    # ... and with 3 trials, by the whole run: its median ratio's interval lies below 0.9
    got = _runs(rng, 81, 3, slow=0.8)
    whole = whole_run(got)
    assert whole.verdict == SLOWER and whole.high < 0.9 and run_regressed(whole, 0.9)
    assert not run_regressed(whole, 0.7)
