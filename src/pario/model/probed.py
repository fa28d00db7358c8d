"""The machine in front of us, as `pario probe` measured it.

`pario model EXPERIMENT --machine probe:RUN` builds the machine description
from a stored probe run (`pario probe --dir DIR --stream-blocks 4k,64k,1m`):
every parameter's value comes from one of its measured rows, or from what
a local file system is (one server, no network, no service agents), and
its source says which.  The model of a local file system:

* a rank reaches the file system by a system call, not a message: no
  network (network.link_rate 0);
* behind it one "disk" per storage unit (--servers) that serves one call at
  a time: a transfer of s bytes costs overhead + s / rate, fitted from the
  probe's one storage stream at several call sizes.  That includes the
  copy between the rank's buffer and the page cache: on one file the calls
  pass one at a time (a buffered write holds the file's lock while it
  copies; the reads after eviction queue at one device).  For a stream of S
  bytes in n calls of b bytes the probe's best time is
      T(b) = n x per_call + S x per_byte + open/close,
  so a least-squares line of T against n gives per_call (its slope) and
  per_byte ((intercept - the open/write/close cost of Table 3) / S):
  disk.overhead = per_call and disk.rate = 1 / per_byte.  The write stream is
  timed with fsync before close and the read stream with the page cache
  kept out, as the CFS presets run (eviction on, fsync on), so write-back
  at fsync and the kernel's read-ahead are inside these costs;
* a read phase's fixed start (disk.read_latency: the kernel's first,
  synchronous read-ahead before a rank's first bytes), which that fit would
  spread over every byte of the stream: the probe also reads the stream's
  last eighth, and the line through the two times at 0 bytes, less
  open/close, is it (median over the call sizes); it comes off the read
  fits' intercepts, and each rank pays it once per read phase, side by side;
  where the probe recorded the device's largest read-ahead window
  (disk.read_ahead, its read_ahead_kb), the starts are a line against the
  first window each call size opens (read_start.py), not the call;
* a write into a new file without reserved space (no --prealloc, as the
  ASCI Red presets run) allocates its blocks at write-back: the probe's
  stream written into a new file, fitted as the others
  (disk.alloc_write_rate, disk.alloc_write_overhead);
* no block cache of an I/O node's own; the host's page cache
  (host.page_cache: the host's memory) only within a read phase, where a
  call for bytes another rank's call brought in copies them at the cost
  fitted from the probe's cached stream read (the same stream read again,
  its pages in the cache) as for the disk: host.cached_read_overhead per
  call, host.cached_read_rate per byte.  That is a broadcast's later
  readers; across phases the presets evict the cache and sync writes;
* the host's cores (host.cores, from the probe's mpi.hosts): copies from
  the page cache, an aggregator's copies and messages and a collective
  call's own cost wait for a free core, so ranks above the core count
  stretch them; a grouped run's token hand-over is the probe's own token
  ring (network.token_latency), and with more ranks than cores the same
  ring with a yielding thread beside each rank
  (network.token_latency_crowded);
* no service agents but collective MPI-IO's aggregators, which copy every
  call's data through their buffer at the memory copy rate of Table 2
  (agent.copy_rate), receive a rank's data as an MPI message at the rate
  and per-message cost fitted from the probe's messages at each call size
  (agent.message_rate, agent.message_overhead), and every collective call
  costs each rank the probe's collective MPI-IO call of 1 byte
  (client.collective_overhead, client.collective_write_overhead);
* a call is a system call, not a message (network.latency 0).
* ROMIO's aggregators read and write their file domains in calls of a
  collective buffer (16 MiB), far above the stream's call sizes, where
  this host's storage does not follow the stream's line (its page cache
  takes such calls in large folios, its read-ahead serves them otherwise):
  the probe writes (new file, fsync) and reads the stream in such calls,
  one rank alone and two at once (the two writers fsync after both have
  written, as a collective write's sync follows every aggregator's
  writes), and the aggregators' buffer transfers cost their bytes at
  those rates (disk.buffer_write_rate, disk.shared_buffer_write_rate,
  disk.buffer_read_rate, disk.shared_buffer_read_rate); a probe whose two
  writers each fsynced as soon as its own writes were done (before the
  row said otherwise) measured an order a collective write never has, so
  its row sets no shared write rate: the one writer's;
* MPI-IO's atomic mode (ROMIO on a local file system) locks each call's
  byte range and unlocks it after: file.lock_overhead is the probe's
  lock-and-unlock pair (Table 3), added to every call of an atomic point;
  ranks' ranges differ, so their locks do not wait for each other.

`describe()` of the machine (stored with every predicted run) keeps each
value with its source."""

from ..errors import UsageError
from ..studies.probe import (DEFAULT_BLOCK, KIND as PROBE, component_expected_best, expected_best,
                             probe_command, short_read_bytes, size_for_short_reads,
                             standing_probe)
from ..units import engine_size, format_size
from .machine import Machine, apply_overrides, check_relations
from . import read_start
from .params import PARAMS

MIB = float(1 << 20)
PREFIX = "probe:"
ROMIO_CB_BUFFER = 16 << 20  # ROMIO's default cb_buffer_size


def _probe_docs(store, run_id):
    """The ok result documents of a probe run, or one line why not."""
    run = store.run(run_id)  # an unknown run: one line
    if run.get("launcher") == "model":
        raise UsageError(f"run {run_id} is predicted by the model, not measured: give the id of a "
                         "'pario probe' run (see 'pario list')")
    # a run stored before runs.kind: of the kind its preset is named for
    if (run.get("kind") or run["preset"]) != "probe":
        raise UsageError(f"run {run_id} is a run of {run['preset']} (kind {run.get('kind') or 'io'}), "
                         "not a probe: give the id of a 'pario probe --stream-blocks 4k,64k,1m' run "
                         "(see 'pario list')")
    # the rule the ideal curves follow too: complete, its peak point measured,
    # the largest rank count's rows alone
    docs, _ = standing_probe(store, run_id)
    return run, docs


def _fit_calls_bytes(samples):
    """Least squares T = n x per_call + S x per_byte over (n, S, T): a
    row of n calls moving S bytes in T seconds; (per_call, per_byte).
    Rows of one size are the line of T against n, whose value at 0 calls
    is S x per_byte (the streams' and the messages' fits); rows whose sizes differ (the four readers' quarters,
    whole calls each, hold less of a file that is not four whole calls)
    are fitted in both at once.  The rows' call sizes differ, so n / S
    does and the two columns are independent."""
    snn = sum(n * n for n, _, _ in samples)
    sns = sum(n * s for n, s, _ in samples)
    sss = sum(s * s for _, s, _ in samples)
    snt = sum(n * t for n, _, t in samples)
    sst = sum(s * t for _, s, t in samples)
    det = snn * sss - sns * sns
    return (snt * sss - sst * sns) / det, (snn * sst - sns * snt) / det


class ProbeRefusal(UsageError):
    """A probe run this model cannot use, by what its rows show (`cause`);
    machine_from_probe, which has the run, adds the fix: the run's own
    'pario probe' line measuring what the model needs (probe_again)."""

    def __init__(self, cause, **changes):
        super().__init__(cause)
        self.cause, self.changes = cause, changes  # options the fix changes (probe_again)


def probe_again(run, points, **changes):
    """The 'pario probe' line (studies.probe.probe_command) that probes
    like stored `run` again, with what this model needs: two or more stream
    call sizes (4k,64k,1m where it had fewer), each at most an eighth of
    --size (the short read's row: studies.probe.short_read_bytes), and
    `changes` (option name to text)."""
    blocks = sorted({p["block_bytes"] or DEFAULT_BLOCK for p in points}) or [DEFAULT_BLOCK]
    if len(blocks) < 2:
        blocks = [4096, 64 << 10, DEFAULT_BLOCK]
        changes.setdefault("stream_blocks", ",".join(engine_size(b) for b in blocks))
    size = max((p["size_bytes"] or 0 for p in points), default=0)
    if short_read_bytes(size, blocks[-1]) == 0:
        changes.setdefault("size", engine_size(size_for_short_reads(blocks[-1])))
    return probe_command(run, **changes)


