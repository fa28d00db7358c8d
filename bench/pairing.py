"""Two tools compared in short paired turns, and what the pairs can show.

Why not one long run per tool: on a virtual disk shared with other work the
device's rate drifts (the host's cache of the disk, the other vCPU's load)
over seconds to minutes.  When each tool takes one long turn, whatever the
drift does during that turn lands on that tool alone and reads as a
difference between the tools.  Short turns of equal length (the same bytes
for both tools) in ABBA order (A B, B A, A B, ...) put the two turns of a
pair seconds apart and give each tool the first place as often as the
second, so a steady drift adds to A in half the pairs and to B in the
other half.  Each pair gives one ratio A/B; the row's ratio is the median
of those ratios, printed with a distribution-free 95 % interval for that
median (order statistics of the binomial, no assumption about how the
ratios spread) and their range.  The same pairing run with one tool on
both sides (A = B, `control` rows) must give 1.00 inside its interval:
that shows the method itself favours neither place.
"""

import math
import statistics


def abba(pairs):
    """Which side goes first in each pair: A B, B A, A B, ..."""
    return [("a", "b") if k % 2 == 0 else ("b", "a") for k in range(pairs)]


def median_interval(values, confidence=0.95):
    """(low, high, coverage) for the median of `values`: the k-th smallest
    and k-th largest value, k as large as keeps the chance that the true
    median lies outside at or below 1 - confidence (each order statistic
    falls below the median with the Binomial(n, 1/2) law).  None when there
    are too few values for that confidence (fewer than 6 at 95 %)."""
    xs = sorted(values)
    n = len(xs)
    tail, k = 0.0, 0  # tail = P(Binomial(n, 1/2) <= k - 1)
    while k < n // 2:
        nxt = tail + math.comb(n, k) / 2 ** n
        if 2 * nxt > 1 - confidence:
            break
        tail, k = nxt, k + 1
    if k == 0:
        return None
    return xs[k - 1], xs[n - k], 1 - 2 * tail


def run_pairs(turn_a, turn_b, pairs):
    """Run `pairs` pairs of turns in ABBA order; [(a, b)] per pair."""
    out = []
    for order in abba(pairs):
        got = {}
        for side in order:
            got[side] = (turn_a if side == "a" else turn_b)()
        out.append((got["a"], got["b"]))
    return out


class PairedTable:
    """Prints one row per comparison: the two tools' median values, the
    median of the per-pair ratios A/B, its 95 % interval, the range of the
    ratios, and in how many pairs A was at least B."""

    def __init__(self, title, unit, side_names, pairs):
        self.names, self.pairs = side_names, pairs
        print(f"\n{title}; {pairs} pairs of turns (ABBA order), {unit}; ratio = median over pairs "
              f"of {side_names[0]} / {side_names[1]} with its 95 % interval (order statistics) "
              f"and range")
        print(f"{'case':<28}" + "".join(f"{t:>16}" for t in side_names)
              + f"{'ratio':>8}{'95% interval':>14}{'range':>12}{'A>=B':>8}", flush=True)

    def row(self, label, turn_a, turn_b):
        values = run_pairs(turn_a, turn_b, self.pairs)
        self.print_row(label, values)
        return values

    @staticmethod
    def format_row(label, values):
        a = statistics.median(v[0] for v in values)
        b = statistics.median(v[1] for v in values)
        ratios = [x / y for x, y in values if y > 0]
        if not ratios:
            return f"{label:<28}{a:>16.1f}{b:>16.1f}{'-':>8}"
        mid = statistics.median(ratios)
        ci = median_interval(ratios)
        interval = f"{ci[0]:.2f}-{ci[1]:.2f}" if ci else "n<6"
        span = f"{min(ratios):.2f}-{max(ratios):.2f}"
        wins = f"{sum(r >= 1 for r in ratios)}/{len(ratios)}"
        return f"{label:<28}{a:>16.1f}{b:>16.1f}{mid:>8.2f}{interval:>14}{span:>12}{wins:>8}"

    def print_row(self, label, values):
        print(self.format_row(label, values), flush=True)
