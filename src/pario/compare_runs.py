"""`pario compare RUN_A RUN_B [--fail-below R]`: matching points side by
side with the ratio of their best values and a verdict from an exact rank
test of their trials, the points sharing one 5 % budget for false calls,
and a line judging the run as a whole by its median ratio
(pario.analysis.compare).  Every study kind compares: each row
is one point and one thing it measured, named and valued as its kind
describes it (pario.runs: bonnie's block write, perf's write+sync, BTIO's
NPB I/O rate and T_T, a probe's components, in their own units).  With
--fail-below, a point called slower and below R x run A, or a whole run
whose median ratio lies below R with 95 %, makes the exit code 1, so a
site's CI can catch a regression without failing an unchanged system on
chance.

A measured run against a run `pario model` predicted (either order) is a
different table: per point the measured rate, the predicted one, their
ratio, whether it lies within the model's tolerance, and the resource the
model says bounded the point; every heading says which side is predicted."""

import json
import re
import sys
import textwrap
from collections import Counter

from .analysis.compare import (EQUAL, FASTER, FEW, NOISE_FLOOR, SAME, SLOWER, TOLERANCE, against_prediction,
                               compare, differing, identity, regressions, run_regressed, whole_run)
from .analysis.significance import ALPHA, trials_needed
from .errors import UsageError
from .model.machine import CACHE_NAMES, result_caches
from .runs import measured_points, stored_records
from .units import format_value, on_its_side, time_unit

# Points named in full on an "only in" line; beyond this, a count per test
# and the first few.
ONLY_LISTED = 6
WIDTH = 100


def is_predicted(run):
    return run.get("launcher") == "model"


class NothingToCompare(UsageError):
    """A run without a point to set beside another's: `compare` refuses,
    a report shows the run on its own and says so."""

    def __init__(self, run_id):
        super().__init__(f"run {run_id} has no successful, verified point to compare: "
                         f"see 'pario show {run_id}'")
        self.run_id = run_id


def _points(store, run_id):
    """(run, kind, points) of a run that has something to compare."""
    run, kind, points = measured_points(store, run_id)
    if not points:
        if stored_records(store, run_id):
            raise UsageError(f"run {run_id} holds results of kind {kind.name} that name no measure: "
                             f"compare does not handle kind {kind.name}; see 'pario show {run_id}'")
        raise NothingToCompare(run_id)
    return run, kind, points


class NoSharedPoint(UsageError):
    """Two runs with no point in common: `compare` refuses, a report of
    several runs shows them side by side and says so."""


def _no_shared_point(a, b, ka, kb, hint):
    kinds = f" (kinds {ka.name} and {kb.name})" if ka.name != kb.name else ""
    return NoSharedPoint(f"runs {a} and {b}{kinds} share no point (the same test with every parameter "
                      f"equal: ranks, block, size, options, stripes, loaders...): {hint}")


def only_in(run_id, unmatched, what="only in run"):
    """The points only one run has, in one sentence: every label when
    there are few, else their count per test and the first few."""
    if not unmatched:
        return ""
    labels = [label for _, label in unmatched]
    if len(labels) <= ONLY_LISTED:
        return f"{what} {run_id}: {'; '.join(labels)}"
    per_test = {}
    for test, _ in unmatched:
        per_test[test] = per_test.get(test, 0) + 1
    tests = ", ".join(f"{t} ({n})" for t, n in per_test.items())
    # rows of the comparison (a point's write and read are two), not the plan's points of list and show
    return (f"{what} {run_id}: {len(labels)} rows, of test{'s' if len(per_test) > 1 else ''} "
            f"{tests}; e.g. {'; '.join(labels[:3])}")


def _print_wrapped(text, out):
    for line in textwrap.wrap(text, WIDTH, subsequent_indent="    ", break_on_hyphens=False):
        print(line, file=out)


def _value(point, x):
    return format_value(x, point.quantity.fmt if point.quantity else ".1f")


def _ratio(x):
    """A ratio to two decimals, or, where those would print 0.00 (a model
    1000 times off), two significant digits: 0.0011; more decimals where
    two would round it onto the other side of the 25 % line (0.747,
    'no', beside 0.753, 'yes', both read 0.75)."""
    return on_its_side(x, lambda v: abs(v - 1) <= TOLERANCE)


