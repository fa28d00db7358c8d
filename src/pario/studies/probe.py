"""Kind `probe`: the component rates of the path from a rank's memory to
the storage behind --dir, and the peak they predict (the CFS report's
Tables 1-3; `pario-engine probe`, docs/result-schema.md).

One point per rank count (default: the cores here, so the memory term is
the node's).  Its tables are the report's Table 2 (measured rates, MiB/s)
and Table 3 (overheads, seconds) with the predicted peak.  Runs of other
kinds on the same host and file system find the latest probe
(`pario.probes`) and draw its peak as the ideal curve."""

import json
import math
import shlex
from dataclasses import dataclass, field

from .. import schema
from ..errors import UsageError
from ..figures import Param, Quantity, Record, size_param
from ..launch import cores
from ..units import engine_size, format_size, format_value, parse_size
from . import Kind, Measure, Option, SizeSetting, csv_list, positive_int, refuse_repeats
from .io import int_list, setting, sweep_of


@dataclass
class ProbePoint:
    ranks: int
    size: int
    iterations: int
    servers: int
    memory: int
    ops: int
    block: int = 1 << 20   # bytes per call of the storage stream
    test_id: str = "probe"
    title: str = "component rates"
    extra: list = field(default_factory=list)

    def engine_args(self, directory, json_path, earlier=None):
        return ["probe", "--dir", str(directory), "--size", engine_size(self.size),
                "--memory", engine_size(self.memory), "--ops", str(self.ops),
                "--iterations", str(self.iterations), "--servers", str(self.servers),
                "--block", engine_size(self.block), "--json", str(json_path), *self.extra]

    def space_needs(self, directory):
        """(directory, bytes) the engine writes there: the one stream file,
        the largest thing it holds at once (every pass writes or reads that
        file again, one at a time; the metadata files are empty and the
        one-byte and collective files a byte per rank), held against the
        free space before anything runs, as the engine itself would
        (probe_options.c), rather than stored as a run of failed points."""
        return [(directory, self.size)]

    def takes_name(self):
        return True

    def remember(self, result, earlier):
        """Nothing feeds later points."""

    def summary(self, result):
        p = result["predicted_peak"]
        return (f"predicted peak write {p['write']['mib_per_s']:.0f} MiB/s, "
                f"read {p['read']['mib_per_s']:.0f} MiB/s")

    def label(self):
        return f"probe ranks={self.ranks} stream={format_size(self.size)} in {format_size(self.block)} calls"

    def columns(self):
        return {"title": self.title, "layout": "probe", "files": "", "api": "posix",
                "block_bytes": self.block, "size_bytes": self.size, "group_size": 0}

    def params(self):
        return {"test": self.test_id, "ranks": self.ranks, "size": self.size,
                "iterations": self.iterations, "servers": self.servers, "memory": self.memory,
                "ops": self.ops, "block": self.block}


def _round_trips(which):
    """Round trips to the nearest or farthest rank; with 2 ranks both are
    rank 1, one pair measured twice: "one" pools both measurements, and the
    nearest and farthest rows are left out."""
    def get(c):
        rr = c.get("request_reply") or {}
        if not rr.get("nearest"):
            return []
        one = rr["farthest"]["to_rank"] == rr["nearest"]["to_rank"]
        pairs = (("nearest", "farthest") if one else ()) if which == "one" else \
            (() if one else (which,))
        return [r for p in pairs for r in _rates(4096, rr[p]["round_trip_seconds"]["values"])]
    return get


def _rates(nbytes, seconds):
    """MiB/s of each trial that moved `nbytes` in its seconds; a trial of
    no time has no rate (left out, as a division by zero would fail)."""
    return [nbytes / 1048576 / t for t in seconds if t]


def _two(key):
    def get(c):
        m = c.get(key)
        return _rates(m["bytes"], m["seconds"]["values"]) if m else []
    return get


def _buffer(key):
    def get(c):
        b = c.get("buffer_streams")
        return _rates(b["bytes"], b[key]["values"]) if b and key in b else []
    return get


def _messages(c):
    m = c.get("messages")
    return _rates(m["bytes"], m["seconds"]["values"]) if m else []


