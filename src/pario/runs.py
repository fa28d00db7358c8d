"""Stored runs as the analysis reads them: every record of every point,
paired with its result document and named by its study kind's own
description of what a point is and what it measured (pario.studies:
`identity`, `measures`, `params`).  `compare` and `export` read runs
through here, so neither names a kind."""

import json

from .analysis.compare import frozen
from .analysis.measured import MeasuredPoint
from .explain import point_results
from .model.command import predicted_label
from .runner import planned_records, run_views


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


def param_column(name, names):
    """A parameter's export column: its name with its unit when it has
    one (block -> block_bytes), as the database names it."""
    unit = names[name].unit if name in names else ""
    return f"{name}_{unit}" if unit else name


def _param_columns(params, names):
    """A record's or plan's plain parameters, each in its column
    (param_column).  A list of plain values (a test's backend options,
    ["--queue-depth", "64"]) is one column of its words: "--queue-depth 64"."""
    out = {}
    for k, v in params.items():
        if isinstance(v, (list, tuple)) and all(isinstance(x, (str, int, float)) for x in v):
            v = " ".join(map(str, v))
        if isinstance(v, (str, int, float, bool)) or v is None:
            out[param_column(k, names)] = v
    return out


# A value's name that already says its unit keeps it as it is (`seconds`,
# not `seconds_s`; BTIO's `npb_io_s`, `npb_mbps`, `npb_io_pct`): the words
# that say each unit.  Other units are appended in letters a column name
# can hold (`rate_MiB_per_s`, `seeks_per_s`, `cpu_pct`).
_UNIT_WORDS = {"s": ("seconds", "s"), "B": ("bytes",), "%": ("pct",), "MB/s": ("mbps",), "MB": ("mb",)}


def value_column(name, unit):
    """The export column of a value `name` in `unit`: the unit appended
    (rate, MiB/s -> rate_MiB_per_s; seeks, /s -> seeks_per_s; cpu, % ->
    cpu_pct) unless the name already is or ends with it (seconds, s ->
    seconds); docs/result-schema.md, 'export'."""
    if not unit:
        return name
    if any(name == w or name.endswith("_" + w) for w in _UNIT_WORDS.get(unit, ())):
        return name
    letters = unit.replace("%", "pct").replace("/", "_per_").strip("_")
    return f"{name}_{letters}"


def iteration_rows(store, run_id):
    """One dict per trial of every record of a run: the run and point ids,
    whether it was measured or predicted (`source`), the point's `status`,
    the record's parameters, what the row holds (`quantity`, the kind's
    name for it: `write`, `read`; one column name in a measured and a
    predicted run, so their exports join), the trial's index and each value, its unit in the column's
    name (or, for a value whose unit differs from record to record, in a
    `unit` column).  A failed point is a row per record it would have
    given (each phase planned), with its error and no value, so the
    sweep's hole shows in the same columns a result fills."""
    run, kind, results = _results(store, run_id)
    source = predicted_label(run) or "measured"
    rows = []
    for p in store.points(run_id):
        if p["status"] != "ok":
            plan = json.loads(p["params_json"]) if p["params_json"] else {}
            plan = {"test": p["test_id"], "ranks": p["ranks"], **plan}
            for planned in planned_records(kind.planned_params(plan)):
                # the plan's names no record carries (phases, iterations) are not columns
                params = {k: v for k, v in planned.params.items()
                          if k not in kind.not_identity or k in kind.params}
                rows.append({"run": run_id, "point": p["id"], "source": source, "status": p["status"],
                             "error": p["error"] or "", **_param_columns(params, kind.params)})
    for r in results:
        mine = kind.describing(r.record)
        # what tells points apart (compare's identity) is a column too: the
        # backend options a test gave, which the record does not repeat
        ident = mine.identity(r.point.get("params") or {}, r.record)
        params = _param_columns({**r.record.params, **{k: v for k, v in ident.items()
                                                        if k not in r.record.params}}, mine.params)
        what = mine.measure_name(r.record)
        if what:  # measured or predicted: `source` says which
            params["quantity"] = what
        units = {m.key: m.quantity.unit for m in mine.measures(r.record)}
        n = max((len(v) for v in r.record.values.values() if v), default=0)
        for i in range(n):
            row = {"run": run_id, "point": r.point["id"], "source": source, "status": "ok", "error": "",
                   **params, "iteration": i}
            for q, vals in r.record.values.items():
                per_record = q in mine.quantities and mine.quantities[q].per_record
                unit = units.get(q) or (mine.quantities[q].unit if q in mine.quantities else "")
                key = value_column(q, unit) if not per_record else q
                if per_record:  # one column, a unit per record (the probe's components)
                    row["unit"] = unit
                row[key] = vals[i] if i < len(vals) else None
            rows.append(row)
    return kind, sorted(rows, key=lambda row: row["point"])  # stable: trials stay in order


def export_columns(kind, rows):
    """The columns of a run's export, the same for every run of a kind
    whatever its points' fate (all measured, some failed, all failed), so
    exports join: the fixed head, every parameter the kind declares, any
    other a record carries, what it measured, the trial, and every
    quantity the kind declares, each with its unit."""
    head = ["run", "point", "source", "status", "error",
            *(param_column(k, kind.params) for k in (*kind.params, *kind.facts))]
    values = [q if v.per_record else value_column(q, v.unit) for q, v in kind.quantities.items()]
    if any(v.per_record for v in kind.quantities.values()):
        values.insert(0, "unit")   # the unit of a value each record names (the probe's components)
    tail = ["quantity", "iteration", *values]
    seen = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in head and k not in tail]
    return list(dict.fromkeys(head + seen + tail))
