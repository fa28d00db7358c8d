"""Which resource bounded a predicted point, from the simulation's counters.

The rule: the busiest kind of resource (the highest utilisation of any one
of its instances) bounds the point when it is busy most of the time
(BUSY or more); otherwise nothing was saturated and the ranks' own waiting
(one synchronous request at a time, the round trip of each) bounded it.
A busy disk is further split by what kept it busy: with a cache, how many
blocks the disks read per block the ranks asked for, and how many
prefetched blocks were evicted unread (the CFS report's thrashing); on a
probed host, which of the probe's rates for several readers it read at.
A point with nothing busy whose ranks spent a quarter or more of the phase
in their read's fixed start (the kernel's first read-ahead) is bound by
that start ("read_start"), not by round trips; a grouped point with nothing
busy whose ring spent a quarter or more of the phase handing its token on
is bound by the token ("token"): on a host whose ranks outnumber its cores
each hand-over switches the next holder in on a core.

A read served partly from blocks an earlier phase left in the I/O nodes'
caches says how many, and which phase left them: the caches are the
servers', which eviction before a read (the clients' page cache) does not
empty, so a file that fits in them is read back from memory (the CFS report
used a 128 MB file, over twelve times its I/O nodes' caches, to keep buffering out,
line 139)."""

from ..units import format_size

BUSY = 0.8
# A point no resource kept busy whose ranks spent at least this share of the
# phase in their read's fixed start is bound by that start.
START_SHARE = 0.25

_NAMES = {
    "disk": "busy disks",
    "io_node": "busy I/O node processors",
    "io_link": "saturated I/O node links",
    "rank_link": "saturated compute node links",
    "backplane": "saturated backplane",
    "agent": "serialising service agents",
    "file_token": "shared-file token (munix) serialising calls between agents",
    "cpu": "busy CPU cores (the ranks share host.cores)",
}
# The disk's read rate a point used, when not the one stream's (simulate.py).
_RATES = {"disk.shared_read_rate": "the rate of two streams at once",
          "disk.four_read_rate": "the rate of four readers at once",
          "disk.four_interleaved_read_rate": "the rate of four interleaved readers",
          "disk.interleaved_read_rate": "the rate of two interleaved readers",
          "disk.interleaved_typical_read_rate": ("the rate of two interleaved readers, "
                                                 "its typical trial (readers on cores of their own)"),
          "disk.same_read_rate": "the rate of two readers of the same bytes",
          "disk.shared_write_rate": "the rate of two writers of one file",
          "disk.files_write_rate": "the rate of two writers of a file each"}
_PLAIN = {"disk": "disks", "io_node": "I/O node processors", "io_link": "I/O node links",
          "rank_link": "compute node links", "backplane": "backplane", "agent": "service agents",
          "file_token": "shared-file token", "cpu": "CPU cores"}


def _buffers(b):
    """The two-phase aggregators' transfers behind a busy disk, and their
    waits on a crowded host."""
    return _transfers(b) + _handovers(b)


def _transfers(b):
    """'; N collective aggregator(s), M buffer transfer(s) ...'."""
    size = b["largest_bytes"] / (1 << 20)
    how = (f"at the probe's {b['rate'] / (1 << 20):.0f} MiB/s for calls that size" if b["rate"]
           else "at the disk's rates")
    if b.get("in_turn"):
        how += (", one writer's rate: one file's writes pass one at a time and its sync waits "
                "for the last of them")
    return (f"; {b['aggregators']} collective aggregator(s), {b['transfers']} buffer transfer(s) "
            f"of up to {size:.3g} MiB {how}")


def _handovers(b):
    """'; after each of N rounds ...' when a crowded host's ranks waited
    beside busy ones (exchange.py), else ''."""
    if not b.get("handover_rounds"):
        return ""
    return (f"; {b['ranks']} ranks on {b['cores']} cores: after each of {b['handover_rounds']} "
            f"round(s) of the aggregators' work the next step waited "
            f"{b['handover_seconds'] * 1e3:.3g} ms for ranks yielding beside busy ones "
            "(host.busy_handover)")


def _crowded(counters):
    """Seconds a crowded two-phase phase spent in such waits (0 if none)."""
    b = counters.get("collective_buffers") or {}
    return b.get("handover_rounds", 0) * b.get("handover_seconds", 0.0)