# The components in the order of the report's tables:
# (key, table, label, unit, better, how to read every trial from `components`)
COMPONENTS = [
    ("memory", 2, "memory copy, all ranks at once", "MiB/s", "max",
     lambda c: c["memory_copy"]["aggregate_mib_per_s"]["values"]),
    ("memory_rank", 2, "memory copy, slowest rank", "MiB/s", "max",
     lambda c: [min(c["memory_copy"]["per_rank_best_mib_per_s"])]),
    ("rr_near", 2, "request/reply 4 KiB, nearest rank", "MiB/s", "max", _round_trips("nearest")),
    ("rr_far", 2, "request/reply 4 KiB, farthest rank", "MiB/s", "max", _round_trips("farthest")),
    ("rr_one", 2, "request/reply 4 KiB, the other rank (nearest = farthest with 2 ranks; both "
     "measurements)", "MiB/s", "max", _round_trips("one")),
    ("stream_write", 2, "storage, one stream write (preallocated, fsync)", "MiB/s", "max",
     lambda c: c["stream_write"]["mib_per_s"]["values"]),
    ("stream_read", 2, "storage, one stream read (cache kept out)", "MiB/s", "max",
     lambda c: c["stream_read"]["mib_per_s"]["values"]),
    ("stream_read_cached", 2, "storage, one stream read again (in the page cache)", "MiB/s", "max",
     lambda c: (c.get("stream_read_cached") or {}).get("mib_per_s", {}).get("values", [])),
    ("stream_read_short", 2, "storage, the stream's last eighth read (cache kept out)", "MiB/s", "max",
     _two("stream_read_short")),
    ("stream_write_new", 2, "storage, one stream write into a new file (no space reserved, fsync)",
     "MiB/s", "max", _two("stream_write_new")),
    ("two_writers", 2, "storage, two streams written at once (ranks 0, 1; fsync)", "MiB/s", "max",
     _two("two_writers")),
    ("two_files", 2, "storage, two writers of a file each (ranks 0, 1; fsync)", "MiB/s", "max",
     _two("two_files")),
    ("two_streams", 2, "storage, two streams read at once (ranks 0, 1; cache kept out)", "MiB/s", "max",
     _two("two_streams")),
    ("two_interleaved", 2, "storage, two interleaved readers (ranks 0, 1; every other block)",
     "MiB/s", "max", _two("two_interleaved")),
    ("four_streams", 2, "storage, four readers at once (ranks 0, 1; two threads each)", "MiB/s", "max",
     _two("four_streams")),
    ("four_interleaved", 2, "storage, four interleaved readers (ranks 0, 1; two threads each; every "
     "fourth block)", "MiB/s", "max", _two("four_interleaved")),
    ("two_same", 2, "storage, two readers of the same bytes (ranks 0, 1; each all of it)", "MiB/s",
     "max", _two("two_same")),
    ("four_short_streams", 2, "storage, four readers of short shares (one read-ahead window each, "
     "the file's last)", "MiB/s", "max", _two("four_short_streams")),
    ("messages", 2, "MPI messages of one call's size, rank 1 to 0", "MiB/s", "max", _messages),
    ("barrier", 3, "globally synchronize all ranks (barrier)", "s", "min",
     lambda c: c["barrier_seconds"]["values"]),
    ("token_pass", 3, "token hand-over, ring of all ranks", "s", "min",
     lambda c: (c.get("token_pass") or {}).get("seconds", {}).get("values", [])),
    ("token_pass_crowded", 3, "token hand-over, a yielding thread beside each rank", "s", "min",
     lambda c: (c.get("token_pass") or {}).get("crowded_seconds", {}).get("values", [])),
    ("token_pass_shared_core", 3, "token hand-over, ranks 0 and 1 on one core", "s", "min",
     lambda c: (c.get("token_pass") or {}).get("shared_core_seconds", {}).get("values", [])),
    ("busy_handover", 3, "hand-over between yielding waiters, a busy thread on every core", "s", "min",
     lambda c: (c.get("busy_handover") or {}).get("seconds", {}).get("values", [])),
    ("collective_write", 3, "collective MPI-IO write call, 1 byte per rank", "s", "min",
     lambda c: (c.get("collective_mpiio") or {}).get("write_seconds", {}).get("values", [])),
    ("collective_read", 3, "collective MPI-IO read call, 1 byte per rank", "s", "min",
     lambda c: (c.get("collective_mpiio") or {}).get("read_seconds", {}).get("values", [])),
    ("collective_open", 3, "collective MPI-IO open and close, every rank", "s", "min",
     lambda c: (c.get("collective_mpiio") or {}).get("open_close_seconds", {}).get("values", [])),
    ("buffer_write", 2, "storage, collective-buffer calls, one writer (new file, fsync)", "MiB/s", "max",
     _buffer("write_seconds")),
    ("buffer_read", 2, "storage, collective-buffer calls, one reader (cache kept out)", "MiB/s", "max",
     _buffer("read_seconds")),
    ("buffer_writers", 2, "storage, collective-buffer calls, two writers, then their fsyncs "
     "(ranks 0, 1)", "MiB/s", "max", _buffer("two_writers_seconds")),
    ("buffer_readers", 2, "storage, collective-buffer calls, two readers at once (ranks 0, 1)", "MiB/s",
     "max", _buffer("two_readers_seconds")),
    ("buffer_four_readers", 2, "storage, collective-buffer calls, four readers at once (ranks 0, 1, "
     "a thread each)", "MiB/s", "max", _buffer("four_readers_seconds")),
    ("open_read", 3, "open / read a byte / close", "s", "min",
     lambda c: c["open_read_byte_close_seconds"]["values"]),
    ("open_write", 3, "open / write a byte / close", "s", "min",
     lambda c: c["open_write_byte_close_seconds"]["values"]),
    ("lock", 3, "byte-range lock and unlock (fcntl)", "s", "min",
     lambda c: (c.get("byte_range_lock_seconds") or {}).get("values", [])),
    ("creates", 4, "creates (all ranks at once)", "1/s", "max",
     lambda c: c["metadata"]["creates_per_s"]["values"]),
    ("stats", 4, "stats (all ranks at once)", "1/s", "max",
     lambda c: c["metadata"]["stats_per_s"]["values"]),
    ("removes", 4, "removes (all ranks at once)", "1/s", "max",
     lambda c: c["metadata"]["removes_per_s"]["values"]),
]