def _failed_points(points):
    """' (its points at 4 KiB, 64 KiB calls failed: ...)', or '': what a
    refusal of a probe with failed points leaves unsaid otherwise."""
    failed = sorted({p["block_bytes"] or DEFAULT_BLOCK for p in points if p["status"] != "ok"})
    if not failed:
        return ""
    return (f" (its points at {', '.join(format_size(b) for b in failed)} calls failed: "
            f"'pario show {points[0]['run_id']}' says why)")


# The probe's rows of two ranks writing at once: fitted as the one stream
# is, with no read start to take off.
WRITER_ROWS = ("two_writers", "two_files")

# The interleaved readers' row halfway to its median trial (machine_from_probe).
TYPICAL_INTERLEAVED = ("disk.interleaved_typical_read_rate", "disk.interleaved_typical_read_overhead",
                       "disk.interleaved_typical_race_requests", "disk.interleaved_typical_race_from")
# Rows a model part falls back without (a probe made before them still
# predicts, that part at its neutral value): what the part is then.
OPTIONAL_ROWS = {"four_streams": "disk.shared_read_rate for four readers too",
                 "four_interleaved": "the two interleaved readers' rate for four or more too",
                 "two_files": "disk.shared_write_rate for writers of a file each too",
                 "two_same": "a broadcast's disk stream at disk.rate",
                 "four_short_streams": "no short shares' race"}


def _need(run_id, c, key, what):
    if key not in c:
        raise ProbeRefusal(f"probe run {run_id} has no {what} row ({key}): it was made by an older "
                           "probe")
    return c[key]