def _unit_and_values(a, b):
    """A row's unit and its two bests as shown: times in the unit that
    reads them best (134 ns, not 1.345e-07 s), every other unit as is."""
    unit = a.quantity.unit if a.quantity else "MiB/s"
    if unit != "s":
        return unit, _value(a, a.best), _value(b, b.best)
    unit, scale = time_unit(max(abs(a.best), abs(b.best)))
    return unit, format_value(a.best / scale, ".4g"), format_value(b.best / scale, ".4g")


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
    _, kind, measured = _points(store, m_id)
    _, _, predicted = _points(store, p_id)
    got, only_m, only_p = against_prediction(measured, predicted, kind.params)
    if not got:
        raise NoSharedPoint(f"runs {m_id} and {p_id} share no point (the same test with every "
                         "parameter equal: ranks, block, size, options, stripes, loaders...): "
                         f"predict the same plan, e.g. 'pario model "
                         f"{m_run.get('experiment_origin') or m_run['preset']} --ranks ... "
                         "--machine ...' with the run's options")
    units = sorted({c.measured.quantity.unit for c in got if c.measured.quantity})
    caption = (f"Measured against PREDICTED: run {m_id} ({m_run['preset']}, measured "
               f"{m_run['started_utc']} in {m_run['dir']}) against run {p_id} ({p_run['dir']}); "
               f"best {' / '.join(units) or 'value'} of each, ratio predicted / measured")
    head = ["point", "measured", "predicted", "pred/meas", f"within {TOLERANCE:.0%}", "model's bound"]
    rows = [[c.label, _value(c.measured, c.measured.best), _value(c.predicted, c.predicted.best),
             _ratio(c.ratio), "yes" if c.within else "no", c.bound] for c in got]
    inside = sum(c.within for c in got)
    summary = [f"{len(got)} matched points: {inside} ({inside / len(got):.0%}) predicted within "
               f"{TOLERANCE:.0%} of the measured rate"]
    summary += [only_in(m_id, only_m, "only measured, run"), only_in(p_id, only_p, "only predicted, run")]
    summary.append(_other_machine(store, m_id, m_run, p_id))
    summary.append(_other_trials(store, m_id, p_id))
    summary += _model_warnings(store, p_id)
    return caption, head, rows, [s for s in summary if s]


def _trials(store, run_id):
    """The trials a point of a run took the best of (its --iterations), or
    a predicted point stands for (its machine's best_of: a probe's rows
    taken as the best of the measured run's trials, one predicted trial)."""
    def best_of(doc):
        return (doc.get("model") or {}).get("machine", {}).get("best_of") or doc.get("params", {}).get("iterations")

    return {best_of(json.loads(p["result_json"]))
            for p in store.points(run_id) if p["status"] == "ok" and p["result_json"]} - {None}


def _other_trials(store, m_id, p_id):
    """A warning when the prediction is the best of another number of
    trials than the measurement: a best of one trial is a typical trial,
    a best of five a lucky one, and the verdicts would hold them against
    each other."""
    measured, predicted = _trials(store, m_id), _trials(store, p_id)
    if not measured or not predicted or measured == predicted:
        return None
    said = lambda n: " or ".join(str(x) for x in sorted(n))
    return (f"warning: run {m_id} took the best of {said(measured)} trials a point, run {p_id} predicted "
            f"the best of {said(predicted)}: predict with --iterations {max(measured)} for figures alike")


def _model_warnings(store, p_id):
    """What the model said of its machine with the prediction (a one-rank
    probe, a probe whose line missed its rows), once each: the table above
    stands on it.  Every predicted point's own "predicted, not measured"
    is the caption's already."""
    seen = dict.fromkeys(text for _, text in store.warnings(p_id)
                         if not text.startswith("predicted by the model of machine"))
    return [f"warning: run {p_id}: {text}" for text in seen]


def _machine_of(store, p_id):
    """The machine name a predicted run's points were modelled on."""
    for p in store.points(p_id):
        if p["status"] == "ok" and p["result_json"]:
            return ((json.loads(p["result_json"]).get("model") or {}).get("machine") or {}).get("name")
    return None


