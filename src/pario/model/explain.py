"""Which resource bounded a predicted point, from the simulation's counters.

The rule: the busiest kind of resource (the highest utilisation of any one
of its instances) bounds the point when it is busy most of the time
(BUSY or more); otherwise nothing was saturated and the ranks' own waiting
(one synchronous request at a time, the round trip of each) bounded it.
A busy disk is further split by what kept it busy: with a cache, how many
blocks the disks read per block the ranks asked for, and how many
prefetched blocks were evicted unread (the CFS report's thrashing)."""

BUSY = 0.8

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
_PLAIN = {"disk": "disks", "io_node": "I/O node processors", "io_link": "I/O node links",
          "rank_link": "compute node links", "backplane": "backplane", "agent": "service agents",
          "file_token": "shared-file token", "cpu": "CPU cores"}


def _buffers(b):
    """The two-phase aggregators' transfers behind a busy disk."""
    size = b["largest_bytes"] / (1 << 20)
    how = (f"at the probe's {b['rate'] / (1 << 20):.0f} MiB/s for calls that size" if b["rate"]
           else "at the disk's rates")
    return (f"; {b['aggregators']} collective aggregator(s), {b['transfers']} buffer transfer(s) "
            f"of up to {size:.3g} MiB {how}")


def explain(counters, op, block_bytes=None):
    util = {k: v for k, v in counters["utilisation"].items() if v}
    kind, top = max(((k, min(v["max"], 1.0)) for k, v in util.items()), key=lambda kv: kv[1])
    out = {"bound": kind if top >= BUSY else "latency",
           "utilisation": {k: round(min(v["max"], 1.0), 3) for k, v in util.items()}}
    cache = counters.get("cache")
    if top < BUSY:
        out["text"] = (f"latency: no resource above {BUSY:.0%} busy (busiest: {_PLAIN[kind]} "
                       f"{top:.0%}); each rank waits for its own requests' round trips")
        pc = counters.get("page_cache")
        if pc and pc["hits"]:
            out["text"] += (f"; {pc['hits']} of {pc['hits'] + pc['misses']} calls served from the "
                            "page cache another rank's read filled")
        return out
    text = f"{_NAMES[kind]} ({top:.0%} busy)"
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
    elif kind == "agent":
        text += f": {counters['agents']} agent(s) each serve one synchronous call at a time"
    pc = counters.get("page_cache")
    if pc and pc["hits"]:
        text += (f"; {pc['hits']} of {pc['hits'] + pc['misses']} calls served from the page cache "
                 "another rank's read filled")
    if kind == "disk" and counters.get("collective_buffers"):
        text += _buffers(counters["collective_buffers"])
    out["text"] = text
    return out
