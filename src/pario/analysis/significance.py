"""How sure a comparison of two runs can be: an exact rank test per point,
a false-discovery correction over the points, and the median ratio of a
whole run with a distribution-free interval.

Why: "every trial of B beyond every trial of A" is a test whose chance of
a false call with 3 trials a side is 2 / C(6, 3) = 10 % per point, so 81
points of two identical runs made about 8 calls and --fail-below failed
an unchanged system (tester report 7, item 8).  Here the chance is
computed, not assumed, and the many points of a run share one 5 % budget:
when nothing changed, the chance that any point is called is at most
ALPHA (Benjamini-Hochberg controls the false-discovery rate, which equals
that chance when every point is unchanged).

What it cannot see: a whole run shifted by the machine (another job, a
warmer cache, minutes of drift between runs) moves every trial of B
alike; trials within one run do not show that, so neither a point's test
nor the whole run's interval tells it from a change of code."""

from math import comb

# The chance of a false call a comparison accepts: per run, over all its points.
ALPHA = 0.05


def _midranks(values):
    """Ranks 1..n of values, ties sharing their mean rank, doubled so
    that every rank is a whole number."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = i + j + 2     # 2 x the mean of ranks i+1 .. j+1
        i = j + 1
    return ranks


def _subset_sums(scores, size):
    """{sum: number of subsets of `size` scores with that sum}."""
    ways = [dict() for _ in range(size + 1)]
    ways[0][0] = 1
    for s in scores:
        for k in range(min(size, len(scores)) - 1, -1, -1):
            for total, n in ways[k].items():
                ways[k + 1][total + s] = ways[k + 1].get(total + s, 0) + n
    return ways[size]


def rank_test(a, b):
    """(chance, side) for trials `a` of run A and `b` of run B of one
    point.  chance: the two-sided chance that trials of an unchanged point
    split between the runs at least as unevenly as these did, the share of
    all C(len a + len b, len b) ways to deal the pooled trials whose rank
    sum for B lies as far out as the one observed (exact; ties at their
    mean rank); 1.0 when either side has no trial.  side: +1 when B's
    trials rank above A's on average, -1 below, 0 level."""
    if not a or not b:
        return 1.0, 0
    ranks = _midranks(list(a) + list(b))
    observed = sum(ranks[len(a):])
    level = len(b) * (len(a) + len(b) + 1)     # B's rank sum (doubled) when level with A
    sums = _subset_sums(ranks, len(b))
    total = comb(len(a) + len(b), len(b))
    low = sum(n for s, n in sums.items() if s <= observed) / total
    high = sum(n for s, n in sums.items() if s >= observed) / total
    return min(1.0, 2 * min(low, high)), (observed > level) - (observed < level)


def smallest_chance(na, nb):
    """The smallest chance rank_test can give na against nb trials:
    every trial of one side beyond every trial of the other."""
    if na < 1 or nb < 1:
        return 1.0
    return min(1.0, 2 / comb(na + nb, nb))


def trials_needed(points, alpha=ALPHA):
    """The fewest trials a side with which one point among `points` can
    be called on its own (its smallest chance below alpha / points)."""
    n = 1
    while smallest_chance(n, n) > alpha / max(points, 1):
        n += 1
    return n


def discoveries(chances, alpha=ALPHA):
    """Benjamini-Hochberg: which of the chances (one per point) are
    calls, sharing `alpha` over all of them.  A list of booleans in the
    chances' order."""
    m = len(chances)
    order = sorted(range(m), key=lambda i: chances[i])
    passed = 0
    for rank, i in enumerate(order, 1):
        if chances[i] <= alpha * rank / m:
            passed = rank
    called = set(order[:passed])
    return [i in called for i in range(m)]


def median_interval(values, confidence=1 - ALPHA):
    """(median, low, high) of values, the interval holding the true median
    with at least `confidence` whatever the values' distribution (the
    order statistics the binomial of n halves gives); low and high are
    None when there are too few values for that confidence (fewer than 6
    at 95 %)."""
    xs = sorted(values)
    n = len(xs)
    if not n:
        return None, None, None
    mid = (xs[(n - 1) // 2] + xs[n // 2]) / 2
    # the largest k with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2:
    # the interval [x_(k), x_(n+1-k)] (1-based) then holds the median
    tail, k, below = (1 - confidence) / 2, 0, 0.0
    while k < n // 2:
        below_next = below + comb(n, k) / 2 ** n
        if below_next > tail:
            break
        below, k = below_next, k + 1
    if k == 0:
        return mid, None, None
    return mid, xs[k - 1], xs[n - k]