# The read passes whose device requests the probe counts (the kernel's
# read-ahead cut each into requests of the device behind --dir).
DEVICE_PASSES = (("stream_read", "one stream"), ("two_streams", "two streams"),
                 ("two_interleaved", "two interleaved readers"), ("four_streams", "four readers"),
                 ("four_interleaved", "four interleaved readers"), ("two_same", "two readers of the same bytes"),
                 ("four_short_streams", "four readers of short shares"))


# A trial's device bytes are the pass's own within this fraction of its
# file's bytes: the engine's DEVICE_OWN_TOLERANCE (probe.h says why), for
# the documents of a probe made before it recorded its own verdict.
DEVICE_OWN_TOLERANCE = 0.05


def device_own_trials(component):
    """[(requests, bytes, own)] of a read pass's trials: own is False where
    the device's bytes were not the pass's file's (another process read the
    same device during it: the counters are the whole device's).  The
    engine's own verdict where it recorded one, else the same rule against
    the row's bytes; [] where the device was not asked (tmpfs)."""
    d = (component or {}).get("device_reads")
    if not d or not d.get("requests"):
        return []
    own = d.get("own")
    if own is None:
        size = d.get("file_bytes") or component.get("bytes") or 0
        own = [size > 0 and abs(b - size) <= DEVICE_OWN_TOLERANCE * size for b in d["bytes"]]
    return list(zip(d["requests"], d["bytes"], own))


