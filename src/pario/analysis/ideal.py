"""The CFS report's ideal performance curve (its Figure 3): "the
performance of a perfectly scaling I/O system should increase linearly
with the number of nodes up to the peak I/O rate; once the peak rate is
reached, the performance should remain at the peak rate".

The slope is the measured rate of one rank (the steepest series of the
figure, so the curve bounds every series); the plateau is the probe's
predicted peak for the phase."""

from dataclasses import dataclass


@dataclass
class IdealCurve:
    per_rank: float     # MiB/s one rank adds (the slope)
    peak: float         # the plateau (the predicted peak)
    knee: float         # ranks where the line meets the peak
    limited_by: str = ""

    def at(self, ranks):
        return min(self.per_rank * ranks, self.peak)

    def points(self, ranks_list):
        """(x, y) to draw: every x of the figure plus the knee if inside."""
        xs = sorted(set(ranks_list))
        if xs and xs[0] < self.knee < xs[-1]:
            xs = sorted(set(xs) | {self.knee})
        return [(x, self.at(x)) for x in xs]


def ideal_curve(points, peak, limited_by=""):
    """points: MeasuredPoint of one figure; peak: MiB/s.  None when the
    figure has no rates or there is no peak."""
    if not points or not peak or peak <= 0:
        return None
    fewest = min(p.ranks for p in points)
    slope = max(p.best / p.ranks for p in points if p.ranks == fewest)
    if slope <= 0:
        return None
    return IdealCurve(per_rank=slope, peak=peak, knee=peak / slope, limited_by=limited_by)


def peak_of(probe_doc, phase):
    """(MiB/s, limited_by) of a probe result document for a phase, or
    (None, "")."""
    if not probe_doc:
        return None, ""
    p = probe_doc.get("predicted_peak", {}).get(phase)
    if not p:
        return None, ""
    return p.get("mib_per_s"), p.get("limited_by", "")