def _stream_fit(run_id, docs, which, open_close, start=None, statistic="best"):
    """(per_call seconds, per_byte seconds, text of the measured rows);
    start(block), if given, is a read's fixed start at that call size,
    taken off each time before the fit; `statistic` picks each call size's
    trial (_row_seconds)."""
    by_block = {}
    for d in docs:
        c = d["components"].get(which)
        if c:
            seconds = _row_seconds(c, statistic)
            rate = c["bytes"] / MIB / seconds
            by_block[c["block_bytes"]] = (c["bytes"], seconds, rate)
    if len(by_block) < 2:
        raise ProbeRefusal(f"probe run {run_id} measured its storage stream at "
                           f"{len(by_block)} call size(s): the disk's rate against transfer size "
                           "needs at least two")
    size = max(nbytes for nbytes, _, _ in by_block.values())
    samples = [(nbytes // b, nbytes, t - open_close - (start(b) if start else 0.0))
               for b, (nbytes, t, _) in sorted(by_block.items())]
    per_call, per_byte = _fit_calls_bytes(samples)
    # a row that moved less than the others says how much
    rows = ", ".join(f"{format_size(b)} calls {r:.1f} MiB/s ({t * 1e3:.2f} ms"
                     + (f" for {format_size(n)}" if n != size else "") + ")"
                     for b, (n, t, r) in sorted(by_block.items()))
    return per_call, per_byte, rows, size


def _no_time_per_byte(run_id, what, rows, per_byte, size, open_close):
    """The refusal of a stream whose fitted line leaves no time per byte:
    what its rows show.  The line of time against the number of calls
    meets 0 calls (bytes alone) at no more than the open/close: the slow
    rows are the many small calls, and the fit charges them every
    microsecond.  A longer stream makes the bytes' share of each row
    larger than such noise in the calls."""
    at_zero = per_byte * size + open_close
    return ProbeRefusal(f"probe run {run_id}, {what}: the least-squares line of time against the "
                        f"number of calls ({rows} for {format_size(size)}) meets 0 calls at "
                        f"{at_zero * 1e3:.3g} ms, no more than the open/close of Table 3 "
                        f"({open_close * 1e3:.3g} ms): it leaves no time per byte, all of the time "
                        "is in the calls; a longer stream weighs the bytes more",
                        size=engine_size(4 * size))


# How far each statistic of a row's trials lies from its best trial toward
# its median one (_row_seconds).  "typical" is halfway: two interleaved
# readers on cores of their own lose the read-ahead race in most trials of
# the presets' files, where the probe's best trial often escaped it, yet
# not in every one (docs/model.md, the race's usual outcome); judged on 13
# kept quiet checks, halfway was never more than a point worse than the
# best trial and the median trial was 3 worse on the one measured after.
TOWARD_MEDIAN = {"best": 0.0, "typical": 0.5}


def _median_trial(component):
    """The index of a row's median trial (of an even number, the faster of
    the middle two: an actual trial), or None without trials."""
    values = (component or {}).get("seconds", {}).get("values") or []
    measured = sorted((v, i) for i, v in enumerate(values) if v)
    return measured[(len(measured) - 1) // 2][1] if measured else None


def _row_seconds(component, statistic="best"):
    """The time of a stream row at one call size that the model takes: its
    best trial, as Table 2 shows it, or a point between it and its median
    trial (TOWARD_MEDIAN).  The one place that picks which statistic of a
    row's trials the fits use (the race's requests below follow it)."""
    best = component["seconds"]["best"]
    k, toward = _median_trial(component), TOWARD_MEDIAN[statistic]
    if not toward or k is None:
        return best
    return best + toward * (component["seconds"]["values"][k] - best)


def _row_requests(component, statistic="best"):
    """The device's read requests of the trial whose time is the row's best
    (_row_seconds), or, for a statistic toward the median, as far toward
    the median trial's requests; None where the probe did not count them or
    a trial used was not the pass's own (its device bytes were others')."""
    from ..studies.probe import device_own_trials

    trials = device_own_trials(component)
    values = (component or {}).get("seconds", {}).get("values") or []
    if not trials or len(trials) != len(values):
        return None

    def requests(k):
        n, _, own = trials[k] if k is not None else (None, None, False)
        return n if own and n else None

    best = component["seconds"]["best"]
    nearest = min((i for i, v in enumerate(values) if v is not None), key=lambda i: abs(values[i] - best),
                  default=None)
    n, toward = requests(nearest), TOWARD_MEDIAN[statistic]
    if not toward or n is None:
        return n
    middle = requests(_median_trial(component))
    return None if middle is None else n + toward * (middle - n)


def _median(values):
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def read_race(docs, statistic="best"):
    """(extra requests per phase, smallest call size that lost, seconds per
    request, text) of two ranks reading one file in interleaved calls
    (docs/model.md, the read-ahead race), from the probe's two interleaved
    readers and their device requests at each call size (of the trial
    `statistic` picks, _row_seconds):

    * a request's cost: within each call size, the pass's trials' time
      against their device requests (least squares, the call sizes pooled
      about their own means: the same calls and bytes, only the requests
      differ);
    * at a call size the race was lost when the row's trial made more
      requests than the two readers of contiguous halves of the same file
      (two_streams: two readers whose windows hold); its extra requests are
      those beyond the one stream's of the same file at that call size;
    * the race's requests: the median extra over the call sizes that lost
      it, charged per phase (a number per phase, not per byte: measured,
      docs/model.md); from the smallest call size that lost it.
    (machine_from_probe cuts it where the rate it leaves the row would be
    faster than two halves': _race_the_row_pays.)
    (0, 0, 0, text) where the probe counted no requests or saw no race."""
    from ..studies.probe import device_own_trials

    sxx = sxy = 0.0
    sizes = []
    for d in sorted(docs, key=lambda d: d["params"].get("block_bytes", 0)):
        c = d["components"]
        inter = c.get("two_interleaved")
        if not inter:
            continue
        pairs = [(n, t) for (n, _, own), t in zip(device_own_trials(inter), inter["seconds"].get("values") or [])
                 if own and n and t]
        if len(pairs) >= 2:
            mn = sum(n for n, _ in pairs) / len(pairs)
            mt = sum(t for _, t in pairs) / len(pairs)
            sxx += sum((n - mn) ** 2 for n, _ in pairs)
            sxy += sum((n - mn) * (t - mt) for n, t in pairs)
        one = [n for n, _, own in device_own_trials(c.get("stream_read")) if own and n]
        halves = [n for n, _, own in device_own_trials(c.get("two_streams")) if own and n]
        n = _row_requests(inter, statistic)
        if n and one and halves:
            sizes.append((inter["block_bytes"], n, _median(one), _median(halves)))
    if not sizes:
        return 0, 0, 0.0, "the probe counted no device requests of its interleaved readers"
    each = ", ".join(f"{format_size(b)} calls {n:g} (one stream {one:g}, two halves {h:g})"
                     for b, n, one, h in sizes)
    per_request = sxy / sxx if sxx > 0 else 0.0
    lost = [(b, n - one) for b, n, one, h in sizes if n > h]
    text = (f"'storage, two interleaved readers', the device's read requests of the row's "
            f"{statistic} trial at each call size: {each}; ")
    if per_request <= 0:
        return 0, 0, 0.0, text + ("their trials' time did not grow with their requests (noise): "
                                  "no cost per request, no race charged")
    text += (f"the trials' time against their requests within each call size: "
             f"{per_request * 1e3:.3g} ms per request")
    if not lost:
        return 0, 0, per_request, text + "; no call size made more requests than two halves: no race"
    extra = max(0, round(_median([e for _, e in lost])))
    return extra, min(b for b, _ in lost), per_request, (
        text + f"; lost (more requests than two halves) at {', '.join(format_size(b) for b, _ in lost)}: "
        f"the median extra over the one stream, {extra} requests per phase")


def share_race(docs, fixed, restart):
    """(restarts per phase, smallest call size that lost, text) of four
    readers of one file whose contiguous shares are shorter than a
    reader's read-ahead ramp reaches (docs/model.md, the short shares'
    race), from the probe's four readers of shares one read-ahead window
    long (four_short_streams: the file's last four) against its four
    readers of a quarter each (four_streams: long shares, whose windows
    hold) at each call size b:

    * what four readers whose windows hold take for the short pass's bytes:
      the long pass's time less what it pays whatever its length (fixed(b):
      open/close and each reader's start, side by side), scaled to the
      short pass's bytes, plus that fixed part again;
    * the short pass's time (_row_seconds, the statistic every row's fit
      takes) beyond that is the race's loss at b, and in restarts: the loss
      over restart(b), the read's fixed start at b (a reader whose window
      its neighbour's read-ahead cut reads on with a new first window,
      synchronously, as at its start);
    * a call size lost the race where its loss is at least one restart (a
      fraction of one is noise: no reader restarted); the race is the
      median of those call sizes' restarts, a whole number per phase,
      charged from the smallest of them at the point's own restart cost.
    (0, 0, text) where the probe had no such pass or lost nothing."""
    sizes = []
    for d in sorted(docs, key=lambda d: d["params"].get("block_bytes", 0)):
        c = d["components"]
        short, long = c.get("four_short_streams"), c.get("four_streams")
        if short and long and _row_seconds(short) and _row_seconds(long) and restart(short["block_bytes"]) > 0:
            b, n = short["block_bytes"], short["bytes"]
            held = fixed(b) + (_row_seconds(long) - fixed(b)) * n / long["bytes"]
            t = _row_seconds(short)
            sizes.append((b, n, t, held, (t - held) / restart(b), long["bytes"]))
    if not sizes:
        return 0, 0, "no four readers of short shares measured"
    each = ", ".join(f"{format_size(b)} calls {t * 1e3:.3g} ms against {k * 1e3:.3g} ms "
                     f"({(t - k) * 1e3:+.3g} ms, {r:.2g} restarts)" for b, _, t, k, r, _ in sizes)
    text = (f"'storage, four readers of short shares' ({format_size(sizes[0][1] // 4)} each, one "
            f"read-ahead window, the file's last four) against 'four readers at once' (a quarter of "
            f"{format_size(sizes[0][5])} each: windows that hold) at the same call size for the same "
            f"bytes (its time less open/close and each reader's start, scaled to them, plus those), "
            f"the difference in restarts of the read's fixed start at that call size: {each}")
    lost = [(b, r) for b, _, _, _, r, _ in sizes if r >= 1]
    if not lost:
        return 0, 0, text + "; no call size lost a whole restart: no race"
    restarts = max(1, int(_median([r for _, r in lost]) + 0.5))  # half up, not to even
    race_from = min(b for b, _ in lost)
    return restarts, race_from, text + (
        f"; lost (a restart or more) at {', '.join(format_size(b) for b, _ in lost)}: their median, "
        f"{restarts} restart(s) per phase")


def _race_charge(seconds, race_from):
    """A read fit's `less(b)` for the read-ahead race: its seconds, once per
    phase, at call sizes from race_from on."""
    return lambda b: seconds if b >= race_from else 0.0


def _race_the_row_pays(requests, text, fit, halves_per_byte):
    """(requests, text, fit(requests)) of the read-ahead race as the
    probe's interleaved row can pay for it.  fit(k) is the row's read fit
    with k race requests charged apart; what it leaves is the rate of two
    interleaved readers whose windows hold, which read the file's bytes no
    faster than two readers of its contiguous halves (halves_per_byte, the
    two_streams fit): the same bytes, the same device, windows that hold.
    Where the race read_race counted would leave a faster rate, it is cut
    to the most requests that do not: a 4 MiB probe's 2.7 ms phase was
    charged 2.6 ms and left no time per byte at all (CI), and a quiet 64 MiB
    probe's 49 requests at 0.29 ms left 6578 MiB/s against the halves' 3311.
    Charging more never makes the rate slower, so the count is searched
    down from read_race's."""
    result = fit(requests)
    if not requests or halves_per_byte is None or result[1] >= halves_per_byte:
        return requests, text, result
    kept = requests
    while kept > 0:
        kept -= 1
        result = fit(kept)
        if result[1] >= halves_per_byte:
            break
    return kept, text + (
        f"; cut to {kept}: more would leave interleaved readers whose windows hold faster than two "
        f"readers of contiguous halves ({halves_per_byte * 1e9:.4g} ns per byte), which read the "
        "same bytes with windows that hold"), result


def _device_requests(docs, row):
    """'; the device's read requests ...' of a read pass against the one
    stream's at each call size (how the kernel's read-ahead cut them), or ''
    where the probe did not count them."""
    from ..studies.probe import device_foreign, device_request_bytes

    sizes, foreign = [], []
    for d in sorted(docs, key=lambda d: d["params"].get("block_bytes", 0)):
        c = d["components"]
        # trials whose device bytes were not the pass's own are left out
        mine, one = device_request_bytes(c.get(row)), device_request_bytes(c.get("stream_read"))
        if mine and one:
            sizes.append(f"{format_size(c[row]['block_bytes'])} calls {mine / 1024:.0f} KiB "
                         f"(one stream {one / 1024:.0f})")
        other = device_foreign(c.get(row))
        if other and c.get(row):
            foreign.append(f"{format_size(c[row]['block_bytes'])} calls {other}")
    text = ("; the device's read requests over the pass, median of its own trials (the kernel's "
            "read-ahead windows): " + ", ".join(sizes)) if sizes else ""
    if foreign:
        text += ("; left out, the device did other reads during the pass (its counters are the "
                 "whole device's): " + ", ".join(foreign))
    return text


def _read_ahead(c, where, overrides):
    """(bytes, source) of disk.read_ahead: the probe's record of the
    device's read_ahead_kb, or a --set of it (an older probe did not record
    it: the fixed start's line must then be fitted against the windows too,
    so the value is taken before the fit), else 0."""
    for item in overrides:
        key, _, text = item.partition("=")
        if key.strip() == "disk.read_ahead" and text.strip():
            from .params import parse_value

            return parse_value("disk.read_ahead", text.strip()), f"--set disk.read_ahead={text.strip()}"
    rec = c.get("read_ahead")
    if rec and rec.get("max_bytes"):
        return int(rec["max_bytes"]), (f"{where}: the device behind the directory, read_ahead_kb "
                                       f"{rec['max_bytes'] // 1024} ({rec.get('source', '/sys/dev/block')})")
    if rec and rec.get("max_bytes") == 0:  # a device whose read-ahead is switched off
        return 0, (f"{where}: the device behind the directory has its read-ahead off, read_ahead_kb 0 "
                   f"({rec.get('source', '/sys/dev/block')}): no window, each read waits for its own "
                   "call, so the read's start grows with the call, up to disk.read_start_limit")
    why = ("it has no block device's read-ahead (a memory-backed or network file system)" if "read_ahead" in c
           else "made by a probe before the read-ahead record")
    return 0, f"{where}: {why}: the read's start grows with the call, up to disk.read_start_limit"


def _read_start(run_id, docs, open_close, table2, read_ahead=0):
    """(latency s, start rate B/s, source of each) of disk.read_latency and
    disk.read_start_rate (read_start.py): at each call size the probe read
    the whole stream (S bytes, time T) and its last eighth (s bytes, time
    t), each with the page cache emptied first; the line through (s, t) and
    (S, T) crosses 0 bytes at (S t - s T) / (S - s), the time a read pays
    whatever its length.  Less the open/close of Table 3 that is the read's
    fixed start at that call size; a line through the starts against the
    call size gives the start of a call of no size and its growth."""
    points = []
    for d in docs:
        c = d["components"]
        short, whole = c.get("stream_read_short"), c.get("stream_read")
        if not short or not whole or short["block_bytes"] != whole["block_bytes"]:
            continue
        s, t = short["bytes"], short["seconds"]["best"]
        S, T = whole["bytes"], whole["seconds"]["best"]
        if not (0 < s < S) or not (t and t > 0 and T and T > 0):
            raise ProbeRefusal(f"probe run {run_id}: its short stream read ({s} bytes in {t} s "
                               f"against {S} in {T} s) is not a shorter read that took time")
        points.append((short["block_bytes"], s, t, S, T, (S * t - s * T) / (S - s) - open_close))
    if not points:
        reads = [d["components"]["stream_read"] for d in docs if d["components"].get("stream_read")]
        calls = sorted({r["block_bytes"] for r in reads})
        stream = max((r["bytes"] for r in reads), default=0)
        if calls and all(short_read_bytes(stream, b) == 0 for b in calls):
            raise ProbeRefusal(f"probe run {run_id} has no short stream read row (stream_read_short): "
                               f"its calls ({', '.join(format_size(b) for b in calls)}) are all above "
                               f"an eighth of its {format_size(stream)} stream, and the probe reads "
                               "that eighth in whole calls")
        raise ProbeRefusal(f"probe run {run_id} has no short stream read row (stream_read_short) at "
                           "any call size: it was made by an older probe")
    points.sort()
    rows = ", ".join(f"{format_size(b)} calls: {format_size(s)} in {t * 1e3:.2f} ms, "
                     f"{format_size(S)} in {T * 1e3:.2f} ms (start {x * 1e3:.3g} ms)"
                     for b, s, t, S, T, x in points)
    source = (f"{table2} 'storage, the stream's last eighth read (cache kept out)' against "
              f"'storage, one stream read': {rows}; the line through each pair at 0 bytes, less "
              "the open/close of Table 3, is the read's fixed start at that call size")
    # Against the first read-ahead window each call size opens, where the
    # device's largest window is known (read_start.py), else the call.
    at = (lambda b: read_start.first_window(b, read_ahead)) if read_ahead else (lambda b: b)
    latency, growth, how = read_start.fit([(at(p[0]), p[5]) for p in points])
    if read_ahead:
        how += (" (each call size as the first read-ahead window it opens, " +
                ", ".join(f"{format_size(p[0])} calls {format_size(at(p[0]))}" for p in points) +
                f", with disk.read_ahead {format_size(read_ahead)})")
    starts = sorted(p[5] for p in points)
    mid = len(starts) // 2
    median = max(0.0, starts[mid] if len(starts) % 2 else (starts[mid - 1] + starts[mid]) / 2)
    if growth <= 0:
        # no growth with the call (one call size, or noise): the median start
        latency = median
        rate_source = source + (f"; {how}" if growth == 0 else
                                f"; {how} falls with the call, which is noise: no growth") + \
            " (0: the start does not depend on the call size)"
        source += "; their median"
        growth = 0.0
    else:
        rate_source = source + (f"; {how}: {growth * 1e9 * (1 << 20) / 1e6:.3g} ms more per MiB of "
                                + ("first window" if read_ahead else "call"))
        source += f"; {how}, at calls of 0 bytes"
    if latency < 0:
        return (0.0, (1 / growth if growth else 0.0), source + "; below 0 is noise: no fixed start",
                rate_source, median)
    return latency, (1 / growth if growth else 0.0), source, rate_source, median


def _message_fit(run_id, docs):
    """(per message seconds, per byte seconds, rows, bytes) of the probe's
    MPI messages at its call sizes, as _stream_fit does for the streams."""
    by_block = {}
    for d in docs:
        m = d["components"].get("messages")
        if m:
            by_block[m["block_bytes"]] = (m["bytes"], m["seconds"]["best"])
    sizes = {b for b, _ in by_block.values()}
    if len(by_block) < 2 or len(sizes) != 1:
        raise ProbeRefusal(f"probe run {run_id} measured its MPI messages at {len(by_block)} "
                           "size(s): their rate against size needs at least two")
    size = sizes.pop()
    if any(not t or t <= 0 for _, t in by_block.values()):
        raise UsageError(f"probe run {run_id}: its MPI messages took no time at some size, which no "
                         "machine does: run 'pario probe' again")
    rows = ", ".join(f"{format_size(b)} messages {n / MIB / t:.1f} MiB/s"
                     for b, (n, t) in sorted(by_block.items()))
    per_msg, per_byte = _fit_calls_bytes([(size // b, size, t) for b, (_, t) in sorted(by_block.items())])
    if per_byte <= 0:
        # A busy machine's small messages can leave the line no time per
        # byte; the largest messages then give it, with no cost per message.
        largest = max(by_block)
        rows += (f" (the line through them left no time per byte: the {format_size(largest)} "
                 "messages' own time per byte, no cost per message)")
        return 0.0, by_block[largest][1] / size, rows, size
    return per_msg, per_byte, rows, size


def _buffer_rates(put, run_id, rows, oc_write, oc_read, table2, where):
    """disk.buffer_* from the probe's streams in collective-buffer calls:
    each stream's best time, less open/close (and a read's fixed start, which
    an aggregator pays apart), over its bytes."""
    one_rank = "one rank: no two ranks at once measured; the disk's rates for every call"
    # (row, parameter, open/close and start to take off, its calls' size, what it is, why absent)
    keys = (("write_seconds", "disk.buffer_write_rate", oc_write, "call_bytes",
             "one writer, new file (fsync)", ""),
            ("two_writers_seconds", "disk.shared_buffer_write_rate", oc_write, "call_bytes",
             "two writers at once (ranks 0, 1), each fsync after both wrote", one_rank),
            ("read_seconds", "disk.buffer_read_rate", oc_read, "call_bytes",
             "one reader (cache kept out)", ""),
            ("two_readers_seconds", "disk.shared_buffer_read_rate", oc_read, "call_bytes",
             "two readers at once (ranks 0, 1)", one_rank),
            ("four_readers_seconds", "disk.four_buffer_read_rate", oc_read, "four_call_bytes",
             "four readers at once (ranks 0 and 1 with a thread each beside them, a quarter each)",
             "one rank, a probe before its four buffer readers, or a file of no whole number of "
             "pages a quarter: disk.shared_buffer_read_rate for four aggregators too"))
    for key, name, fixed, calls, label, absent in keys:
        if rows and key == "two_writers_seconds" and key in rows and not rows.get("two_writers_sync"):
            put(name, "0", f"{where}: made by a probe whose two writers each fsynced as soon as its "
                           "own writes were done, so one's write-back ran beside the other's writes, "
                           "which a collective write never lets happen (its sync follows every "
                           "aggregator's writes): the one writer's rate (disk.buffer_write_rate)")
            continue
        if not rows or key not in rows:
            put(name, "0", f"{where}: " + (absent if rows else "an older probe, without streams in "
                                            "collective-buffer calls; the disk's rates for every call"))
            continue
        best = rows[key]["best"]
        per_byte = (best - fixed) / rows["bytes"] if best else 0.0
        if per_byte <= 0:
            raise ProbeRefusal(f"probe run {run_id}: its stream in collective-buffer calls ({key}) "
                               f"took {best} s, no more than opening the file")
        put(name, _rate(1 / per_byte),
            f"{table2} 'storage, collective-buffer calls, {label}': {format_size(rows['bytes'])} in "
            f"{format_size(rows[calls])} calls, {best * 1e3:.2f} ms (the best of one call size's trials that every call size's trials expect), less open/close"
            + (" and disk.read_latency" if "read" in key and fixed > oc_write else "")
            + " over its bytes")


# How far a fitted line may miss the probe's own rows: within the model's
# own 25 % it is quiet; beyond it every prediction carries a warning; past
# MISS_REFUSED (an order of magnitude) the line predicts nothing of the rows
# it came from and the machine is refused.
MISS_WARNED = 1.25
MISS_REFUSED = 10.0
# Rows shorter than this the probe itself calls unsteady ("a stream lasted
# under 0.05 s", the engine's probe_result.c): a miss there is warned, never
# refused (a small --size probe on a shared machine misses them by several
# times with nothing wrong but the size).
STEADY_SECONDS = 0.05


def _misses(run_id, docs, which, label, per_call, per_byte, open_close, start):
    """The worst of the probe's own `which` rows against the fitted line
    (and, for the read stream, its short reads against the line with the
    read's fixed start): None within MISS_WARNED, else a warning line;
    past MISS_REFUSED one line refusing the machine."""
    misses = []
    for d in docs:
        for row, name in ((which, "stream"),
                          ("stream_read_short" if which == "stream_read" else None, "last eighth")):
            c = d["components"].get(row) if row else None
            if not c or not c["seconds"]["best"] or c["seconds"]["best"] <= 0:
                continue
            b, size, measured = c["block_bytes"], c["bytes"], c["seconds"]["best"]
            predicted = (-(-size // b)) * per_call + size * per_byte + open_close + start(b)
            trials = [v for v in c["seconds"].get("values") or [] if v and v > 0] or [measured]
            if predicted > 0:
                misses.append((max(predicted / measured, measured / predicted), b, name, size,
                               measured, predicted, trials))

    def text(miss, refused):
        factor, b, name, size, measured, predicted, trials = miss
        line = (f"probe run {run_id}'s fitted '{label}' misses its own {format_size(b)} row "
                f"({name}, {format_size(size)}) by {factor:.1f}x: {predicted * 1e3:.3g} ms predicted "
                f"against {measured * 1e3:.3g} ms measured, beyond the model's 25 %; ")
        # What the row itself shows: trials that disagree are a machine busy
        # while it ran; trials that agree are a steady row the line does
        # not pass (a time not linear in calls and bytes over these call
        # sizes: tmpfs, 1.9x on a quiet host), which probing again repeats.
        spread = f"({min(trials) * 1e3:.3g}-{max(trials) * 1e3:.3g} ms)"
        if max(trials) / min(trials) > MISS_WARNED:
            line += f"its trials {spread} disagree: the machine was busy during the probe"
            fix = "run 'pario probe' again on a quiet machine"
        else:
            line += (f"its trials {spread} agree: the row is steady, and the time is no straight "
                     "line in calls and bytes over the probe's call sizes")
            fix = "run 'pario probe' with --stream-blocks of the call sizes you model"
        if refused:
            return f"{line}; a line {MISS_REFUSED:.0f}x off predicts nothing: {fix}"
        return f"{line}; predictions from it miss by as much: {fix}"

    steady = [m for m in misses if m[4] >= STEADY_SECONDS and m[0] > MISS_REFUSED]
    if steady:
        raise UsageError(text(max(steady, key=lambda m: m[0]), refused=True))
    if not misses or max(m[0] for m in misses) <= MISS_WARNED:
        return None
    return text(max(misses, key=lambda m: m[0]), refused=False)


def _time(seconds):
    return f"{seconds * 1e6:.4g}us"


def _rate(bps):
    return f"{bps / MIB:.6g}MB/s"


def as_best_of(doc, trials):
    """`doc` (a probe point's result) with every row's "best" (of its own
    trials) replaced by the best of `trials` trials its trials expect
    (studies/probe.expected_best): a measured figure is the best of its
    run's --iterations, so a prediction of it takes every row as the best
    of that many.  Rows keep their "values"; which way is best is the way
    the row's own best lies."""
    if isinstance(doc, list):
        return [as_best_of(x, trials) for x in doc]
    if not isinstance(doc, dict):
        return doc
    out = {k: as_best_of(x, trials) for k, x in doc.items()}
    values = [x for x in out.get("values") or [] if isinstance(x, (int, float))]
    if "best" in out and values and len(values) == len(out["values"]):
        better = "min" if out["best"] == min(values) and out["best"] != max(values) else "max"
        out["best"] = expected_best(values, trials, better)
    return out


def machine_from_probe(store, run_id, overrides=(), trials=None):
    """The Machine that probe run `run_id` of `store` measured.  `trials`:
    the number of trials whose best the predictions stand for (a measured
    run's --iterations; None: each row's own point's trials).  A probe it
    cannot use is refused in one line: the cause its rows show, then its
    own 'pario probe' line with what it lacks."""
    try:
        return _measured_machine(store, run_id, overrides, trials)
    except ProbeRefusal as exc:
        points = store.points(run_id)
        raise UsageError(f"{exc.cause}{_failed_points(points)}; run "
                         f"{probe_again(store.run(run_id), points, **exc.changes)}") from None


def _measured_machine(store, run_id, overrides, trials):
    run, docs = _probe_docs(store, run_id)
    if trials:
        docs = as_best_of(docs, trials)
    main = max(docs, key=lambda d: (d["params"].get("block_bytes") == 1 << 20,
                                    d["params"].get("block_bytes", 0)))
    c, t = main["components"], main["target"]
    host = (main["mpi"].get("hosts") or [{}])[0].get("name", "?")
    where = f"probe run {run_id} ({t.get('dir')} {t.get('fs_type')} on {host}, {main['mpi']['ranks']} ranks)"
    table2, table3 = f"{where}, Table 2", f"{where}, Table 3"
    v, src, warnings = {}, {}, []

    def put(key, text, source):
        v[key], src[key] = text, source

    warnings = []
    memory_storage = bool(t.get("memory_backed") or t.get("fs_type") == "tmpfs")
    if memory_storage:
        # the probe said so; every prediction from its machine must too
        warnings.append(f"probe run {run_id}'s storage ({t.get('dir')}) was {t.get('fs_type')}, "
                        "memory: its 'disks' and 'rates to storage' are memory rates, not a "
                        "disk's; probe a directory on a disk for a disk's")

    _need(run_id, c, "stream_read_cached", "cached stream read")
    _need(run_id, c, "stream_write_new", "stream write into a new file")
    _need(run_id, c, "collective_mpiio", "collective MPI-IO call")
    token = _need(run_id, c, "token_pass", "token hand-over")
    messages = _need(run_id, c, "messages", "MPI messages")
    host_doc = (main["mpi"].get("hosts") or [{}])[0]
    cores = int(host_doc.get("cores") or 0)
    memory = int(host_doc.get("memory_bytes") or 0)
    if cores < 1 or memory < 1:
        raise ProbeRefusal(f"probe run {run_id} does not say how many cores and how much memory "
                           "its host has (mpi.hosts): it was made by an older probe")
    # A component measured alike at every point (all but the streams)
    # pools every point's trials; the model takes the best of one point's
    # number of trials they expect (studies/probe.expected_best), the same
    # statistic as a stream row's (its point's best) and a measured
    # point's figure, where Tables 2 and 3 show the best of them all.
    pooled = [r for d in docs if d["mpi"]["ranks"] == main["mpi"]["ranks"]
              for r in PROBE.records(None, d)]
    n_points = len({r.params["block"] for r in pooled})
    if trials:
        every = (f"the best of {trials} trials that its {'pooled ' if n_points > 1 else ''}trials expect"
                 if trials > 1 else "the mean of its trials (a measured figure of one trial)")
    else:
        every = (f"the best of one call size's trials that all {n_points} call sizes' trials expect"
                 if n_points > 1 else "best")
    oc_read = component_expected_best(pooled, "open_read", trials)
    oc_write = component_expected_best(pooled, "open_write", trials)
    servers = int(main["params"].get("servers") or 1)

    put("network.latency", "0s", "a call is a system call on this host, not a message: its cost is "
                                 "in the fitted disk costs")
    if token:
        plain, crowded = component_expected_best(pooled, "token_pass", trials), component_expected_best(pooled, "token_pass_crowded", trials)
        if not (plain and crowded and plain > 0 and crowded > 0):
            raise ProbeRefusal(f"probe run {run_id}: its token hand-over times ({plain}, {crowded} s) "
                               "are not positive")
        put("network.token_latency", _time(plain),
            f"{table3} 'token hand-over, ring of all ranks': {every}, time per hand-over of the "
            f"engine's own token ring over {token['ranks']} ranks")
        # Ranks above the cores: each hand-over switches the next holder in
        # on a core another rank holds; the probe's two ranks on one core
        # measure that, as the slope between a short ring and a long one.
        # An older probe has only the ring beside yielding threads, whose
        # next holder is sometimes running already on a core of its own, or
        # timed the ring on one core whole, which came out in the
        # scheduler's ticks (4.00 us for every 1000 calls, probe_cmd.c):
        # those take the ring beside the threads (1.2-1.8 us against the
        # slope's 1.3-1.9 in the same probes).
        shared = (component_expected_best(pooled, "token_pass_shared_core", trials)
                  if token.get("shared_core_timing") == "slope" else None)
        if shared and shared > 0:
            put("network.token_latency_crowded", _time(shared),
                f"{table3} 'token hand-over, ranks 0 and 1 on one core': {every}, time per "
                f"hand-over of the engine's ring with both ranks pinned to one core, as ranks above "
                f"the {cores} cores share them: the next holder is switched in at each hand-over "
                "(a long ring's time less a short one's, over the hand-overs it adds)")
        else:
            put("network.token_latency_crowded", _time(crowded),
                f"{table3} 'token hand-over, a yielding thread beside each rank': {every}, time per "
                f"hand-over with two runnable tasks per core, as ranks above the {cores} cores are "
                "(an older probe: no row with both ranks on one core timed as a slope between "
                "two rings)")
    else:
        put("network.token_latency", "0s", f"{where}: one rank, no token hand-over measured "
                                           "(no token to pass)")
        put("network.token_latency_crowded", "0s", f"{where}: one rank, no token hand-over measured")
    put("network.link_rate", "0", "no network: the ranks and the file system share this host's "
                                  "memory; a call's copy between the rank's buffer and the page cache "
                                  "is inside the fitted disk costs")
    put("network.backplane_rate", "0", "no network")
    put("client.outstanding", 1, "a read or write system call is synchronous: one transfer at a time per rank")
    put("client.call_overhead", "0s", "in disk.overhead and disk.write_overhead: the fitted cost of one call")
    coll = c["collective_mpiio"]
    for key, which, label in (("client.collective_overhead", "read_seconds", "read"),
                              ("client.collective_write_overhead", "write_seconds", "write")):
        best = component_expected_best(pooled, f"collective_{label}", trials)
        if not best or best <= 0:
            raise ProbeRefusal(f"probe run {run_id}: its collective MPI-IO {label} call took {best} "
                               "s, not a positive time")
        put(key, _time(best),
            f"{table3} 'collective MPI-IO {label} call, 1 byte per rank': {every}, time per call "
            f"({coll['implementation']}, {coll['aggregators']} aggregators, {coll['calls']} calls); "
            "its own 1-byte transfer is a few microseconds of it")
    library = component_expected_best(pooled, "collective_open", trials)
    if library and library > 0:
        put("client.mpiio_open_close", _time(library),
            f"{table3} 'collective MPI-IO open and close, every rank': {every}, time per pair "
            f"({coll['implementation']}, {coll['aggregators']} ranks, the preset's hints)")
    else:
        put("client.mpiio_open_close", "0s",
            f"{where}: no collective MPI-IO open and close row (an older probe): none beside "
            "file.open_close_*")
    put("file.open_close_read", _time(oc_read), f"{table3} 'open / read a byte / close', {every}")
    put("file.open_close_write", _time(oc_write), f"{table3} 'open / write a byte / close', {every}")
    lock = component_expected_best(pooled, "lock", trials)
    if lock and lock > 0:
        put("file.lock_overhead", _time(lock),
            f"{table3} 'byte-range lock and unlock (fcntl)': {every}, time per pair, rank 0 on ranges "
            "no one else holds, as ROMIO's atomic mode locks each call's range")
    else:
        put("file.lock_overhead", "0s",
            f"{where}: no byte-range lock row (an older probe): atomic points are left out")
    put("stripe.unit", "1g", "a local file is not striped: one call is one transfer (the engine's "
                             "calls are at most 1 GiB)")
    put("stripe.count", servers, f"{where}: --servers {servers}, the storage units behind the directory")
    put("io_node.count", 1, "one host's kernel serves the file system")
    put("io_node.disks", servers, f"{where}: --servers {servers}")
    put("io_node.request_overhead", "0s", "in the fitted per-call disk costs")
    put("io_node.link_dma", "yes", "the copy is the rank's own (its link), not the server's processor")
    put("io_node.memory_rate", "0", "the copy is counted once, on the rank's link")
    put("io_node.max_outstanding", 0, "no limit besides one call at a time per rank")
    put("io_node.cache", "0", "the page cache is kept out of the way as the presets run (eviction "
                              "before reads, fsync before close): its read-ahead and write-back are "
                              "inside the fitted disk costs")
    put("io_node.cache_block", "1g", "unused without a cache (equal to stripe.unit)")
    put("io_node.prefetch", 1, "no cache, so no prefetch of the model's own")
    put("io_node.readahead_at", 0, "no cache: the kernel's read-ahead is inside the fitted read costs")
    put("io_node.write_group", 1, "no cache: write-back at fsync is inside the fitted write costs")
    _stream_fit(run_id, docs, "stream_read", oc_read)  # too few call sizes: that line first
    # the machine's own value is the probe's record; a --set of it is the
    # window the fit below takes (so apply_overrides, later, sets it as
    # every --set and tells one equal to the record from a change)
    recorded, recorded_source = _read_ahead(c, where, [])
    read_ahead, _ = _read_ahead(c, where, overrides)
    put("disk.read_ahead", str(recorded), recorded_source)
    latency, start_rate, latency_source, start_source, median_start = _read_start(run_id, docs, oc_read,
                                                                                 table2, read_ahead)
    put("disk.read_latency", _time(latency), latency_source)
    put("disk.read_start_rate", _rate(start_rate) if start_rate else "0", start_source)
    limit = max(d["components"]["stream_read_short"]["block_bytes"] for d in docs
                if d["components"].get("stream_read_short")) if start_rate else 0
    put("disk.read_start_limit", str(limit),
        f"{table2}: the largest call size the short stream read was measured at; the start's line "
        "is not taken beyond it" if start_rate else
        f"{table2}: the short stream reads showed no growth of the start with the call "
        "(disk.read_start_rate 0): no limit needed")
    start_values = {"disk.read_latency": latency, "disk.read_start_rate": start_rate,
                    "disk.read_start_limit": limit, "disk.read_ahead": read_ahead}

    def start(block):
        # within the probe's own data: a call size whose start it did not
        # measure (no whole call in the stream's last eighth) starts as the
        # largest it did, window or not
        return read_start.largest_call_start(start_values, block)

    def read_fit(row, open_close, less=lambda b: 0.0, statistic="best"):
        """A read row's fit after each rank's start at each call size (and
        `less(b)`, a cost the model charges apart); where that leaves the
        row no time per byte (a noisy short read makes a call size's start
        nearly its whole time), after the median start at every call size
        instead, and the text says so."""
        per_call, per_byte, rows, size = _stream_fit(run_id, docs, row, open_close,
                                                     lambda b: start(b) + less(b), statistic)
        if per_byte > 0 or not start_rate:
            return per_call, per_byte, rows, size, ""
        per_call, per_byte, rows, size = _stream_fit(run_id, docs, row, open_close,
                                                     lambda b: median_start + less(b), statistic)
        return per_call, per_byte, rows, size, (
            f"; the start at each call size left no time per byte (noise), so the median start, "
            f"{median_start * 1e3:.3g} ms, was taken off every call size")

    def put_race(prefix, requests, race_from, text, who):
        """The read-ahead race's requests and smallest call size under `prefix`."""
        put(prefix + "race_requests", requests, f"{table2} {text}")
        put(prefix + "race_from", str(race_from if requests else 0),
            f"{table2} the smallest call size whose {who} made more device requests than two "
            "readers of contiguous halves" if requests else f"{table2} no race: unused")

    def interleaved_fit(row, open_close, statistic):
        """(race requests, race from, seconds per request, race text, read
        fit) of the two interleaved readers' row at each call size's trial
        `statistic` picks: the read-ahead race's extra device requests per
        phase charged apart (read_race), so the rate is that of interleaved
        readers whose windows hold, held to two halves' (_race_the_row_pays)."""
        requests, race_from, per_request, race_text = read_race(docs, statistic)
        requests, race_text, fit = _race_the_row_pays(
            requests, race_text,
            lambda k: read_fit(row, open_close, _race_charge(k * per_request, race_from), statistic),
            fitted_per_byte.get("two_streams"))
        if requests:
            key = "disk.interleaved_typical_race_requests" if statistic == "typical" else \
                "disk.interleaved_race_requests"
            fit = fit[:4] + (fit[4] + f" (after the read-ahead race's requests, charged apart per "
                             f"phase: {key})",)
        return requests, race_from, per_request, race_text, fit

    for which, oc, rate_key, over_key, label in (
            ("stream_read", oc_read, "disk.rate", "disk.overhead",
             "storage, one stream read (cache kept out)"),
            ("stream_write", oc_write, "disk.write_rate", "disk.write_overhead",
             "storage, one stream write (preallocated, fsync)"),
            ("stream_write_new", oc_write, "disk.alloc_write_rate", "disk.alloc_write_overhead",
             "storage, one stream write into a new file (no space reserved, fsync)"),
            ("stream_read_cached", oc_read, "host.cached_read_rate", "host.cached_read_overhead",
             "storage, one stream read again (in the page cache)")):
        if which == "stream_read":
            per_call, per_byte, rows, size, fallback = read_fit(which, oc)
        else:
            per_call, per_byte, rows, size = _stream_fit(run_id, docs, which, oc)
            fallback = ""
        overhead = per_call
        disk_byte = per_byte
        if disk_byte > 0:
            miss = _misses(run_id, docs, which, label, max(per_call, 0.0), per_byte, oc,
                           start if which == "stream_read" else (lambda b: 0.0))
            if miss:
                warnings.append(miss)
        fit = (f"{table2} '{label}': {rows} for {format_size(size)}; least squares of the time "
               f"against the number of calls gives {per_call * 1e6:.3g} us per call and "
               f"{per_byte * 1e9:.4g} ns per byte (after the open/close of Table 3"
               + (" and the fixed start at each call size (disk.read_latency, "
                  "disk.read_start_rate)" if which == "stream_read" and (latency or start_rate) else "")
               + ")" + fallback)
        if overhead < 0:
            put(over_key, "0s", fit + "; a negative slope is noise: no cost per call")
        else:
            put(over_key, _time(overhead), fit)
        if disk_byte <= 0:
            raise _no_time_per_byte(run_id, f"the storage stream ({which})", rows, disk_byte, size, oc)
        put(rate_key, _rate(1 / disk_byte), fit + ("; the copy between the rank's buffer and the "
                                                   "page cache is part of it"
                                                   if rate_key.startswith("disk") else
                                                   "; the copy from the page cache into the rank's "
                                                   "buffer, on the rank's core"))
    put("agent.ranks_per_agent", 0, "no service agents: ranks call the kernel directly")
    put("agent.count", 0, "no service agents")
    put("agent.overhead", "0s", "no service agents; collective MPI-IO's aggregators, which act as "
                                "agents, cost their copy (agent.copy_rate)")
    mem_rank = component_expected_best(pooled, "memory_rank", trials) * MIB
    put("agent.copy_rate", _rate(mem_rank),
        f"{table2} 'memory copy, slowest rank' (all ranks copying at once), {every}: a collective "
        "MPI-IO aggregator copies every call's data through its collective buffer")
    shared = (("two_writers", "two writers", "two streams written at once", "disk.shared_write_rate", oc_write,
               "'storage, two streams written at once': ranks 0 and 1 writing a half each (fsync)",
               "one rank, no two writers measured (disk.write_rate for any number of writers)"),
              ("two_files", "two writers of a file each", "two writers of a file each",
               "disk.files_write_rate", oc_write,
               "'storage, two writers of a file each': ranks 0 and 1 writing a half's bytes into "
               "a file of their own each (space reserved, fsync)",
               "one rank, no two writers of a file each measured (disk.shared_write_rate for them)"),
              ("two_streams", "two streams", "two streams at once", "disk.shared_read_rate",
               oc_read,
               "'storage, two streams read at once': ranks 0 and 1 reading a half each, the page "
               "cache kept out",
               "one rank, no two streams measured (disk.rate for any number of readers)"),
              ("two_interleaved", "two interleaved readers", "two interleaved readers",
               "disk.interleaved_read_rate", oc_read,
               "'storage, two interleaved readers': ranks 0 and 1 reading the whole file at once, "
               "every other block each, the page cache kept out",
               "one rank, no interleaved readers measured (disk.shared_read_rate for them)"),
              ("four_streams", "four readers", "four readers at once", "disk.four_read_rate", oc_read,
               "'storage, four readers at once': ranks 0 and 1 with a thread each beside them "
               "reading a quarter each, the page cache kept out",
               "no four readers measured (one rank, or a quarter of the file less than a call): "
               "disk.shared_read_rate for any number of readers above one"),
              ("four_interleaved", "four interleaved readers", "four interleaved readers",
               "disk.four_interleaved_read_rate", oc_read,
               "'storage, four interleaved readers': ranks 0 and 1 with a thread each beside them "
               "reading the quarters' bytes at once, every fourth block each, the page cache kept out",
               "no four interleaved readers measured (one rank, or a quarter of the file less than a "
               "call): the two interleaved readers' rate for any number above one"),
              ("two_same", "two readers of the same bytes", "two readers of the same bytes",
               "disk.same_read_rate", oc_read,
               "'storage, two readers of the same bytes': ranks 0 and 1 each reading the whole "
               "file at once, the page cache kept out; the file's bytes over the time",
               "one rank, no two readers of the same bytes measured (disk.rate for a broadcast)"))
    fitted_per_byte = {}  # row: its fit's seconds per byte (the race is held to two halves')
    for row, name, label, key, open_close, measured, alone in shared:
        over_key = {"two_interleaved": "disk.interleaved_read_overhead",
                    "four_interleaved": "disk.four_interleaved_read_overhead",
                    "two_files": "disk.files_write_overhead"}.get(row)
        if row in OPTIONAL_ROWS and row not in c:
            put(key, "0", f"{where}: made by a probe before the '{label}' row: not measured "
                          f"({OPTIONAL_ROWS[row]})")
            if over_key:
                put(over_key, "0s", f"{where}: made by a probe before the '{label}' row: unused")
            continue
        if not _need(run_id, c, row, label):
            put(key, "0", f"{where}: {alone}")
            if over_key:
                put(over_key, "0s", f"{where}: {alone}")
            if row == "two_interleaved":
                put("disk.interleaved_race_requests", 0, f"{where}: {alone}")
                put("disk.interleaved_race_from", "0", f"{where}: {alone}")
                put("disk.interleaved_request_overhead", "0s", f"{where}: {alone}")
                for typical in TYPICAL_INTERLEAVED:
                    put(typical, "0", f"{where}: {alone}")
            continue
        if row == "two_interleaved":
            requests, race_from, per_request, race_text, (per_call, per_byte, rows, size, fallback) = \
                interleaved_fit(row, open_close, "best")
            put_race("disk.interleaved_", requests, race_from, race_text, "interleaved readers")
            put("disk.interleaved_request_overhead", _time(per_request), f"{table2} {race_text}")
            # the same row halfway to its median trial: the race as two
            # readers on cores of their own usually run it (docs/model.md,
            # the race's usual outcome); the best trial stays for readers
            # that outnumber the cores, which keep their windows more often
            t_requests, t_from, _, t_text, (t_call, t_byte, t_rows, _, t_fallback) = \
                interleaved_fit(row, open_close, "typical")
            usual = (f"{table2} {measured}, halfway between the best and the median trial at each call "
                     "size (its typical trial)")
            if t_byte <= 0:
                for typical in TYPICAL_INTERLEAVED:
                    put(typical, "0", f"{usual}: {t_rows} leave no time per byte (noise): unused, "
                                      "the best trial's fit for every interleaved reader")
            else:
                put("disk.interleaved_typical_read_rate", _rate(1 / t_byte),
                    f"{usual}: {t_rows} for {format_size(size)}; least squares as for the one stream "
                    f"gives {t_byte * 1e9:.4g} ns per byte" + t_fallback)
                put("disk.interleaved_typical_read_overhead", _time(max(t_call, 0.0)),
                    f"{usual}: {t_rows}; least squares of the time against the number of calls gives "
                    f"{t_call * 1e6:.3g} us per call" + ("; a negative slope is noise: no cost per call"
                                                         if t_call < 0 else ""))
                put_race("disk.interleaved_typical_", t_requests, t_from, t_text,
                         "interleaved readers' typical trial")
        elif row in WRITER_ROWS:
            per_call, per_byte, rows, size = _stream_fit(run_id, docs, row, open_close)
            fallback = ""
        else:
            per_call, per_byte, rows, size, fallback = read_fit(row, open_close)
        fitted_per_byte[row] = per_byte
        if per_byte <= 0:
            raise _no_time_per_byte(run_id, f"the {name}", rows, per_byte, size, open_close)
        put(key, _rate(1 / per_byte),
            f"{table2} {measured}: {rows} for {format_size(size)}; least squares as for the one "
            f"stream gives {per_byte * 1e9:.4g} ns per byte" + _device_requests(docs, row)
            + (" (after the read's fixed start at each call size: the readers start side "
               "by side)" if row not in WRITER_ROWS and (latency or start_rate) else "")
            + fallback)
        if over_key:
            fit = (f"{table2} {measured}: {rows} for {format_size(size)}; least squares of the "
                   f"time against the number of calls gives {per_call * 1e6:.3g} us per call")
            put(over_key, _time(max(per_call, 0.0)),
                fit + ("; a negative slope is noise: no cost per call" if per_call < 0 else ""))
    if c.get("four_streams") and c.get("four_short_streams"):
        race, race_from, race_text = share_race(docs, lambda b: oc_read + start(b), start)
        put("disk.share_race_restarts", race, f"{table2} {race_text}")
        put("disk.share_race_from", str(race_from),
            f"{table2} the smallest call size whose four readers of short shares lost a restart or "
            "more against four readers whose windows hold" if race else f"{table2} no race: unused")
    else:
        why = ("made by a probe before the 'four readers of short shares' row" if "four_short_streams" not in c
               else "no four readers of short shares measured (one rank, a device with no read-ahead "
                    "window, or four windows not less than the file)")
        put("disk.share_race_restarts", 0, f"{where}: {why}: {OPTIONAL_ROWS['four_short_streams']}")
        put("disk.share_race_from", "0", f"{where}: {why}: unused")
    buffers = c.get("buffer_streams")
    if buffers:  # each row pooled over every point's trials, as the other pooled rows
        rows = {"write_seconds": "buffer_write", "read_seconds": "buffer_read",
                "two_writers_seconds": "buffer_writers", "two_readers_seconds": "buffer_readers",
                "four_readers_seconds": "buffer_four_readers"}
        buffers = {**buffers, **{k: {**buffers[k], "best": buffers["bytes"] / MIB / component_expected_best(pooled, r, trials)}
                                 for k, r in rows.items() if k in buffers and component_expected_best(pooled, r, trials)}}
    _buffer_rates(put, run_id, buffers, oc_write, oc_read + latency, table2, where)
    cb = c["collective_mpiio"].get("cb_buffer_size")
    if cb:
        put("agent.cb_buffer", str(cb),
            f"{table3} 'collective MPI-IO': cb_buffer_size as MPI_File_get_info gave it for the "
            f"probe's collective file ({c['collective_mpiio']['implementation']})")
    else:
        put("agent.cb_buffer", str(ROMIO_CB_BUFFER),
            f"{where}: the MPI-IO library ({c['collective_mpiio']['implementation']}) did not say "
            "its cb_buffer_size (MPI_File_get_info): ROMIO's default, 16 MiB, which the presets "
            "leave as is; tests/test_model_two_phase.py holds the model's buffers against the "
            "write calls ROMIO makes here")
    if messages:
        per_msg, per_byte, rows, size = _message_fit(run_id, docs)
        fit = (f"{table2} 'MPI messages of one call's size, rank 1 to 0': {rows} for "
               f"{format_size(size)}; least squares of the time against the number of messages "
               f"gives {per_msg * 1e6:.3g} us per message and {per_byte * 1e9:.4g} ns per byte")
        put("agent.message_overhead", _time(max(per_msg, 0.0)),
            fit + ("; a negative slope is noise: no cost per message" if per_msg < 0 else ""))
        put("agent.message_rate", _rate(1 / per_byte), fit)
    else:
        put("agent.message_overhead", "0s", f"{where}: one rank, no messages measured")
        put("agent.message_rate", "0", f"{where}: one rank, no messages measured (a collective "
                                       "point of several ranks lacks its aggregation traffic)")
    put("agent.mode", "masync", "no service agents, so no shared-file token")
    put("agent.munix_overhead", 0, "no service agents")

    put("host.cores", cores, f"{where}: mpi.hosts, the {cores} cores of {host}; ranks above them "
                             "share cores")
    busy = component_expected_best(pooled, "busy_handover", trials)
    busy_threads = (c.get("busy_handover") or {}).get("busy_threads", cores)
    if busy and busy > 0:
        put("host.busy_handover", _time(busy),
            f"{table3} 'hand-over between yielding waiters, a busy thread on every core': {every}, "
            f"half a round trip of a message between ranks 0 and 1 that wait for it by MPI_Test and "
            f"sched_yield (Open MPI's wait when ranks outnumber cores) while {busy_threads} "
            "thread(s) copy memory without yielding")
    else:
        put("host.busy_handover", "0s",
            f"{where}: no busy hand-over row (one rank, or an older probe): a crowded "
            "collective's waits beside busy ranks are not modelled")
    put("host.page_cache", str(memory), f"{where}: mpi.hosts, the {format_size(memory)} of memory of "
                                        f"{host}, all of which the page cache may fill")
    missing = [k for k in PARAMS if k not in v]
    assert not missing, missing  # a parameter added to params.py needs its line here
    from .params import parse_value

    values = {k: parse_value(k, v[k]) for k in PARAMS}
    # a figure is the best of its point's trials, and so is each row here:
    # a printed machine says for how many, as its predictions differ
    best_of = (f", every row as the best of {trials} trial{'s' * (trials != 1)} (for points of "
               f"{trials}: --iterations {trials})" if trials else ", every row as the best of its own trials")
    machine = Machine(name=f"{PREFIX}{run_id}", title=f"this host as {where} measured it{best_of}",
                      values=values, sources=dict(src), host_page_cache=True,
                      file_name=f"{PREFIX}{run_id}", source=f"pario {where}",
                      warnings=warnings, measured_ranks=int(main["mpi"]["ranks"]), best_of=trials or 0,
                      storage=(f"memory ({t.get('fs_type')} storage)" if memory_storage else ""))
    machine.written = {k: v[k] for k in PARAMS}
    check_relations(values, f"machine {PREFIX}{run_id}")
    apply_overrides(machine, overrides)
    return machine


def unmeasured_ranks(machine, points, store):
    """The warning a plan's points of several ranks need when the probe
    behind `machine` (a run of `store`) had one rank: what ranks do to each
    other (the token hand-over, messages, several readers and writers of
    one file at once) was not measured, and its parameters hold one
    stream's rates and zero costs, so those points are predicted as if it
    were free.  [] for a described machine, a probe of several ranks, or a
    plan of one rank."""
    above = sorted({p.ranks for p in points if p.ranks > 1})
    if machine.measured_ranks != 1 or not above:
        return []
    run_id = int(machine.name[len(PREFIX):])
    again = probe_again(store.run(run_id), store.points(run_id), ranks="2")
    ranks = " and ".join(filter(None, (", ".join(map(str, above[:-1])), str(above[-1]))))
    return [f"probe run {run_id} had one rank: token hand-over, MPI messages and several readers or "
            f"writers at once were not measured, so the points of {ranks} ranks use one stream's "
            f"rates and no token or message costs: probe with 2 or more ranks ({again}) to measure them"]