def _left_by(counters, op, before):
    """'; N of M blocks asked ... left by the write phase', or ''."""
    cache = counters.get("cache")
    carried = (cache or {}).get("hits_left_by_earlier_phase", 0)
    if op != "read" or not carried:
        return "", 0.0
    asked = cache["hits"] + cache["misses"] + cache["waits_on_disk"]
    share = carried / asked if asked else 0.0
    left = f"the {before} phase" if before else "an earlier phase"
    return (f"; {carried} of {asked} blocks asked ({share:.0%}) served by the I/O-node cache "
            f"left by {left}, not by the disks (a server's cache, which no eviction on the "
            "clients empties)"), share


def explain(counters, op, block_bytes=None, before=None, storage=None):
    """What bounded a phase; `before` names the phase that ran before it on
    the same machine state ('write', or "previous trial's read"); `storage`
    names the machine's disks where they are something else (a tmpfs
    probe's memory)."""
    left, share = _left_by(counters, op, before)
    out = _explain(counters, op, storage)
    if left:
        out["text"] += left
        out["served_by_earlier_phase_fraction"] = round(share, 3)
    return out



def _read_race(counters):
    """', and ... once per phase: ...' where a read phase's readers lost a
    read-ahead race the model charges on the disk (simulate.py), else ''."""
    seconds = counters.get("read_race_seconds")
    if not seconds:
        return ""
    if counters.get("read_race_key") == "disk.share_race_restarts":
        return (f", and {seconds * 1e3:.3g} ms once per phase: the short shares' read-ahead race "
                f"({format_size(counters['read_race_share'])} a rank, shorter than a reader's "
                "read-ahead ramp reaches; disk.share_race_restarts read starts)")
    return (f", and {seconds * 1e3:.3g} ms of extra device requests once per phase: the readers' "
            f"read-ahead race ({counters.get('read_race_key') or 'disk.interleaved_race_requests'})")


def _windows_queued(counters):
    """'; the device reads the ranks' first windows one after another ...'
    where readers of different bytes opened them at once, else ''."""
    on_disk = counters.get("read_start_window_on_disk_seconds")
    return (f"; the device reads the ranks' first read-ahead windows one after another, "
            f"{on_disk * 1e3:.3g} ms each" if on_disk else "")


def _page_cache_hits(counters):
    """'; N of M calls served from the page cache ...' when a broadcast's
    later readers found what an earlier one read, else ''."""
    pc = counters.get("page_cache")
    if not (pc and pc["hits"]):
        return ""
    text = (f"; {pc['hits']} of {pc['hits'] + pc['misses']} calls served from the page cache "
            "another rank's read filled")
    held = pc.get("waits_for_readers_in_step")
    if held:
        text += (f", {held} call{'s' if held > 1 else ''} that read from the disk held until every "
                 "reader had copied the call before (readers in step until the read-ahead's windows "
                 "reach their largest)")
    return text


def _a(words):
    """'a 2 MiB', 'an 8 MiB', 'an 11 KiB': the article of a size read aloud."""
    number = words.split(".")[0].split()[0]
    return ("an " if number.startswith("8") or number in ("11", "18") else "a ") + words

