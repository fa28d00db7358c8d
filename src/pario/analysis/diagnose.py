"""Automatic diagnosis: rules that explain a figure's numbers.

Each rule reads one figure's points (MeasuredPoint: every iteration's rate
and the engine's result document) and what the probe measured for the
target, and returns findings: the cause in one sentence and the points it
concerns.  The rules are one table (RULES); adding a rule is one function
and one line there.

    cache          a read served by the page cache (residency when the
                   read began, data against memory, a rate above what the
                   probe measured the storage to deliver), or any phase on
                   a memory-backed file system (tmpfs)
    straggler      one rank's I/O time far above the median of the others
    cliff          the rate falls by more than a third when ranks double
    above-peak     a rate above the probe's predicted peak
    grouping       a group that cannot act (G >= ranks)
    short-phase    phases too short to time against barrier/open costs
    unsteady       trials of one point far further apart than this machine's noise
    oversubscribed more ranks than cores on a host"""

import statistics
from dataclasses import dataclass, field

from ..units import format_value, on_its_side, time_unit
from .measured import relative_spread, series_of

# A rank is a straggler when its I/O takes this many times the median of
# the other ranks (and at least STRAGGLER_MIN_SECONDS longer) in most iterations.
STRAGGLER_FACTOR = 2.0
STRAGGLER_MIN_SECONDS = 0.010
# The CFS report's cliff: the rate falls by more than a third as ranks double.
CLIFF_DROP = 1.0 / 3.0
# Rates within this much of the peak are "at the peak" even with one iteration.
PEAK_NOISE_FLOOR = 0.10
# A phase shorter than this is dominated by barrier and open/close costs.
SHORT_PHASE_SECONDS = 0.05
# Trials of one point further apart than this (best / lowest) are not one
# rate measured with noise.  From this machine's own noise: 1945 stored
# points of 2 to 5 trials (slowest trial 50 ms or more) of every run on
# this 2-core VM, shared with other jobs, on 2026-11-22 (tmpfs and disk,
# every API): best / lowest had a median of 1.6x, 90 % of points within
# 3.9x, 95 % within 6.8x; 10x is beyond the spread of 97 % of them, so
# what passes it is a trial of another kind (a cache hit, a stall), not
# noise.  A quieter machine only makes the line rarer.
UNSTEADY_RATIO = 10.0
# Residency from which a read counts as cache-served.
RESIDENT_FRACTION = 0.5


def _time_text(seconds):
    """0.04 ms read 0.0 ms: '40 µs', in the unit that keeps it readable."""
    unit, scale = time_unit(seconds)
    return f"{format_value(seconds / scale)} {unit}"


@dataclass
class Context:
    """What the rules know beyond the points: the probe of the target
    (a pario.result/1 document of `probe`, or None), and how the user of
    the command that ran them makes a point's phases longer ("raise
    --size", an experiment key: studies.SizeSetting; "" if nothing)."""
    probe: dict = None
    lengthen: str = ""

    def peak(self, phase):
        p = (self.probe or {}).get("predicted_peak", {}).get(phase)
        return (p["mib_per_s"], p.get("limited_by", "")) if p else (None, "")

    def storage_rate(self, phase):
        """The storage term: one stream (cache out of the way) x servers."""
        p = (self.probe or {}).get("predicted_peak", {}).get(phase)
        return p.get("storage_term_mib_per_s") if p else None

    def probe_noise(self, phase):
        c = (self.probe or {}).get("components", {}).get(f"stream_{phase}", {})
        rates = c.get("mib_per_s", {}).get("values", [])
        return relative_spread(rates)


@dataclass
class Finding:
    rule: str
    text: str
    points: list = field(default_factory=list)   # labels of the points concerned

    def line(self):
        where = f" [{'; '.join(self.points)}]" if self.points else ""
        return f"{self.rule}: {self.text}{where}"


def _fmt(v):
    return format_value(v) if v < 1000 else f"{v:.0f}"


def _size(n):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}".replace(".0 ", " ")
    return f"{n} B"


# --- the rules ----------------------------------------------------------------

def _cache_evidence(p, ctx):
    """Reasons this read point was served from memory, strongest first."""
    t, prm = p.target(), p.params()
    if t.get("memory_backed"):
        return [f"the target is {t.get('fs_type', 'memory-backed')}: every byte is in memory"]
    if p.phase != "read":
        return []
    why = []
    resident = [it.get("cache_resident_fraction") for it in p.iterations()]
    resident = [r for r in resident if r is not None]
    if resident and max(resident) > RESIDENT_FRACTION and not prm.get("direct"):
        why.append(f"{100 * max(resident):.0f}% of the file was in the page cache when a read began")
    data = prm.get("file_bytes", 0) * prm.get("file_count", 1)
    mem = t.get("node_memory_bytes") or 0
    if data and mem and data < 2 * mem and not (prm.get("direct") or prm.get("evict")):
        why.append(f"the data ({_size(data)}) is smaller than twice the node's memory "
                   f"({_size(mem)}) and neither --evict nor --direct was used")
    if prm.get("layout") == "broadcast" and p.ranks > 1:
        why.append("every rank reads the same file, so the ranks after the first find its pages "
                   "in the cache (the CFS report's broadcast beat its peak the same way)")
    storage = ctx.storage_rate("read")
    if storage and p.best > storage * (1 + max(PEAK_NOISE_FLOOR, ctx.probe_noise("read"))):
        why.append(f"{_fmt(p.best)} MiB/s is above the {_fmt(storage)} MiB/s the probe measured "
                   "the storage to deliver with the cache out of the way")
    return why


