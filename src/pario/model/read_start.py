"""A read phase's fixed start, and how it grows with the call size.

Each rank pays, once per read phase, the time from its first read call
until its first bytes arrive with the page cache empty: the kernel's first,
synchronous read-ahead, which the calls after it do not wait for (their
read-ahead is asynchronous, ahead of them).  The kernel sizes that first
read-ahead from the call itself (Linux's initial window is a multiple of
the request: a 4 KiB call starts with a small window that grows, a 1 MiB
call with a window of a few MiB the call must wait for whole), and near
the end of a file it stops at the end, so a stream of large calls also
pays more there.  On this kind of host the probe's fixed start grows with
the call: 0.3-0.6 ms at 4 KiB calls, 2.8-3.4 ms at 1 MiB (the quiet probes
of issue 12).

The probe reads its stream whole (S bytes in T) and its last eighth (s in
t) at each call size b, the cache emptied before each; the line through
the two at 0 bytes is the fixed start at b, (S t - s T) / (S - s), less the
open/close of Table 3.  A least-squares line of those starts against b
gives the start at calls of no size (disk.read_latency) and its growth per
byte of call (1 / disk.read_start_rate), up to the largest call size it
measured (disk.read_start_limit): beyond the data the line is not taken
(the kernel caps its read-ahead window, so the growth stops somewhere the
probe did not see).  With one call size there is no growth to see: the
start is that one.  A two-phase point's aggregators read ROMIO's buffers,
larger than the probe's calls: they start as the largest call."""

from ..units import format_size


def start_seconds(machine, block):
    """A rank's fixed start of a read phase whose calls are `block` bytes:
    the line is not taken beyond the largest call the probe measured
    (disk.read_start_limit): a larger call starts as one of that size."""
    rate, limit = machine["disk.read_start_rate"], machine["disk.read_start_limit"]
    if limit:
        block = min(block, limit)
    return machine["disk.read_latency"] + (block / rate if rate else 0.0)


def fit(points):
    """(latency s, growth s per byte, text) from [(block, start s)], sorted."""
    k = len(points)
    if k == 1:
        return points[0][1], 0.0, "one call size: no growth with the call seen"
    mb = sum(b for b, _ in points) / k
    ms = sum(s for _, s in points) / k
    sbb = sum((b - mb) ** 2 for b, _ in points)
    slope = sum((b - mb) * (s - ms) for b, s in points) / sbb
    return ms - slope * mb, slope, (f"least squares of the starts against the call size over "
                                    f"{', '.join(format_size(b) for b, _ in points)}")