def _explain(counters, op, storage=None):
    names, plain = _NAMES, _PLAIN
    if storage:
        names, plain = {**_NAMES, "disk": f"busy {storage}"}, {**_PLAIN, "disk": storage}
    util = {k: v for k, v in counters["utilisation"].items() if v}
    kind, top = max(((k, min(v["max"], 1.0)) for k, v in util.items()), key=lambda kv: kv[1])
    if kind == "agent" and min(util.get("file_token", {}).get("max", 0.0), 1.0) >= BUSY:
        # agents busy because each waits its turn for MUNIX's token: the
        # token, not the agents, serialises the calls
        kind, top = "file_token", min(util["file_token"]["max"], 1.0)
    out = {"bound": kind if top >= BUSY else "latency",
           "utilisation": {k: round(min(v["max"], 1.0), 3) for k, v in util.items()}}
    cache = counters.get("cache")
    start = counters.get("read_start_seconds", 0.0)
    if top < BUSY and start >= START_SHARE * counters["seconds"]:
        # a local host's read is mostly each rank's fixed start (read_start.py)
        out["bound"] = "read_start"
        window = counters.get("read_start_window")
        sized = (f"{_a(format_size(window))} window opened for its call, disk.read_ahead"
                 if window else "sized from the call")
        queued = _windows_queued(counters)
        out["text"] = (f"read start: each rank waits {start * 1e3:.3g} ms for its first bytes (the "
                       f"kernel's first read-ahead, {sized}), "
                       f"{start / counters['seconds']:.0%} of the phase{queued}; busiest resource "
                       f"{plain[kind]} {top:.0%}") + _page_cache_hits(counters)
        return out
    token = counters.get("token_handover_seconds", 0.0)
    if top < BUSY and token >= START_SHARE * counters["seconds"]:
        # a grouped run's ranks mostly wait for the token to come round
        key = counters.get("token_latency_key", "network.token_latency")
        crowded = ("; ranks above the cores: each switches the next holder in on a core"
                   if key.endswith("_crowded") else "")
        out["bound"] = "token"
        out["text"] = (f"token: no resource above {BUSY:.0%} busy (busiest: {plain[kind]} "
                       f"{top:.0%}); the group's token hand-overs ({key}{crowded}) take "
                       f"{token * 1e3:.3g} ms, {token / counters['seconds']:.0%} of the phase"
                       ) + _page_cache_hits(counters)
        return out
    waited = _crowded(counters)
    if top < BUSY and waited:
        # a crowded host's collective: its ranks waited beside busy ones
        b = counters["collective_buffers"]
        out["bound"] = "crowded"
        out["text"] = (f"crowded cores: {b['ranks']} ranks on {b['cores']} cores, Open MPI's waiting "
                       f"ranks yield: {waited * 1e3:.3g} ms ({waited / counters['seconds']:.0%} of "
                       f"the phase) waiting for ranks yielding beside busy ones; busiest resource "
                       f"{_PLAIN[kind]} {top:.0%}") + _transfers(b)
        return out
    if top < BUSY:
        out["text"] = (f"latency: no resource above {BUSY:.0%} busy (busiest: {plain[kind]} "
                       f"{top:.0%}); each rank waits for its own requests' round trips"
                       ) + _read_race(counters) + _page_cache_hits(counters)
        return out
    text = f"{names[kind]} ({top:.0%} busy)"
    if kind == "disk" and cache and op == "read":
        asked = cache["hits"] + cache["misses"] + cache["waits_on_disk"]
        per_request = cache["blocks_read"] / asked if asked else 0.0
        unused = cache["prefetched_unused"] / cache["blocks_read"] if cache["blocks_read"] else 0.0
        out["disk_blocks_per_request"] = round(per_request, 2)
        out["prefetched_unused_fraction"] = round(unused, 3)
        if unused > 0.25:
            out["bound"] = "cache_thrash"
            text += (f": cache thrashing, {per_request:.1f} blocks read from disk per block "
                     f"asked, {unused:.0%} of prefetched blocks evicted unread "
                     f"({cache['misses']} misses in {asked} requests)")
        else:
            text += f": {per_request:.2f} disk blocks read per block asked (prefetch used)"
    elif kind == "disk" and cache and op == "write":
        if cache["write_backs"]:
            per = cache["blocks_written_back"] / cache["write_backs"]
            out["blocks_per_write_back"] = round(per, 2)
            text += f": write-behind, {per:.1f} blocks per disk write"
    elif kind == "disk" and op == "read":
        if counters.get("disk_read_rate", "disk.rate") != "disk.rate":
            text += f": read at {_RATES[counters['disk_read_rate']]} ({counters['disk_read_rate']})"
        text += _read_race(counters) + _windows_queued(counters)
    elif kind == "disk" and op == "write":
        said = []
        if counters.get("disk_write_rate", "disk.write_rate") != "disk.write_rate":
            said.append(f"written at {_RATES[counters['disk_write_rate']]} ({counters['disk_write_rate']})")
        if counters.get("write_lock_handoffs"):
            said.append(f"the file's write lock passed between the token rings "
                        f"{counters['write_lock_handoffs']} times, each a waiting writer switched in "
                        f"(network.token_latency_crowded), "
                        f"{counters['write_lock_handoff_seconds'] * 1e3:.3g} ms")
        if said:
            text += ": " + "; ".join(said)
    elif kind == "agent":
        text += f": {counters['agents']} agent(s) each serve one synchronous call at a time"
    text += _page_cache_hits(counters)
    if kind == "disk" and counters.get("collective_buffers"):
        text += _buffers(counters["collective_buffers"])
    out["text"] = text
    return out