def _other_machine(store, m_id, m_run, p_id):
    """A warning when the prediction is not of the measured run's machine:
    a described machine (ipsc860), or a probe of another directory or file
    system; the within-25 % verdicts then compare two machines."""
    name = _machine_of(store, p_id)
    if not name:
        return ""
    here = ", ".join(sorted(_setting(store, m_id)["file system"])) or "?"
    where = f"run {m_id}'s {m_run['dir']} ({here})"
    if not name.startswith("probe:") or not name[len("probe:"):].split(" ")[0].isdigit():
        return (f"warning: run {p_id} models machine {name}, not {where}: the verdicts compare two "
                "machines; predict from a probe of that directory ('pario probe --dir ...', then "
                "--machine probe:RUN)")
    probe_id = int(name[len("probe:"):].split(" ")[0])
    try:
        probe = store.run(probe_id)
    except UsageError:
        return f"warning: run {p_id} models probe run {probe_id}, which is no longer stored"
    there = ", ".join(sorted(_setting(store, probe_id)["file system"])) or "?"
    # the same host and file system (its device), as ideal curves choose a
    # probe: another directory of one file system is the same storage
    if _targets(store, probe_id) & _targets(store, m_id):
        return ""
    return (f"warning: run {p_id} models probe run {probe_id} ({probe['dir']}, {there}), not "
            f"{where}: the verdicts include that difference")


def _targets(store, run_id):
    """(host, file-system device) of each stored result of a run."""
    from .explain import target_key

    return {target_key(json.loads(p["result_json"])) for p in store.points(run_id)
            if p["status"] == "ok" and p["result_json"]}


def _print_table(head, rows, right, out):
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    for r in [head] + rows:
        print("  ".join(f"{x:>{w}}" if i in right else f"{x:<{w}}"
                        for i, (x, w) in enumerate(zip(r, widths))).rstrip(), file=out)


def _print_prediction(store, run_a, run_b, out):
    caption, head, rows, summary = prediction_table(store, run_a, run_b)
    print(caption, file=out)
    for line in caveat_lines(store, run_a, run_b):
        _print_wrapped(line, out)
    _print_table(head, rows, (1, 2, 3, 4), out)
    for line in summary:
        _print_wrapped(line, out)
    return 0


def _noise(c, predicted):
    if predicted:
        return "none"   # a model's numbers are not trials
    if c.band is None:
        return "1 trial"
    return f"±{100 * c.band:.0f}%"


def _setting(store, run_id):
    """What a run ran on, beyond its points' parameters: {fact: values}
    over its successful results (file system, MPI library)."""
    facts = {"file system": set(), "MPI library": set(), "caches": set(), "modelled machine": set()}
    for p in store.points(run_id):
        if p["status"] != "ok" or not p["result_json"]:
            continue
        doc = json.loads(p["result_json"])
        if doc.get("predicted"):
            # a prediction's "MPI library" is its model: named as the machine,
            # the same whether read from its file or its probe (its "(from
            # PATH)" says where, not what)
            name = ((doc.get("model") or {}).get("machine") or {}).get("name", "")
            facts["modelled machine"].add(re.sub(r" \(from .*\)$", "", name))
            facts["caches"].add(CACHE_NAMES[result_caches(doc) or "page"])
            continue
        target, mpi = doc.get("target") or {}, doc.get("mpi") or {}
        if target.get("fs_type"):
            facts["file system"].add(target["fs_type"] + (" (in memory)" if target.get("memory_backed") else ""))
        # where unsynced writes stop and reads may hit: a modelled machine's
        # (a measured run's are this host's page cache)
        facts["caches"].add(CACHE_NAMES[result_caches(doc) or "page"])
        if mpi.get("library"):
            facts["MPI library"].add(mpi["library"].split(",")[0].strip())
    return facts


