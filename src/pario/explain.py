"""What a stored run's figures mean: the probe of its target, the ideal
curve on every rate-against-ranks figure, and the diagnosis findings.

The figure description (pario.figures) says what a figure shows; this
module pairs each of its points with the engine's result document, so the
pure analysis (pario.analysis) can read per-rank timings, cache
residency, hosts and parameters.  `show`, `report`, `compare` and
`export` all read runs through here."""

import json
from dataclasses import dataclass, field

from .analysis.diagnose import diagnose
from .analysis.ideal import ideal_curve
from .analysis.measured import MeasuredPoint


def target_key(doc):
    """(host, file-system device) of an engine result: which probe applies."""
    host = doc.get("system", {}).get("hostname") or \
        (doc.get("mpi", {}).get("hosts") or [{}])[0].get("name")
    t = doc.get("target", {})
    return host, t.get("device") or t.get("dir")


@dataclass
class ProbeChoice:
    """The probe a run's ideal curves and findings come from: its run id
    and document, or none and, for a run with rate-against-ranks figures,
    why none (one line for `show` and `report`)."""
    run: int = None
    doc: dict = None
    why_none: str = ""


def _made_by_then(store, probe_run, run):
    """Whether a probe run was made before `run` or alongside it (started
    before it finished): only then does it describe the machine the run
    measured.  Run ids grow with time in one database."""
    if probe_run < run["id"]:
        return True
    finished = run.get("finished_utc")
    return bool(finished) and store.run(probe_run)["started_utc"] <= finished


def probe_for(store, docs, run=None):
    """The newest probe (a run of a kind that predicts a peak) of the same
    host and file system as any of `docs`, made before or alongside `run`
    (a runs row; None: any), that may stand for its machine
    (studies.probe.standing_probe), as a ProbeChoice: a stopped probe, or
    one whose peak point failed, is passed over for the one before it."""
    from .errors import UsageError
    from .studies import kinds
    from .studies.probe import standing_probe

    keys = {target_key(d) for d in docs}
    found = set()
    for kind in kinds().values():
        if kind.predicts_peak:
            found |= {run_id for run_id, doc in store.results_of_kind(kind.name) if target_key(doc) in keys}
    usable = sorted((r for r in found if run is None or _made_by_then(store, r, run)), reverse=True)
    refused = []
    for probe_run in usable:
        try:
            return ProbeChoice(probe_run, standing_probe(store, probe_run)[1])
        except UsageError as exc:
            refused.append(str(exc))
    if refused:
        return ProbeChoice(why_none=f"no ideal curves: {refused[0]}")
    if found:
        later = ", ".join(str(r) for r in sorted(found))
        return ProbeChoice(why_none=f"no ideal curves: the probe of this host and file system (run "
                                    f"{later}) was made after this run, so it need not describe the "
                                    "machine this run measured; probe before a run to draw them")
    return ProbeChoice(why_none="no ideal curves: no probe of this host and file system in this "
                                "database; 'pario probe --dir DIR' before a run draws them")


@dataclass
class PointResult:
    """One record of a stored point, with the point's result document."""
    record: object
    doc: dict
    point: dict
    seconds: list = field(default_factory=list)   # its timed phases (Kind.timed_seconds)

    def measured(self, series="", label=""):
        p = self.record.params
        return MeasuredPoint(phase=p.get("phase", ""), ranks=p.get("ranks") or 0,
                             series=series, rates=list(self.record.values.get("rate") or []),
                             doc=self.doc, test=p.get("test", ""), label=label,
                             plan=self.point.get("params") or {}, seconds=list(self.seconds))


def point_results(store, run_id, kind):
    out = []
    for p in store.points(run_id):
        if p["status"] != "ok" or not p["result_json"]:
            continue
        point = dict(p)
        point["params"] = json.loads(p["params_json"]) if p["params_json"] else {}
        doc = json.loads(p["result_json"])
        for rec in kind.records(point, doc):
            out.append(PointResult(rec, doc, point, kind.timed_seconds(rec, doc)))
    return out


