"""`pario report RUN [RUN ...] --out FILE.html`: one self-contained HTML
file a reader can open anywhere: per run its provenance, its tables and
figures in the seeds' shapes (numbered, captioned, with the spread and the
ideal curve), the diagnoses under each figure, the engine's warnings, and
the per-rank timeline of one point (the CFS report's Figure 2).

Every string from outside pario (directory and experiment names, command
lines, host names, mount options, the experiment's TOML) reaches the page
only through html.esc."""

import json
import re
import shlex
from datetime import datetime, timezone

from ..errors import UsageError
from ..explain import explain_run
from ..model.command import predicted_label
from ..figures import quantity_text, table_rows
from ..plot import Palette, draw_figure, missing_glyphs_as_one_note
from ..runner import failure_line, run_views, verification_text
from ..studies.probe import probe_tables
from ..units import format_size, format_value
from ..version import describe as describe_version
from . import html as H
from .svg import pyplot, svg_bytes
from .timeline import timeline_svg


def _ok_docs(store, run_id):
    return [(p["id"], dict(p), json.loads(p["result_json"])) for p in store.points(run_id)
            if p["status"] == "ok" and p["result_json"]]


def _approx(n):
    """23.5 GiB: memory sizes are not exact multiples of a unit."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} B"


def provenance_rows(run, docs, points):
    """(what, value) rows: where and how the run was made (`points`: what
    its points came to, Store.points_text)."""
    # the point with the most ranks shows the most of the placement
    doc = max((d for *_, d in docs), key=lambda d: d.get("mpi", {}).get("ranks", 0), default={})
    sysinfo, t, mpi = doc.get("system", {}), doc.get("target", {}), doc.get("mpi", {})
    hosts = mpi.get("hosts", [])
    rows = [
        ("run", f"{run['id']} ({run['status']}), {run['started_utc']} to {run.get('finished_utc') or '-'}"),
        ("points", points),
        ("experiment", f"{run['preset']}: {run.get('title') or ''} (kind {run.get('kind') or 'io'}, "
                       f"from {run.get('experiment_origin') or run['preset']})"),
        ("command line", "pario " + shlex.join(json.loads(run["argv"] or "[]")[1:])),
        ("directory", run["dir"]),
        ("host", ", ".join(f"{h['name']} ({h['cores']} cores, {_approx(h['memory_bytes'])} memory; "
                           f"{len(h['ranks'])} of the largest point's ranks)" for h in hosts)
         or run.get("host")),
        ("CPU", sysinfo.get("cpu_model")),
        ("memory", _approx(sysinfo["memory_bytes"]) if sysinfo.get("memory_bytes") else None),
        ("kernel", " ".join(x for x in (sysinfo.get("kernel"), sysinfo.get("kernel_release"),
                                        sysinfo.get("kernel_version"), sysinfo.get("machine")) if x)),
        ("file system", _file_system(t)),
        ("mount options", t.get("mount_options")),
        ("MPI", _mpi(mpi)),
        ("launcher", run.get("launcher") or "-"),
        ("pario", f"{run.get('pario_version') or '-'}; engine {doc.get('tool', {}).get('version', '-')}"),
        ("options", json.dumps({k: v for k, v in json.loads(run["options_json"] or "{}").items()
                                if v not in (None, False)}, sort_keys=True)),
        ("verified", verification_text([d for *_, d in docs])),
    ]
    # a fact the documents do not hold (a predicted run has no CPU, kernel
    # or mount) is left out, never shown as "?" or "None"
    return [(what, value) for what, value in rows if value not in (None, "")]


def _file_system(t):
    """'ext4 (ext4 /dev/vda on /, device 254:0)': the parts the target names."""
    where = " ".join(x for x in (t.get("mount_type"), t.get("mount_source"),
                                 f"on {t['mount_point']}" if t.get("mount_point") else None) if x)
    inner = ", ".join(x for x in (where, f"device {t['device']}" if t.get("device") else None) if x)
    if not t.get("fs_type"):
        return None
    return f"{t['fs_type']} ({inner})" if inner else t["fs_type"]


def _mpi(mpi):
    """The library's first line (MPICH's version text runs to its whole
    configure line) and the standard, when the document names them."""
    lines = (mpi.get("library") or "").strip().splitlines()
    if not lines:
        return None
    return lines[0].strip() + (f" (MPI standard {mpi['standard']})" if mpi.get("standard") else "")


def _pick_timeline(docs, wanted):
    """(point id, doc, phase, iteration) to draw: the point asked for, else
    the point with the most ranks (then largest block) that has per-rank
    timings, at its best iteration of its last phase."""
    cands = [(pid, row, d) for pid, row, d in docs if d.get("phases")
             and d["phases"][0].get("iterations") and d["phases"][0]["iterations"][0].get("ranks")]
    if wanted is not None:
        cands = [c for c in cands if c[0] == wanted]
        if not cands:
            return None
    if not cands:
        return None
    # most ranks; a write (open, I/O, fsync and close all show) before a read; largest block
    pid, row, d = max(cands, key=lambda c: (c[2]["mpi"]["ranks"],
                                            any(ph["name"] == "write" for ph in c[2]["phases"]),
                                            c[2]["params"].get("block_bytes", 0), -c[0]))
    phase = next((ph for ph in d["phases"] if ph["name"] == "write"), d["phases"][-1])
    best = max(phase["iterations"], key=lambda it: it.get("mib_per_s", 0))
    return pid, row, d, phase["name"], best


def _run_section(page, store, run_id, counter, wanted_point, several=False):
    run, kind, experiment, options, records, figures = run_views(store, run_id)
    probe, explained = explain_run(store, run_id, kind, figures)
    docs = _ok_docs(store, run_id)
    predicted = predicted_label(run)
    page.add(H.heading(2, f"Run {run_id}: {run['preset']} — {run.get('title') or ''}"
                          + (f" [PREDICTED: {predicted.removeprefix('predicted: ')}]" if predicted else ""), anchor=f"run{run_id}"))
    if predicted:
        page.add(H.paragraph(f"Every figure and table of run {run_id} is a prediction "
                             f"({predicted}), not a measurement."))
    page.add(H.table(["", "value"], provenance_rows(run, docs, store.points_text(run)),
                     number=_own_table(counter),
                     caption=f"Provenance of run {run_id}", text_columns=(0, 1), cls="provenance"))
    if kind.name == "probe":
        for caption, head, rows, notes in probe_tables(records):
            # Tables 2 and 3 carry the CFS report's numbers; a table it has
            # none for (the metadata rates) gets pario's own, as provenance
            own = None if caption.startswith("Table ") else _own_table(counter)
            page.add(H.table(head, rows, number=own, caption=caption, text_columns=(0, 2)))
            if notes:
                page.add(H.items(notes))
    else:
        for text in kind.tables(experiment.data, records, options):
            text = text.strip("\n")
            if not _OWN_NUMBER.match(text):  # bonnie's "Figure 1. ...": one number per table
                page.add(H.heading(3, _own_table(counter)))
            page.add(H.preformatted(text))
    if probe.run and any(e.ideal for e in explained):
        page.add(H.paragraph(f"Ideal curves (dotted) from the probe of this host and file system: "
                             f"run {probe.run}. The ideal rises by the one-rank rate per rank up to "
                             "the predicted peak, then stays flat (the CFS report's Figure 3)."))
    elif probe.why_none:
        page.add(H.paragraph(probe.why_none[0].upper() + probe.why_none[1:] + "."))
    units = _units_sentence(run_id, explained)
    if units:
        page.add(H.paragraph(units))
    palette = Palette()
    for e in explained:
        data = e.data
        number = data.figure.number   # the experiment's, else "Figure R<run>-<n>" (run_views)
        if number.startswith(f"Figure R{run_id}-"):
            counter["figure"] += 1    # the timeline's number follows them
        # the heading without its number ("cf. Figure 6. Partitioned ..." holds ". " twice)
        title = data.heading.removeprefix(f"{number}. ") if data.heading.startswith(f"{number}. ") \
            else data.heading.split(". ", 1)[1]
        if several and not number.startswith("Figure R"):
            # the experiment's own number ("Figure 4") recurs in each run's
            # section: said with its run, so a reader citing it is understood
            number = f"Run {run_id}, {number}"
        trials = data.trials_text + ("; bars span the lowest trial to the median"
                                     if data.shows_ranges else "")
        caption = f"{title}: {quantity_text(data)}, {trials}"
        if data.figure.note:   # what ran (fsync, the page cache...), as show and the PNG say
            caption += f"; {data.figure.note}"
        if data.columns_text:  # bare column heads ("2"): as show's table says
            caption += f"; {data.columns_text}"
        if e.ideal:
            caption += f"; dotted: ideal up to the predicted peak {e.ideal.peak:.0f} MiB/s"
        head, rows = table_rows(data)
        if not data.figure.plot:  # a table only (plot = false): its caption says what the cells are
            page.add(H.table(head, rows, number=number, caption=caption,
                             anchor=f"run{run_id}-{data.figure.id}-table"))
        else:
            # an experiment's "Table 2" is its table; the plot beside it is its plot
            is_table = data.figure.number.startswith("Table ")
            page.add(H.figure(svg_bytes(draw_figure(data, palette)), "image/svg+xml", caption,
                              number=f"Plot of {number}" if is_table else number,
                              anchor=f"run{run_id}-{data.figure.id}"))
            page.add(H.table(head, rows, number=number if is_table else f"Table for {number}", caption=title,
                             anchor=f"run{run_id}-{data.figure.id}-table"))
        if e.lines():
            page.add(H.findings([_Line(x) for x in e.lines()], cls="findings"))
    warnings = {}
    for test_id, text in store.warnings(run_id):
        warnings.setdefault(text, set()).add(test_id)
    notes = kind.notes(experiment.data, records, options)
    if warnings or notes:
        page.add(H.heading(3, "Warnings"))  # the engine's, the kind's, or the model's
        page.add(H.items([f"{t} [{', '.join(sorted(s))}]" for t, s in warnings.items()] + list(notes),
                         cls="warnings"))
    failed = [p for p in store.points(run_id) if p["status"] == "failed"]
    if failed:
        page.add(H.heading(3, "Failed points"))
        page.add(H.items([failure_line(p) for p in failed]))
    mine = wanted_point is not None and any(pid == wanted_point for pid, _, _ in docs)
    pick = _pick_timeline(docs, wanted_point if mine else None)
    if pick and wanted_point is not None and not mine:  # never swapped for this run's own silently
        page.add(H.paragraph(f"--point {wanted_point} is not a point of run {run_id}: its timeline "
                             f"below is the one pario picks for run {run_id} (most ranks, a write)."))
    if pick:
        pid, row, d, phase, it = pick
        number = _unnumbered(run_id, counter)
        ranks = d["mpi"]["ranks"]
        label = (f"{row['test_id']} {phase}, {ranks} rank{'s' if ranks != 1 else ''}, "
                 f"{format_size(d['params'].get('block_bytes') or 0)} calls, iteration {it['iteration']} "
                 f"({format_value(it['mib_per_s'])} MiB/s)")
        if predicted:  # a modelled timeline looks exactly like a measured one
            label += f" [{predicted}]"
        page.add(H.heading(3, "Per-rank timeline"))
        page.add(H.figure(timeline_svg(it, label), "image/svg+xml",
                          f"Per-rank timeline of point {pid}: {label}; open, I/O, "
                          f"{'fsync and ' if phase == 'write' and d['params'].get('fsync') else ''}close of "
                          "every rank on one clock, then its wait in the closing barrier; the phase "
                          "time is the slowest rank's stop (the CFS report's Figure 2)",
                          number=number, anchor=f"run{run_id}-timeline"))
    page.add(H.heading(3, "Experiment definition"))
    page.add(H.preformatted(experiment.text))
    return pid if pick else None


# a kind's table text that opens with a number of its own ("Figure 1. bonnie, ...")
_OWN_NUMBER = re.compile(r"(Figure|Table) [A-Za-z0-9-]+\. ")


def _units_sentence(run_id, explained):
    """What the run's MiB/s mean, said once per run that has such figures:
    a kind whose tables state their own units (bonnie's K/sec and MB/s, the
    probe's seconds and operations per second) needs none."""
    data = [e.data for e in explained]
    if not any("MiB/s" in (d.unit or "") for d in data):
        return ""
    if any(d.predicted for d in data):  # one modelled trial per point, no best of anything
        return f"Rates of run {run_id} are MiB/s (2^20 bytes per second), predicted by the model."
    text = (f"Rates of run {run_id} are MiB/s (2^20 bytes per second), best of the trials as the CFS "
            "report reports them")
    if any(d.shows_ranges for d in data):
        text += ", with the lowest trial and the median beside"
    return text + "."


def _own_table(counter):
    """The number of a table of pario's own (provenance, a kind's table, a
    prediction): "Table P3", never read as an experiment's "Table 2" (the
    ASCI Red report's) in the same document."""
    counter["table"] += 1
    return f"Table P{counter['table']}"


def _unnumbered(run_id, counter):
    """The timeline's name: R, the run, and its count after the run's
    unnumbered figures (runner._name_unnumbered), "Figure R31-3"."""
    counter["figure"] += 1
    return f"Figure R{run_id}-{counter['figure']}"


class _Line:
    """A text line shown in the findings list (rule: text)."""

    def __init__(self, text):
        self.rule, _, self.text = text.partition(": ")
        self.points = []


def _prediction_sections(page, store, run_ids, counter):
    """Every measured run of the report beside every run the model
    predicted of the same experiment: measured / predicted / ratio."""
    from ..compare_runs import NoSharedPoint, NothingToCompare, caveat_lines, is_predicted, prediction_table

    runs = [store.run(r) for r in dict.fromkeys(run_ids)]
    pairs = [(m["id"], p["id"]) for p in runs if is_predicted(p)
             for m in runs if not is_predicted(m) and m["preset"] == p["preset"]]
    for m_id, p_id in pairs:
        page.add(H.heading(2, f"Measured run {m_id} against PREDICTED run {p_id}",
                           anchor=f"run{m_id}-predicted{p_id}"))
        caveats = caveat_lines(store, m_id, p_id)  # an incomplete run: as compare says it
        if caveats:
            page.add(H.items(caveats))
        try:
            caption, head, rows, summary = prediction_table(store, m_id, p_id)
        except NoSharedPoint:   # each run is shown whole above; there is nothing to set side by side
            page.add(H.paragraph(f"Runs {m_id} and {p_id} share no point (the same test with every "
                                 "parameter equal), so there is no measured-against-predicted table: "
                                 "each is shown on its own above."))
            continue
        except NothingToCompare as nothing:  # every point failed, or it stopped before its first
            page.add(H.paragraph(f"Run {nothing.run_id} has no successful point, so there is no "
                                 "measured-against-predicted table: each is shown on its own above."))
            continue
        page.add(H.table(head, rows, number=_own_table(counter), caption=caption,
                         text_columns=(0, 4, 5), cls="data predicted"))
        page.add(H.items(summary))


def build_report(store, run_ids, point=None):
    twice = sorted({r for r in run_ids if run_ids.count(r) > 1})
    if twice:  # one section, one anchor per run
        raise UsageError(f"run {', '.join(map(str, twice))} is given twice: name each run once")
    pyplot()  # matplotlib settings for embedded SVG, before any figure is drawn
    page = H.Page(f"pario report: run{'s' if len(run_ids) > 1 else ''} {', '.join(map(str, run_ids))}")
    page.add(H.heading(1, page.title))
    page.add(H.paragraph(f"Made by pario {describe_version()} on "
                         f"{datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} from {store.path}."))
    page.add(H.items([f"Run {r}" for r in run_ids], cls="contents"))
    counter = {"figure": 0, "table": 0}
    drawn = []
    with missing_glyphs_as_one_note():
        for run_id in run_ids:
            store.run(run_id)  # refuses an unknown run with one line
            counter["figure"] = 0
            drawn.append(_run_section(page, store, run_id, counter, point, several=len(run_ids) > 1))
    _prediction_sections(page, store, run_ids, counter)
    if point is not None and point not in drawn:
        raise UsageError(f"--point {point} is not a successful point with per-rank timings of run(s) "
                         f"{', '.join(map(str, run_ids))}: see 'pario export RUN --csv' for point ids")
    return page.render()