def setting_differences(store, run_a, run_b):
    """A warning per fact the two runs differ in: a "faster" between a
    disk and tmpfs, or Open MPI and MPICH, is that difference, not pario's."""
    a, b = _setting(store, run_a), _setting(store, run_b)
    out = []
    for fact in a:
        if a[fact] and b[fact] and a[fact] != b[fact]:
            out.append(f"warning: the runs differ in {fact}: run {run_a} {', '.join(sorted(a[fact]))}; "
                       f"run {run_b} {', '.join(sorted(b[fact]))}: the verdicts below include that difference")
    return out


def _values(points, key, params):
    """A parameter's values over a run's points, as its kind prints them."""
    fmt = params[key].fmt if key in params else str
    values = [identity(p).get(key) for p in points]
    if any(isinstance(v, (list, tuple)) for v in values):
        # lists of flags: each in brackets, so "--prealloc --evict" and an
        # empty list read as two values, not as words of one ("none, --evict")
        return ", ".join(dict.fromkeys("[" + " ".join(map(str, v or ())) + "]" for v in values))
    seen = dict.fromkeys(fmt(v) if v is not None else "-" for v in values)
    return ", ".join(x or "none" for x in seen)


def _judging_lines(got, whole):
    """What the verdicts mean, in a few lines: the whole run, the noise
    band, the rank test and its shared bar, and what too few trials need."""
    lines = []
    if not whole.points:
        lines.append("whole run: no point has a finite ratio (run A measured nothing above 0)")
    elif whole.low is None:
        lines.append(f"whole run: median ratio {_ratio(whole.median)} over {whole.points} point(s); too few "
                     "points for a 95 % interval (6 are needed)")
    else:
        lines.append(f"whole run: median ratio {_ratio(whole.median)} over {whole.points} points, 95 % interval "
                     f"{_ratio(whole.low)}-{_ratio(whole.high)}: {whole.verdict} (a drift of the machine between "
                     "the runs moves it too: compare two runs of unchanged code to see how far)")
    if any(c.band is not None for c in got):
        lines.append(f"noise ±N%: the wider spread (best - worst) / best of the two runs' trials, at least "
                     f"{NOISE_FLOOR:.0%}")
    lines.append(f"p: the chance that an unchanged point splits its trials between the runs at least this "
                 f"unevenly (exact rank test); faster or slower: p passes the bar the {len(got)} points "
                 f"share so that all of them together make a false call with at most {ALPHA:.0%} "
                 f"(Benjamini-Hochberg), and the bests differ by more than {NOISE_FLOOR:.0%}")
    few = [c for c in got if c.verdict == FEW]
    if few:
        # the trials of each point's fewer side, the commonest first:
        # "31 point(s) (27 with 2 trials on a side, 4 with 1)"
        (trials, _), *others = Counter(min(len(c.a.rates), len(c.b.rates)) for c in few).most_common()
        on_a_side = f"{trials} trial{'s' * (trials != 1)} on a side"
        what = (f"{len(few)} point(s) with {on_a_side}" if not others else
                f"{len(few)} point(s) ({len(few) - sum(n for _, n in others)} with {on_a_side}, "
                + ", ".join(f"{n} with {k}" for k, n in others) + ")")
        lines.append(f"{FEW}: {what} cannot be called even when every trial of B lies beyond every trial of A; "
                     f"--iterations {trials_needed(len(got))} lets one point of {len(got)} be called "
                     "on its own")
    return lines


def _refuse_fail_below(run_a, run_b, predicted_a, predicted_b):
    """--fail-below judges a regression beyond the trials' noise: it needs
    two measured runs."""
    if predicted_a != predicted_b:
        raise UsageError("--fail-below compares two measured runs: drop it to hold a run "
                         "against a prediction")
    if predicted_a:
        raise UsageError(f"--fail-below compares two measured runs, and runs {run_a} and {run_b} are both "
                         "predictions (a model has no noise to judge a regression by): drop it")


def caveat_lines(store, run_a, run_b):
    """What limits the comparison before any row is read: a run held
    against itself (a way to see its points, not a change), and a run that
    did not finish its plan (only the points it stored are compared)."""
    out = []
    if run_a == run_b:
        out.append(f"note: run {run_a} is compared with itself: every point matches its own trials, so "
                   "no verdict below can show a change (give two different runs for that)")
    for run_id in dict.fromkeys((run_a, run_b)):
        status = store.run(run_id)["status"]
        if status != "complete":
            out.append(f"warning: run {run_id} is {status} (it did not finish its plan): only the points "
                       "it stored are compared")
    return out