def _series_key(record, names):
    if names is None:
        return ""
    if isinstance(names, str):
        return record.params.get(names)
    return tuple(record.params.get(n) for n in names)


def figure_points(data, results):
    """The measured points of one figure (rate figures only): the rules read
    rates, and a figure of times (FLASH-IO's time per file) shows none, so
    no finding may quote a rate its table does not hold."""
    fig = data.figure
    out = []
    if fig.y != "rate":
        return out
    for r in results:
        if not fig.selects(r.record) or not r.record.values.get("rate"):
            continue
        key = _series_key(r.record, fig.series)
        series = data.series_names.get(key, "")
        x = data.x_labels.get(r.record.params.get(fig.x), "")
        label = f"{data.x_param.label} {x}" + (f", {series}" if series else "")
        if fig.x == "ranks":
            n = r.record.params.get("ranks")
            label = f"{n} rank{'s' if n != 1 else ''}" + (f", {series}" if series else "")
        out.append(r.measured(series, label))
    return out


@dataclass
class Explained:
    data: object                      # figures.FigureData
    points: list = field(default_factory=list)
    ideal: object = None              # analysis.ideal.IdealCurve
    findings: list = field(default_factory=list)

    def lines(self):
        """Text under the figure's table."""
        out = []
        if self.ideal:
            i = self.ideal
            fewest = min((p.ranks for p in self.points), default=1)
            reach = (f"reached at {i.knee:.1f} ranks" if i.knee > fewest else
                     f"which {fewest} rank{'s' if fewest != 1 else ''} already exceed{'s' if fewest == 1 else ''}")
            out.append(f"ideal (CFS Figure 3): {i.per_rank:.1f} MiB/s per rank up to the predicted "
                       f"peak {i.peak:.1f} MiB/s ({i.limited_by}), {reach}")
        out += [f.line() for f in self.findings]
        return out


def _lengthen(kind, data, results):
    """How the user of `kind`'s command makes the phases of a figure's
    points longer: raise what sets their size (studies.SizeSetting)."""
    record = next((r.record for r in results if data.figure.selects(r.record)), None)
    setting = kind.describing(record).size_setting if kind and record else None
    return setting.fix(kind, "raise") if setting else ""


def explain(figures, results, probe=None, kind=None):
    """Explained for every figure; rate-against-ranks figures get the
    ideal curve (drawn into the FigureData's curves) when there is a probe.
    `kind`: the run's, for the fixes findings name."""
    out = []
    for data in figures:
        pts = figure_points(data, results)
        e = Explained(data, pts)
        phases = {p.phase for p in pts}
        if pts and len(phases) == 1:
            phase = phases.pop()
            if probe and data.figure.x == "ranks" and data.figure.y == "rate":
                peak = probe.get("predicted_peak", {}).get(phase)
                if peak:
                    e.ideal = ideal_curve(pts, peak["mib_per_s"], peak.get("limited_by", ""))
                if e.ideal and not any(lbl.startswith("ideal") for lbl, _ in data.curves):
                    data.curves.append((f"ideal (peak {e.ideal.peak:.0f} MiB/s)",
                                        e.ideal.points(data.xs)))
            e.findings = diagnose(pts, probe, _lengthen(kind, data, results))
        out.append(e)
    return out


def explain_run(store, run_id, kind, figures):
    """(ProbeChoice, [Explained]) for a stored run's figures."""
    results = point_results(store, run_id, kind)
    choice = ProbeChoice()
    if not kind.predicts_peak:
        choice = probe_for(store, [r.doc for r in results], store.run(run_id))
        measured = results and not all(r.doc.get("predicted") for r in results)
        if not (measured and any(d.figure.x == "ranks" and d.figure.y == "rate" for d in figures)):
            choice.why_none = ""  # no figure here would take an ideal curve
    return choice, explain(figures, results, choice.doc, kind)