def rule_cache(points, ctx):
    hit = [(p, _cache_evidence(p, ctx)) for p in points]
    hit = [(p, why) for p, why in hit if why]
    if not hit:
        return []
    # the evidence of the point with the most reasons speaks for all
    _, why = max(hit, key=lambda h: len(h[1]))
    phase = hit[0][0].phase
    # a kernel's point has no phase of its own (perf, flashio, b_eff_io): its I/O
    what = ("reads served by the page cache, not the storage" if phase == "read"
            else f"{phase + 's' if phase else 'I/O'} served by memory, not the storage")
    return [Finding("cache", what + ": " + "; ".join(why), [p.label for p, _ in hit])]


def _rank_hosts(doc):
    out = {}
    for h in doc.get("mpi", {}).get("hosts", []):
        for r in h.get("ranks", []):
            out[r] = h.get("name", "?")
    return out


def rule_straggler(points, ctx):
    """A rank that is slow in most iterations, not once: one slow
    iteration on a shared machine is noise, a slow node is slow every time."""
    found = []
    for p in points:
        its = [it for it in p.iterations() if len(it.get("ranks", [])) >= 2]
        slow = {}  # rank -> [(ratio, seconds, reference, iteration)]
        for it in its:
            busy = {r["rank"]: r["io_last_seconds"] - r["io_first_seconds"] for r in it["ranks"]}
            for rank, t in busy.items():
                ref = statistics.median(v for k, v in busy.items() if k != rank)
                if t - ref >= STRAGGLER_MIN_SECONDS and t >= STRAGGLER_FACTOR * max(ref, 1e-9):
                    slow.setdefault(rank, []).append((t / max(ref, 1e-9), t, ref, it.get("iteration")))
        for rank, hits in slow.items():
            if 2 * len(hits) <= len(its):
                continue
            ratio, t, ref, iteration = max(hits)
            host = _rank_hosts(p.doc).get(rank, "?")
            found.append(Finding(
                "straggler",
                f"rank {rank} on {host} was slow in {len(hits)} of {len(its)} iterations: up to "
                f"{t:.3f} s in I/O, {ratio:.1f}x the median of the other ranks ({ref:.3f} s); "
                "the phase waits for it",
                [p.label]))
    return found


def _too_short(p):
    """Whether a trial of the point was too short to time (the short-phase
    rule's SHORT_PHASE_SECONDS): its rate is then mostly open, close and
    barrier costs, and no trend may be read from it."""
    secs = p.phase_seconds()
    return bool(secs) and min(secs) < SHORT_PHASE_SECONDS


def rule_cliff(points, ctx):
    found = []
    for series, pts in series_of(points).items():
        by_ranks = {p.ranks: p for p in pts}
        for p in pts:
            q = by_ranks.get(2 * p.ranks)
            if not q or _too_short(p) or _too_short(q):
                continue  # the short-phase finding says why these rates are not the storage's
            # both the best and the median fall: one lucky trial is not a cliff
            if q.best < (1 - CLIFF_DROP) * p.best and q.median < (1 - CLIFF_DROP) * p.median:
                drop = 1 - q.best / p.best
                found.append(Finding(
                    "cliff",
                    f"the rate falls {100 * drop:.0f}% from {p.ranks} to {q.ranks} ranks "
                    f"({_fmt(p.best)} -> {_fmt(q.best)} MiB/s, {series}): more streams than the "
                    "storage or its cache serves well (as the CFS report's partitioned reads fell "
                    "at 64 nodes)",
                    [q.label]))
    return found


def rule_above_peak(points, ctx):
    if not points:
        return []
    phase = points[0].phase
    peak, limited_by = ctx.peak(phase)
    if not peak:
        return []
    over = []
    for p in points:
        noise = max(PEAK_NOISE_FLOOR, relative_spread(p.rates), ctx.probe_noise(phase))
        if p.best > peak * (1 + noise):
            over.append(p)
    if not over:
        return []
    top = max(over, key=lambda p: p.best)
    cached = [p for p in over if _cache_evidence(p, ctx)]
    if len(cached) == len(over):
        cause = "the page cache serves it (see the cache finding)"
    elif any(p.ranks == 1 for p in over):
        cause = ("one rank already beats the probe's one stream: the target was faster than when "
                 "it was probed (a shared machine? probe again) or a cache below the file system "
                 "(a virtual disk cached by its host, a RAID controller) absorbs it")
    elif phase == "write":
        cause = ("the storage absorbs several streams faster than one: probe with --servers "
                 "set to its independent units, or the writes are not reaching the device")
    else:
        cause = "several streams read faster than one: probe with --servers, or a cache serves it"
    return [Finding("above-peak",
                    f"up to {_fmt(top.best)} MiB/s, above the predicted peak of {_fmt(peak)} MiB/s "
                    f"(limited by {limited_by or 'the probe'}) by more than the noise: {cause}",
                    [p.label for p in over])]