def compare_command(store, run_a, run_b, fail_below=None, out=None):
    out = out or sys.stdout  # looked up now, so a redirected stdout is honoured
    predicted_a, predicted_b = is_predicted(store.run(run_a)), is_predicted(store.run(run_b))
    if fail_below is not None:
        _refuse_fail_below(run_a, run_b, predicted_a, predicted_b)
    if predicted_a != predicted_b:
        return _print_prediction(store, run_a, run_b, out)
    ra, kind_a, pa = _points(store, run_a)
    rb, kind_b, pb = _points(store, run_b)
    predicted = is_predicted(ra)   # and so is run B
    params = {**kind_b.params, **kind_a.params}
    got, only_a, only_b = compare(pa, pb, params, predicted)
    if not got:
        apart = differing(pa, pb) if ra["preset"] == rb["preset"] else []
        raise _no_shared_point(run_a, run_b, kind_a, kind_b,
                               "every point differs in " + "; ".join(
                                   f"{k} ({_values(pa, k, params)} against {_values(pb, k, params)})"
                                   for k in apart) if apart else "compare runs of the same experiment")
    times = any(c.a.better == "min" for c in got)
    print(f"run {run_a} ({ra['preset']}, {ra['started_utc']}, {ra['dir']}) against "
          f"run {run_b} ({rb['preset']}, {rb['started_utc']}, {rb['dir']}): best of each, "
          f"ratio B/A{' (A/B for times)' if times else ''}: above 1, B is better", file=out)
    for line in setting_differences(store, run_a, run_b) + caveat_lines(store, run_a, run_b):
        _print_wrapped(line, out)
    # p: the rank test's chance; predictions have no trials to test
    head = ["point", "unit", "A", "B", "B vs A", "noise", *([] if predicted else ["p"]), "verdict"]
    rows = [[c.label, *_unit_and_values(c.a, c.b), _ratio(c.ratio), _noise(c, predicted),
             *([] if predicted else [format_value(c.chance, ".2g")]), c.verdict] for c in got]
    _print_table(head, rows, (2, 3, 4, 5) if predicted else (2, 3, 4, 5, 6), out)
    counts = {v: sum(1 for c in got if c.verdict == v) for v in (FASTER, SLOWER, SAME, EQUAL, FEW)}
    tail = [f"{counts[EQUAL]} {EQUAL}"] if predicted else [f"{counts[SAME]} {SAME}"] + (
        [f"{counts[FEW]} with {FEW} to be called alone"] if counts[FEW] else [])
    print(f"{len(got)} matched points: {counts[FASTER]} faster, {counts[SLOWER]} slower, "
          + ", ".join(tail), file=out)
    whole = None
    if predicted:
        print("both runs are predictions: a model has no noise, so any difference is the model's",
              file=out)
    else:
        whole = whole_run(got)
        for line in _judging_lines(got, whole):
            _print_wrapped(line, out)
    for text in (only_in(run_a, only_a), only_in(run_b, only_b)):
        if text:
            _print_wrapped(text, out)
    if fail_below is not None:
        bad = regressions(got, fail_below)
        sunk = run_regressed(whole, fail_below)
        if bad or sunk:
            why = []
            if sunk:
                why.append(f"the whole run's median ratio {_ratio(whole.median)} lies below {fail_below:g} "
                           f"(95 % interval {_ratio(whole.low)}-{_ratio(whole.high)})")
            if bad:
                named = "; ".join(f"{c.label} ({_ratio(c.ratio)})" for c in bad[:ONLY_LISTED])
                more = f"; and {len(bad) - ONLY_LISTED} more" if len(bad) > ONLY_LISTED else ""
                why.append(f"{len(bad)} point(s) called slower: {named}{more}")
            _print_wrapped(f"regression: run {run_b} below {fail_below:g} x run {run_a}: "
                           + "; ".join(why), out)
            return 1
        _print_wrapped(f"no regression below {fail_below:g} x run {run_a}: no point called slower below it, "
                       "and the whole run's median is not below it with 95 %", out)
    return 0
