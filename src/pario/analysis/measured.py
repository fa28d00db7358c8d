"""What the analysis reads: one figure's measured points.

A point is one engine run's phase (write or read) at one x (ranks) in one
series (block size, mode...), with the rate of every iteration and the
engine's result document (pario.result/1), which holds the per-rank
timings, the hosts, the target and the parameters."""

import statistics
from dataclasses import dataclass, field


@dataclass
class MeasuredPoint:
    phase: str                 # "write" or "read"
    ranks: int
    series: str                # the series label ("64 KiB")
    rates: list                # MiB/s of every iteration
    doc: dict = field(default_factory=dict)
    label: str = ""            # how findings name it, e.g. "4 ranks, 64 KiB"
    test: str = ""             # the study's test (figure) it belongs to, e.g. "partitioned"
    plan: dict = field(default_factory=dict)  # the plan point's parameters (what made it)
    # The times of the timed phases behind the rates, for documents without
    # io's per-iteration phases (the kernels: FLASH-IO's time per file).
    seconds: list = field(default_factory=list)
    # For `compare` (the study kind's description, pario.runs): what the
    # point is, what it measured ("block write", "T_T") in which quantity
    # (its unit and which way is better: `rates` may then be times), and
    # a few words its row adds ("ran ungrouped").
    identity: dict = field(default_factory=dict)
    measure: str = ""
    quantity: object = None
    note: str = ""
    names: dict = field(default_factory=dict)   # its kind's {parameter: figures.Param}

    def __post_init__(self):
        if not self.label:
            self.label = f"{self.ranks} rank{'s' if self.ranks != 1 else ''}, {self.series}"

    @property
    def better(self):
        return getattr(self.quantity, "better", "max")

    @property
    def best(self):
        return min(self.rates) if self.better == "min" else max(self.rates)

    @property
    def median(self):
        return statistics.median(self.rates)

    @property
    def worst(self):
        return max(self.rates) if self.better == "min" else min(self.rates)

    def phase_doc(self):
        """The phase's entry of the result document, or {}."""
        for ph in self.doc.get("phases", []):
            if ph.get("name") == self.phase:
                return ph
        return {}

    def iterations(self):
        return self.phase_doc().get("iterations", [])

    def phase_seconds(self):
        """The time of every timed phase behind the rates: the io
        document's iterations, else what the kind said (`seconds`)."""
        secs = [it["seconds"] for it in self.iterations() if it.get("seconds") is not None]
        return secs or [s for s in self.seconds if s is not None]

    def params(self):
        return self.doc.get("params", {})

    def target(self):
        return self.doc.get("target", {})


def relative_spread(rates):
    """(best - median) / best: how far a typical iteration falls below the
    best; 0 for one iteration."""
    if not rates or max(rates) <= 0:
        return 0.0
    return (max(rates) - statistics.median(rates)) / max(rates)


def series_of(points):
    """{series: [points sorted by ranks]}, in first-seen order."""
    out = {}
    for p in points:
        out.setdefault(p.series, []).append(p)
    for pts in out.values():
        pts.sort(key=lambda p: p.ranks)
    return out