def rule_grouping(points, ctx):
    inert = [p for p in points if 0 < (p.params().get("group") or 0) >= p.ranks]
    if not inert:
        return []
    g = inert[0].params()["group"]
    return [Finding("grouping",
                    f"grouping G={g} cannot act at {', '.join(map(str, sorted({p.ranks for p in inert})))} "
                    "rank(s): "
                    "at most G ranks do I/O at once, and there are no more than G",
                    [p.label for p in inert])]


def rule_short_phase(points, ctx):
    short = []
    for p in points:
        secs = p.phase_seconds()
        if secs and min(secs) < SHORT_PHASE_SECONDS:
            short.append((p, min(secs)))
    if not short:
        return []
    shortest = min(s for _, s in short)
    comps = (ctx.probe or {}).get("components", {})
    # with a probe the fixed costs are known, and named as the share they
    # are (tester 7: "weigh on the rate" beside "0.0% of the shortest phase")
    weigh = "barrier, open and close costs and timer noise weigh on the rate"
    if comps:
        oc = comps.get("open_write_byte_close_seconds", {}).get("best") or 0
        bar = comps.get("barrier_seconds", {}).get("best") or 0
        weigh = (f"timer noise and each trial's start weigh on the rate; barrier, open and close are "
                 f"{100 * (oc + 2 * bar) / shortest:.1f}% of the shortest phase (the probe: open/close "
                 f"{oc * 1e6:.0f} us, barrier {bar * 1e6:.1f} us)")
    return [Finding("short-phase",
                    f"phases as short as {_time_text(shortest)}: {weigh}" + (f"; {ctx.lengthen}" if ctx.lengthen else ""),
                    [p.label for p, _ in short])]


def rule_unsteady(points, ctx):
    """A best-of-N whose trials differ wildly: the best is then one lucky
    (or cached) trial, not the rate the point sustains, and the table alone
    would not say so.  One line names every such point with its spread."""
    def timeable(p):  # every trial too short to time: the short-phase finding says so
        secs = p.phase_seconds()
        return not secs or max(secs) >= SHORT_PHASE_SECONDS

    wild = sorted(((p.best / p.worst, p) for p in points
                   if len(p.rates) > 1 and p.worst > 0 and p.best / p.worst > UNSTEADY_RATIO
                   and timeable(p)),
                  key=lambda h: -h[0])
    if not wild:
        return []
    ratio, top = wild[0]
    # decimals near the threshold, so 10.5x does not read '10x, beyond 10x'
    times = on_its_side(ratio, lambda v: v > UNSTEADY_RATIO, decimals=0)
    return [Finding("unsteady",
                    f"trials of one point differ up to {times}x ({top.label}: {_fmt(top.worst)} to "
                    f"{_fmt(top.best)} MiB/s over {len(top.rates)} trials), beyond this machine's "
                    f"noise ({UNSTEADY_RATIO:g}x): the best is not a steady rate (a cache, other jobs, "
                    "a device stalling); run more --iterations, or on a quiet machine",
                    [p.label for _, p in wild])]


def rule_oversubscribed(points, ctx):
    hit, what = [], ""
    for p in points:
        for h in p.doc.get("mpi", {}).get("hosts", []):
            n, cores = len(h.get("ranks", [])), h.get("cores") or 0
            if cores and n > cores:
                hit.append(p)
                what = what or f"{n} ranks on {cores} cores of {h.get('name', '?')}"
                break
    if not hit:
        return []
    return [Finding("oversubscribed",
                    f"more ranks than cores (e.g. {what}): waiting ranks take CPU from ranks "
                    "doing I/O, so these rates understate the storage",
                    [p.label for p in hit])]


RULES = [rule_cache, rule_straggler, rule_cliff, rule_above_peak, rule_grouping,
         rule_short_phase, rule_unsteady, rule_oversubscribed]
# Rules about how a measurement was taken (this host's page cache, its
# timer and barriers, its cores): they say nothing of a point the model
# predicted, which has no cache, timer or cores of this host.  A straggler
# is a rank on a host that was slow: a predicted rank has no host, and its
# lag is the model's own queueing, which the point's bound line explains.
MEASUREMENT_RULES = (rule_cache, rule_straggler, rule_short_phase, rule_unsteady,
                     rule_oversubscribed)


def diagnose(points, probe=None, lengthen=""):
    """Every rule's findings for one figure's points (of one phase)."""
    ctx = Context(probe=probe, lengthen=lengthen)
    predicted = bool(points) and all(p.doc.get("predicted") for p in points)
    out = []
    for rule in RULES:
        if not (predicted and rule in MEASUREMENT_RULES):
            out.extend(rule(points, ctx))
    return out
