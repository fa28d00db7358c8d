"""Stored runs as the analysis reads them: every record of every point,
paired with its result document and labelled with the kind's own
parameter formats.  `compare` and `export` read runs through here."""

from .explain import point_results
from .runner import run_views

# Parameters that tell two points of one test apart, in label order.
_LABEL_PARAMS = ("ranks", "class", "block", "method", "group", "files", "api")


def label_of(record, kind):
    parts = []
    for name in _LABEL_PARAMS:
        v = record.params.get(name)
        if v is None or (name == "group" and not v) or name in ("files", "api"):
            continue
        param = kind.params.get(name)
        text = param.fmt(v) if param else str(v)
        parts.append(f"{text} rank{'s' if v != 1 else ''}" if name == "ranks" else text)
    return ", ".join(parts)


def measured_points(store, run_id):
    """(run row, kind, [MeasuredPoint]) of every rate record of a run."""
    run, kind, *_ = run_views(store, run_id)
    out = []
    for r in point_results(store, run_id, kind):
        if not r.record.values.get("rate"):
            continue
        block = r.record.params.get("block")
        series = kind.params["block"].fmt(block) if block and "block" in kind.params else ""
        out.append(r.measured(series, label_of(r.record, kind)))
    return run, kind, out


def iteration_rows(store, run_id):
    """One dict per trial of every record of a run: the run and point ids,
    the record's parameters, the trial's index and each measured value."""
    run, kind, *_ = run_views(store, run_id)
    rows = []
    for r in point_results(store, run_id, kind):
        params = {k: v for k, v in r.record.params.items() if isinstance(v, (str, int, float, bool))
                  or v is None}
        n = max((len(v) for v in r.record.values.values() if v), default=0)
        for i in range(n):
            row = {"run": run_id, "point": r.point["id"], **params, "iteration": i}
            for q, vals in r.record.values.items():
                unit = kind.quantities[q].unit if q in kind.quantities else ""
                key = f"{q}_{unit.replace('/', '_per_')}" if unit else q
                row[key] = vals[i] if i < len(vals) else None
            rows.append(row)
    return rows
