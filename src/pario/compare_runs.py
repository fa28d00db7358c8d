"""`pario compare RUN_A RUN_B [--fail-below R]`: matching points side by
side with the ratio of their best rates and a verdict from the noise the
iterations show (pario.analysis.compare).  With --fail-below, a point
slower than the noise and below R x run A makes the exit code 1, so a
site's CI can catch a regression.

A measured run against a run `pario model` predicted (either order) is a
different table: per point the measured rate, the predicted one, their
ratio, whether it lies within the model's tolerance, and the resource the
model says bounded the point; every heading says which side is predicted."""

import sys

from .analysis.compare import SAME, SLOWER, TOLERANCE, against_prediction, compare, regressions
from .errors import UsageError
from .runs import measured_points


def is_predicted(run):
    return run.get("launcher") == "model"


def prediction_table(store, run_a, run_b):
    """(caption, head, rows, summary lines) of a measured run against a
    predicted run of the same experiment (the two ids in either order),
    for the terminal and the HTML report alike."""
    ra, rb = store.run(run_a), store.run(run_b)
    if is_predicted(ra) == is_predicted(rb):
        raise UsageError(f"runs {run_a} and {run_b} are both "
                         f"{'predicted' if is_predicted(ra) else 'measured'}: give one measured run "
                         "and one run of 'pario model'")
    (m_id, m_run), (p_id, p_run) = sorted(((run_a, ra), (run_b, rb)), key=lambda x: is_predicted(x[1]))
    if m_run["preset"] != p_run["preset"]:
        raise UsageError(f"run {m_id} measured experiment {m_run['preset']} but run {p_id} predicted "
                         f"{p_run['preset']}: compare a run with the prediction of the same experiment")
    _, _, measured = measured_points(store, m_id)
    _, _, predicted = measured_points(store, p_id)
    if not measured:
        raise UsageError(f"run {m_id} has no measured rates to compare: see 'pario show {m_id}'")
    got, only_m, only_p = against_prediction(measured, predicted)
    if not got:
        raise UsageError(f"runs {m_id} and {p_id} share no point (the same test with every "
                         "parameter equal: ranks, block, size, options, stripes, loaders...): "
                         f"predict the same plan, e.g. 'pario model {m_run['preset']} --ranks ... "
                         "--machine ...' with the run's options")
    caption = (f"Measured against PREDICTED: run {m_id} ({m_run['preset']}, measured "
               f"{m_run['started_utc']} in {m_run['dir']}) against run {p_id} ({p_run['dir']}); "
               "best MiB/s of each, ratio predicted / measured")
    head = ["point", "measured", "predicted", "pred/meas", f"within {TOLERANCE:.0%}", "model's bound"]
    rows = [[c.label, f"{c.measured.best:.1f}", f"{c.predicted.best:.1f}", f"{c.ratio:.2f}",
             "yes" if c.within else "no", c.bound] for c in got]
    inside = sum(c.within for c in got)
    summary = [f"{len(got)} matched points: {inside} ({inside / len(got):.0%}) predicted within "
               f"{TOLERANCE:.0%} of the measured rate"]
    if only_m:
        summary.append(f"only measured (run {m_id}): {'; '.join(only_m)}")
    if only_p:
        summary.append(f"only predicted (run {p_id}): {'; '.join(only_p)}")
    return caption, head, rows, summary


def _print_prediction(store, run_a, run_b, out):
    caption, head, rows, summary = prediction_table(store, run_a, run_b)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(caption, file=out)
    for r in [head] + rows:
        print("  ".join(f"{x:<{w}}" if i in (0, 5) else f"{x:>{w}}"
                        for i, (x, w) in enumerate(zip(r, widths))).rstrip(), file=out)
    for line in summary:
        print(line, file=out)
    return 0


def compare_command(store, run_a, run_b, fail_below=None, out=sys.stdout):
    if is_predicted(store.run(run_a)) != is_predicted(store.run(run_b)):
        if fail_below is not None:
            raise UsageError("--fail-below compares two measured runs: drop it to hold a run "
                             "against a prediction")
        return _print_prediction(store, run_a, run_b, out)
    ra, kind_a, pa = measured_points(store, run_a)
    rb, kind_b, pb = measured_points(store, run_b)
    if not pa:
        raise UsageError(f"run {run_a} has no measured rates to compare: see 'pario show {run_a}'")
    if not pb:
        raise UsageError(f"run {run_b} has no measured rates to compare: see 'pario show {run_b}'")
    got, only_a, only_b = compare(pa, pb)
    if not got:
        raise UsageError(f"runs {run_a} and {run_b} share no point (the same test with "
                         "every parameter equal: ranks, block, size, options, stripes, loaders...): "
                         "compare runs of the same experiment")
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
