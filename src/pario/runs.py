"""Stored runs as the analysis reads them: every record of every point,
paired with its result document and named by its study kind's own
description of what a point is and what it measured (pario.studies:
`identity`, `measures`, `params`).  `compare` and `export` read runs
through here, so neither names a kind."""

from .analysis.compare import frozen
from .analysis.measured import MeasuredPoint
from .explain import point_results
from .runner import run_views


def _results(store, run_id):
    """(run row, kind, [PointResult]) with the kind's whole-run values
    (BT's zeta against the best T_C) filled in."""
    run, kind, *_ = run_views(store, run_id)
    results = point_results(store, run_id, kind)
    kind.finish([r.record for r in results])
    return run, kind, results


def stored_records(store, run_id):
    """Every record of a run's successful points (a result that failed
    its verification gives none)."""
    return [r.record for r in _results(store, run_id)[2]]


def measured_points(store, run_id):
    """(run row, kind, [MeasuredPoint]): one per point of a run and thing
    it measured, each with its identity, its measure's name and quantity,
    and every trial.  The rounds of a kernel (each a point of the plan,
    the same point in what it is) are pooled into one."""
    run, kind, results = _results(store, run_id)
    pooled = {}
    for r in results:
        plan = r.point.get("params") or {}
        mine = kind.describing(r.record)
        ident = mine.identity(plan, r.record)
        for m in mine.measures(r.record):
            key = (frozen(ident), m.name)
            if key in pooled:
                pooled[key].rates.extend(m.values)
                continue
            pooled[key] = MeasuredPoint(
                phase=r.record.params.get("phase", ""), ranks=ident.get("ranks") or 0, series="",
                rates=list(m.values), doc=r.doc, test=str(ident.get("test", "")), label=m.name,
                plan=plan, identity=ident, measure=m.name, quantity=m.quantity,
                note=mine.point_note(plan), names=mine.params)
    return run, kind, list(pooled.values())


def iteration_rows(store, run_id):
    """One dict per trial of every record of a run: the run and point ids,
    the record's parameters, what it measured (`measured`, the kind's name
    for it), the trial's index and each value, its unit in the column's name."""
    run, kind, results = _results(store, run_id)
    rows = []
    for r in results:
        params = {k: v for k, v in r.record.params.items() if isinstance(v, (str, int, float, bool))
                  or v is None}
        mine = kind.describing(r.record)
        what = mine.measure_name(r.record)
        if what:
            params["measured"] = what
        units = {m.key: m.quantity.unit for m in mine.measures(r.record)}
        n = max((len(v) for v in r.record.values.values() if v), default=0)
        for i in range(n):
            row = {"run": run_id, "point": r.point["id"], **params, "iteration": i}
            for q, vals in r.record.values.items():
                unit = units.get(q) or (kind.quantities[q].unit if q in kind.quantities else "")
                key = f"{q}_{unit.replace('/', '_per_')}" if unit else q
                row[key] = vals[i] if i < len(vals) else None
            rows.append(row)
    return rows
