"""`pario compare RUN_A RUN_B [--fail-below R]`: matching points side by
side with the ratio of their best rates and a verdict from the noise the
iterations show (pario.analysis.compare).  With --fail-below, a point
slower than the noise and below R x run A makes the exit code 1, so a
site's CI can catch a regression."""

import sys

from .analysis.compare import SAME, SLOWER, compare, regressions
from .errors import UsageError
from .runs import measured_points


def compare_command(store, run_a, run_b, fail_below=None, out=sys.stdout):
    ra, kind_a, pa = measured_points(store, run_a)
    rb, kind_b, pb = measured_points(store, run_b)
    if not pa:
        raise UsageError(f"run {run_a} has no measured rates to compare: see 'pario show {run_a}'")
    if not pb:
        raise UsageError(f"run {run_b} has no measured rates to compare: see 'pario show {run_b}'")
    got, only_a, only_b = compare(pa, pb)
    if not got:
        raise UsageError(f"runs {run_a} and {run_b} share no point (test, phase, ranks, block, "
                         "size): compare runs of the same experiment")
    print(f"run {run_a} ({ra['preset']}, {ra['started_utc']}, {ra['dir']}) against "
          f"run {run_b} ({rb['preset']}, {rb['started_utc']}, {rb['dir']}): "
          "best MiB/s of each, ratio B/A", file=out)
    w = max(len(c.label) for c in got)
    print(f"{'point':<{w}}  {'A':>10}  {'B':>10}  {'B/A':>6}  {'noise':>6}  verdict", file=out)
    for c in got:
        print(f"{c.label:<{w}}  {c.a.best:>10.1f}  {c.b.best:>10.1f}  {c.ratio:>6.2f}  "
              f"{'±' + format(100 * c.band, '.0f') + '%':>6}  {c.verdict}", file=out)
    counts = {v: sum(1 for c in got if c.verdict == v) for v in ("faster", SLOWER, SAME)}
    print(f"{len(got)} matched points: {counts['faster']} faster, {counts[SLOWER]} slower, "
          f"{counts[SAME]} {SAME}", file=out)
    if only_a:
        print(f"only in run {run_a}: {'; '.join(only_a)}", file=out)
    if only_b:
        print(f"only in run {run_b}: {'; '.join(only_b)}", file=out)
    if fail_below is not None:
        bad = regressions(got, fail_below)
        if bad:
            print(f"regression: {len(bad)} point(s) slower than {fail_below:g} x run {run_a}: "
                  + "; ".join(f"{c.label} ({c.ratio:.2f})" for c in bad), file=out)
            return 1
        print(f"no point below {fail_below:g} x run {run_a} beyond the noise", file=out)
    return 0