def device_request_bytes(component):
    """Median bytes per device read request over a read pass's own trials,
    or None where the device was not asked (tmpfs) or no trial was the
    pass's own (the device served other processes during each)."""
    each = sorted(b / n for n, b, own in device_own_trials(component) if n and own)
    return each[len(each) // 2] if each else None


def device_foreign(component):
    """'k of n trials read X MiB from the device for a Y MiB file' where a
    trial's device bytes were not the pass's own, else ''."""
    trials = device_own_trials(component)
    bad = [b for _, b, own in trials if not own]
    if not bad:
        return ""
    size = component["device_reads"].get("file_bytes") or component.get("bytes") or 0
    return (f"{len(bad)} of {len(trials)} trial(s) read "
            f"{', '.join(f'{b / (1 << 20):.1f}' for b in bad)} MiB from the device for a "
            f"{size / (1 << 20):.1f} MiB file")


def _fmt(v, unit):
    """A row's value: a time in microseconds (Table 3: a barrier of 0.14,
    a busy hand-over of 1592; as seconds, seven decimals showed the
    barrier as 0.0000001), four significant digits; a rate as rates print."""
    if unit == "s":
        return format_value(v * 1e6, ".4g")
    return format_value(v) if v < 1e4 else f"{v:.0f}"


# Rows measured at the probe point's call size: one row per --stream-blocks size.
# Components that mean something only with this many ranks: a barrier of
# one rank synchronizes nothing (its few nanoseconds are a function call).
NEEDS_RANKS = {"barrier": 2}

STREAMS = ("stream_write", "stream_read", "stream_read_cached", "stream_read_short",
           "stream_write_new", "two_writers", "two_files", "two_streams", "two_interleaved", "four_streams",
           "four_interleaved", "two_same", "four_short_streams", "messages")
DEFAULT_BLOCK = 1 << 20


def short_read_bytes(size, block):
    """The bytes of the probe's short stream read (its last eighth, in
    whole calls: probe_cmd.c), 0 where a call is above an eighth of the
    stream and the probe measures no such row."""
    return size // 8 // block * block


def size_for_short_reads(block):
    """The smallest --size (whole MiB) whose short read holds a call of `block`."""
    return -(-8 * block // (1 << 20)) << 20


def _block(record):
    return record.params.get("block") or DEFAULT_BLOCK


# The options of a stored probe that its command line repeats (the rest
# -- --db, --timeout, the launcher -- are where and how, not what).
_REPEATED = (("ranks", "--ranks"), ("size", "--size"), ("iterations", "--iterations"),
             ("servers", "--servers"), ("stream_blocks", "--stream-blocks"), ("mpi", "--mpi"))


def probe_command(run, **changes):
    """The 'pario probe ...' line that makes a probe like stored `run`
    (a runs row) again, in its own directory, with `changes` (option name
    to text, e.g. stream_blocks="4k,64k,1m") in place of its own values:
    the fix a refusal names."""
    options = json.loads(run.get("options_json") or "{}")
    words = ["pario probe --dir", shlex.quote(run.get("dir") or options.get("dir") or "DIR")]
    if options.get("quick"):
        words.append("--quick")
    for name, flag in _REPEATED:
        value = changes.get(name, options.get(name))
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        if value not in (None, "", "auto"):
            words += [flag, shlex.quote(str(value))]
    return f"'{' '.join(words)}'"


def standing_probe(store, run_id):
    """(documents, peak document) of a probe run that may stand for its
    machine, else UsageError with the one line why not.  The one rule for
    the ideal curves, the above-peak findings and 'pario model --machine
    probe:N': the probe ran to the end (a stopped one lacks rows), and its
    peak point -- the largest rank count at 1 MiB calls, else at its
    largest calls, whose peak its tables show -- succeeded (a stopped or
    failed one leaves the peak of its 4 KiB calls).  The documents are the
    ok points of that rank count only: points are keyed by call size, and
    another rank count's rows would overwrite them."""
    run = store.run(run_id)
    if run.get("status") != "complete":
        raise UsageError(f"probe run {run_id} is {run.get('status')}, not complete: it lacks measured "
                         f"rows and its peak; run {probe_command(run)} again to the end")
    points = store.points(run_id)
    ranks = max((p["ranks"] or 0 for p in points), default=0)
    here = [p for p in points if (p["ranks"] or 0) == ranks]
    blocks = {p["block_bytes"] or DEFAULT_BLOCK for p in here}
    main = DEFAULT_BLOCK if DEFAULT_BLOCK in blocks else max(blocks, default=DEFAULT_BLOCK)
    peak = next((p for p in here if (p["block_bytes"] or DEFAULT_BLOCK) == main), None)
    if peak is None or peak["status"] != "ok" or not peak["result_json"]:
        why = f" ({peak['error']})" if peak is not None and peak["error"] else ""
        raise UsageError(f"probe run {run_id}'s peak point ({ranks} rank(s), {format_size(main)} calls) "
                         f"failed{why}: its peak was not measured; run {probe_command(run)} again")
    docs = [json.loads(p["result_json"]) for p in here if p["status"] == "ok" and p["result_json"]]
    return docs, json.loads(peak["result_json"])


def _better(key):
    return next((b for k, _, _, _, b, _ in COMPONENTS if k == key), "max")


def component_trials(records, key):
    """Every trial of component `key` among `records` (those of one rank
    count).  A stream row is measured at its point's call size: pass that
    point's records.  Every other component (memory copy, round trips,
    barrier, open/close, tokens, collective calls, metadata) is measured
    the same way at every point, so all points' trials are its trials:
    Table 2 and 3 show their best; the model's probed machine takes the
    best of a measured run's number of trials they expect
    (`component_expected_best`, model/probed.py)."""
    return [v for r in records if r.params["component"] == key for v in r.values["value"]
            if v is not None]


def expected_best(values, draws, better="max"):
    """The best of `draws` trials that `values` (every trial measured)
    expect: the mean, over every way of picking `draws` of them, of the
    pick's best (the unbiased estimate of that order statistic).  With
    `draws` >= len(values) it is simply their best.

    Why the model wants it: a measured point's figure is the best of its own
    few trials (3 in the presets), and each probe stream row is the best of
    its point's 3 trials; a row every probe point measures alike pools all
    points' trials (9 for 3 call sizes), and the best of 9 draws of a noisy
    rate lies further out than the best of 3 (on this host's collective-
    buffer writes, 1462 MiB/s against a median of 1044).  Taking such rows
    as the best of one point's number of trials makes every row the same
    statistic as every other row and as the figures they predict."""
    ordered = sorted(values, reverse=(better == "max"))  # best first
    n = len(ordered)
    if not n:
        return None
    if draws >= n:
        return ordered[0]
    # The i-th best (0-based) is a pick's best in C(n-1-i, draws-1) of the C(n, draws) picks.
    picks = math.comb(n, draws)
    return sum(v * math.comb(n - 1 - i, draws - 1) for i, v in enumerate(ordered)) / picks


def component_expected_best(records, key, draws=None):
    """`expected_best` of a pooled row: the best of `draws` trials (None:
    one point's number of trials, its --iterations) that every point's
    trials together expect; None if it was not measured."""
    per_point = [len(r.values["value"]) for r in records if r.params["component"] == key]
    vals = component_trials(records, key)
    if not vals:
        return None
    return expected_best(vals, draws or max(per_point), _better(key))


def probe_tables(records):
    """The CFS report's Tables 2 and 3 (and the metadata rates) of a probe
    run's records, each (caption, head, rows, notes): the one source of the
    text tables and the report's HTML tables.  One set per rank count.
    A probe of several stream call sizes (--stream-blocks) adds a stream
    row per call size, each the best of its point's trials; every other
    component is the best of every point's trials (each point measures it
    alike); the predicted peak is the engine's, of the 1 MiB point (else
    the largest call size), which other runs draw as their ideal curve."""
    out = []
    for ranks in sorted({r.params["ranks"] for r in records}):
        here = [r for r in records if r.params["ranks"] == ranks]
        blocks = sorted({_block(r) for r in here})
        main = DEFAULT_BLOCK if DEFAULT_BLOCK in blocks else blocks[-1]
        mine = {r.params["component"]: r for r in here if _block(r) == main}
        if not mine:
            continue
        any_r = next(iter(mine.values()))
        where = f"{any_r.params['target']} on {any_r.params['host']}, {ranks} rank(s)"
        tables = {2: [], 3: [], 4: []}
        counts = {"stream": set(), "pooled": set()}

        def row(label, unit, better, vals, kind):
            best = max(vals) if better == "max" else min(vals)
            worst = min(vals) if better == "max" else max(vals)
            mid = sorted(vals)[len(vals) // 2]
            spread = f"{_fmt(worst, unit)}-{_fmt(mid, unit)}" if len(vals) > 1 else ""
            counts[kind].add(len(vals))
            return [label, _fmt(best, unit), spread, str(len(vals))]

        for key, table, label, unit, better, _ in COMPONENTS:
            if ranks < NEEDS_RANKS.get(key, 1):  # a one-rank barrier synchronizes nothing
                continue
            if key in STREAMS:  # measured at a call size: each row names it, one size or several
                for b in blocks:
                    vals = component_trials([x for x in here if _block(x) == b], key)
                    if vals:  # the short read of an eighth less than one call: at the others
                        tables[table].append(row(f"{label}, {format_size(b)} calls", unit, better,
                                                 vals, "stream"))
                continue
            vals = component_trials(here, key)
            if vals:
                tables[table].append(row(label, unit, better, vals, "pooled"))
        notes = []
        for phase in ("write", "read"):
            p = mine.get(f"peak_{phase}")
            if p:
                tables[2].append([f"predicted peak, {phase}", _fmt(p.values["value"][0], "MiB/s"),
                                  f"= {p.params['parallelism']} x {_fmt(p.params['per_unit'], 'MiB/s')}"
                                  f" ({p.params['limited_by']})", ""])
        if "stream_read" in mine:
            notes.append(f"the stream read kept the page cache out with: {mine['stream_read'].params['method']}")
            ahead = mine["stream_read"].params.get("read_ahead")
            if ahead:
                notes.append(f"the device's largest read-ahead window (read_ahead_kb): {format_size(ahead)}; "
                             "a read's first window is sized from its call up to it")
            elif ahead == 0:  # a block device with read-ahead switched off, not "no device"
                notes.append("the device's read-ahead is off (read_ahead_kb 0): every read waits for "
                             "its own call's pages")
        for b in blocks:  # how the kernel's read-ahead cut each read pass into device requests
            sizes = {r.params["component"]: r.params.get("device_request_bytes") for r in here
                     if _block(r) == b and r.params.get("device_request_bytes")}
            if sizes:
                notes.append(f"device read requests at {format_size(b)} calls (median of trials): " +
                             ", ".join(f"{label} {sizes[k] / 1024:.0f} KiB" for k, label in DEVICE_PASSES
                                       if k in sizes) + " each")
            # the device's counters are the whole device's: a trial during
            # which another process read it is no measure of this pass
            foreign = {r.params["component"]: r.params["device_foreign"] for r in here
                       if _block(r) == b and r.params.get("device_foreign")}
            if foreign:
                notes.append(f"the device did other reads during these passes at {format_size(b)} calls, "
                             "left out of the request sizes (its bytes were not the file's: another "
                             "process read the same device, or pages stayed cached): " +
                             "; ".join(f"{label}: {foreign[k]}" for k, label in DEVICE_PASSES if k in foreign))
        notes.append("predicted peak: the slowest component of the path times its parallelism, "
                     "min(one storage stream x servers, memory copy of all ranks), as the CFS "
                     "report's 10 disks x 0.82 MB/s"
                     + (f"; the engine's, from the {format_size(main)} point's own trials"
                        if len(blocks) > 1 else ""))
        trials = counts["stream"] | counts["pooled"]
        if trials == {1}:
            of = "one trial each, so no spread"
        elif len(trials) == 1:
            of = f"best of {trials.pop()} [worst-median]"
        else:
            of = "best of each row's trials [worst-median]"
            if len(blocks) > 1:
                of += (f": a row at a call size is that point's, every other row all {len(blocks)} "
                       "points' (each measures it alike)")
        out += [
            (f"Table 2. Measured component rates, {where}: {of}",
             ["component", "MiB/s", "spread", "trials"], tables[2], notes),
            (f"Table 3. Overhead measurements, {where}: {of}",
             ["operation", "µs", "spread", "trials"], tables[3], []),
            (f"Metadata rates, {where}: each rank on its own files",
             ["operation", "per second", "spread", "trials"], tables[4], []),
        ]
    return out


def format_probe_tables(records):
    out = []
    for caption, head, rows, notes in probe_tables(records):
        if not rows:
            continue
        w0 = max(len(head[0]), *(len(r[0]) for r in rows))
        w1 = max(len(head[1]), *(len(r[1]) for r in rows))
        w2 = max(len(head[2]), *(len(r[2]) for r in rows))
        lines = [caption, f"  {head[0]:<{w0}}  {head[1]:>{w1}}  {head[2]:<{w2}}  {head[3]}"]
        lines += [f"  {r[0]:<{w0}}  {r[1]:>{w1}}  {r[2]:<{w2}}  {r[3]}".rstrip() for r in rows]
        lines += [f"  note: {x}" for x in notes]
        out.append("\n".join(lines))
    return out


class ProbeKind(Kind):
    name = "probe"
    size_setting = SizeSetting("--size", "size", "--size")
    description = "component rates of the path to the storage and the peak they predict (CFS Tables 1-3)"
    command = "probe"
    predicts_peak = True
    options = (
        Option(("--size",), dict(help="file size for every test (default: the preset's)")),
        Option(("--iterations",), dict(type=positive_int, help="trials per point (best is reported)")),
        Option(("--servers",), dict(type=positive_int,
                                    help="probe: independent storage units behind --dir (disks, OSTs, "
                                         "servers) that streams spread over (default 1)")),
        Option(("--stream-blocks",), dict(type=csv_list, dest="stream_blocks",
                                          help="probe: call sizes of the storage stream, e.g. 4k,64k,1m "
                                               "(default 1m); several, each at most an eighth of "
                                               "--size, give the storage's rate against transfer size "
                                               "and its reads' start, which 'pario model --machine "
                                               "probe:RUN' needs")),
    )
    sweep_keys = {"ranks": schema.POSITIVES, "size": schema.SIZE, "iterations": schema.POSITIVE,
                  "servers": schema.POSITIVE, "memory": schema.SIZE, "ops": schema.POSITIVE,
                  "stream_blocks": schema.SIZES}
    test_keys = {"id": schema.ID, "title": schema.STRING}
    required_test = ("id",)
    params = {"test": Param("test"), "ranks": Param("ranks", str, "log2"),
              "component": Param("component"), "target": Param("target"), "host": Param("host"),
              "block": size_param("stream calls"), "size": size_param("stream"),
              "servers": Param("servers"), "memory": size_param("memory copy"), "ops": Param("ops")}
    quantities = {"value": Quantity("", "", "max", ".4g", per_record=True)}
    # the stream read's cache method and read-ahead window, each read pass's
    # device requests, the predicted peak's making (records())
    facts = ("method", "read_ahead", "device_request_bytes", "device_foreign", "limited_by", "parallelism",
             "per_unit")

    def identity(self, plan, record):
        """A component the probe measures apart from its stream calls (the
        barrier, the metadata rates...) is the same point at every call
        size, its trials pooled, as Table 2 and 3 pool them: no row of
        `compare` names a call size its value does not depend on."""
        mine = super().identity(plan, record)
        c = record.params.get("component", "")
        if c not in STREAMS and not c.startswith("peak_"):
            mine.pop("block", None)
        return mine

    def measure_name(self, record):
        """The component as the report's tables name it."""
        c = record.params["component"]
        if c.startswith("peak_"):
            return f"predicted peak, {c[len('peak_'):]}"
        return next((label for key, _, label, *_ in COMPONENTS if key == c), c)

    def measures(self, record):
        """Each component in its own unit (MiB/s, seconds, per second)."""
        c, name = record.params["component"], self.measure_name(record)
        unit, better = "MiB/s", "max"     # a predicted peak
        for key, _, _, unit_, better_, _ in COMPONENTS:
            if key == c:
                unit, better = unit_, better_
        vals = tuple(v for v in record.values["value"] if v is not None)
        return [Measure(name, "value", Quantity(name, unit, better, ".4g"), vals)] if vals else []

    def describe(self, preset):
        s = preset["sweep"]
        ranks = ",".join(map(str, s["ranks"])) if s.get("ranks") else "the cores here"
        return [f"ranks {ranks}; one stream of {s.get('size', '256m')}; best of "
                f"{s.get('iterations', 3)}; --servers N for N storage units behind --dir"]

    def unused_options(self, preset, options):
        if options.get("tests"):
            return {"--tests": "the probe has no tests to choose: each run measures every component"}
        if options.get("out"):
            return {"--out": "a probe run draws no figures (its tables are in 'pario show' and "
                             "'pario report')"}
        return {}

    def plan(self, preset, options):
        sweep = sweep_of(preset, bool(options.get("quick")))
        ranks, ranks_name = setting(options, preset, "ranks", "--ranks")
        # by default as many ranks as run side by side here: the cores, or
        # fewer where the launcher has fewer slots (a Slurm allocation of one)
        ranks = int_list(ranks or [min(options.get("slots") or cores(), cores())], ranks_name)
        size_text, size_name = setting(options, preset, "size", "--size")
        size = parse_size(size_text or "256m", size_name)
        if size % (1 << 20):
            raise UsageError(f"{size_name} {size_text} must be a whole number of MiB (the probe's "
                             "stream calls are 1 MiB), e.g. 64m or 1g")
        iters = options.get("iterations") or int(sweep.get("iterations", 3))  # the engine's limit holds (engine_check)
        texts, blocks_name = setting(options, preset, "stream_blocks", "--stream-blocks")
        texts = texts or ["1m"]
        blocks = []
        for text in texts:
            b = parse_size(text, f"{blocks_name} entry")
            if b % 4096 or b > size or size % b:
                raise UsageError(f"{blocks_name} {text}: a call size must be a multiple of 4k that "
                                 f"divides the stream ({format_size(size)}), e.g. 4k,64k,1m")
            blocks.append(b)
        # 4k,4096 is one size twice: refused as every other repeated list is
        refuse_repeats(blocks, f"{blocks_name} {','.join(texts)}", texts)
        # the 1 MiB point last: its peak is the one other runs draw as their ideal
        blocks.sort(key=lambda b: (b == DEFAULT_BLOCK, b))
        return [ProbePoint(ranks=r, size=size, iterations=iters,
                           servers=options.get("servers") or int(sweep.get("servers", 1)),
                           memory=parse_size(sweep.get("memory", "256m")), ops=int(sweep.get("ops", 200)),
                           block=b)
                for r in ranks for b in blocks], []

    def plan_notes(self, preset, points, options):
        """A probe asked for call sizes (--stream-blocks: what 'pario
        model' needs) that measures no short read at some of them, or at
        any, is stored all the same, but the model takes no read start
        beyond them, or refuses it: say so before it runs."""
        lacking = sorted(p.block for p in points if not short_read_bytes(p.size, p.block))
        if not options.get("stream_blocks") or not lacking:
            return []
        size, largest = points[0].size, max(p.block for p in points)
        if len(lacking) < len(points):
            # some call sizes have their short read, these not: the model's
            # read start is not taken beyond the largest that has one
            have = max(p.block for p in points if short_read_bytes(p.size, p.block))
            return [f"warning: --stream-blocks {','.join(options['stream_blocks'])}: calls of "
                    f"{', '.join(format_size(b) for b in lacking)} are above an eighth of --size "
                    f"{engine_size(size)} ({format_size(size // 8)}): the probe measures no short "
                    f"stream read at them, so 'pario model' takes a read's start no further than "
                    f"{format_size(have)} calls' (give --size {engine_size(size_for_short_reads(largest))} "
                    "or more to measure it)"]
        return [f"warning: --stream-blocks {','.join(options['stream_blocks'])}: every call is above an "
                f"eighth of --size {engine_size(size)} ({format_size(size // 8)}), so the probe "
                "measures no short stream read, and 'pario model --machine probe:RUN' will refuse "
                f"this probe: give --size {engine_size(size_for_short_reads(largest))} or more, or "
                f"calls of {format_size(size // 8)} or less"]

    def records(self, point, result):
        c, t = result["components"], result["target"]
        base = {"test": "probe", "ranks": result["mpi"]["ranks"],
                "block": result["params"].get("block_bytes") or DEFAULT_BLOCK,
                "target": f"{t['dir']} ({t['fs_type']})", "host": result["mpi"]["hosts"][0]["name"]}
        out = []
        for key, *_, get in COMPONENTS:
            vals = get(c)
            if vals:
                params = {**base, "component": key}
                if key == "stream_read":
                    params["method"] = ", ".join(sorted({it["cache_method"] for it in
                                                         c["stream_read"].get("iterations", [])}))
                    # the device's largest read-ahead window, where it has one
                    params["read_ahead"] = (c.get("read_ahead") or {}).get("max_bytes")
                if key in dict(DEVICE_PASSES):
                    params["device_request_bytes"] = device_request_bytes(c.get(key))
                    params["device_foreign"] = device_foreign(c.get(key))
                out.append(Record(params, {"value": vals}))
        for phase in ("write", "read"):
            p = result["predicted_peak"][phase]
            out.append(Record({**base, "component": f"peak_{phase}", "limited_by": p["limited_by"],
                               "parallelism": f"{p['parallelism']:g}",
                               "per_unit": p["component_mib_per_s"]}, {"value": [p["mib_per_s"]]}))
        return out

    def tables(self, preset, records, options):
        return format_probe_tables(records)


KIND = ProbeKind()
