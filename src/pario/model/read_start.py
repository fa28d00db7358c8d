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
start is that one; nor where every call size maps to one first window (a
small read_ahead_kb, below): the start is their median.  A two-phase point's aggregators read ROMIO's buffers,
larger than the probe's calls: they start as the largest call.

Where the probe recorded the device's largest read-ahead window
(disk.read_ahead, its read_ahead_kb: 8 MiB on this host's virtio disk),
the start is a line against the kernel's first window, not the call:
Linux opens a reader's first read-ahead at the call's pages rounded up to
a power of two, times 4 while that is at most a 32nd of the largest
window, times 2 up to a quarter of it, else the largest window
(mm/readahead.c, get_init_ra_size).  With 8 MiB that is 16 KiB for 4 KiB
calls, 256 KiB for 64 KiB, 1 MiB for 256 KiB, 2 MiB for 1 MiB, 4 MiB for
2 MiB and 8 MiB from 4 MiB on: the probe's call sizes (4 KiB-1 MiB) give
the line, and the largest window, not the largest call measured, is
where its growth stops.  A call above the probe's then starts with the
window it really opens (a 2 MiB call waits for 4 MiB), where the call's
line, cut at the largest call measured, took it as 1 MiB's."""

from ..units import format_size


PAGE = 4096


def first_window(block, read_ahead):
    """Bytes of the first read-ahead Linux opens for a read of `block`
    bytes at a file's start, with `read_ahead` bytes its largest window."""
    pages, largest = max(1, -(-block // PAGE)), max(1, read_ahead // PAGE)
    size = 1 << (pages - 1).bit_length()
    if size <= largest // 32:
        size *= 4
    elif size <= largest // 4:
        size *= 2
    else:
        size = largest
    return size * PAGE


def start_seconds(machine, block):
    """A rank's fixed start of a read phase whose calls are `block` bytes:
    with disk.read_ahead, the line at the first window such a call opens;
    without, at the call, not taken beyond the largest call the probe
    measured (disk.read_start_limit): a larger call starts as one of that
    size."""
    return machine["disk.read_latency"] + window_seconds(machine, block)


def window_seconds(machine, block):
    """The part of start_seconds that grows with the first window (or,
    without disk.read_ahead, the call up to disk.read_start_limit): its
    bytes at disk.read_start_rate, which the device reads for one reader
    at a time where several open theirs at once (simulate.py)."""
    rate, limit = machine["disk.read_start_rate"], machine["disk.read_start_limit"]
    if not rate:
        return 0.0
    if machine["disk.read_ahead"]:
        return first_window(block, machine["disk.read_ahead"]) / rate
    return (min(block, limit) if limit else block) / rate


def largest_call_start(machine, block):
    """The start of a call larger than the probe's (a two-phase
    aggregator's buffer): as the largest call it measured."""
    limit = machine["disk.read_start_limit"]
    return start_seconds(machine, min(block, limit) if limit else block)


def fit(points):
    """(latency s, growth s per byte, text) from [(block, start s)], sorted."""
    k = len(points)
    if len({b for b, _ in points}) == 1:
        # one x (one call size, or every call size opening the same first
        # window: a read_ahead_kb of 128 and calls of 64 KiB and 1 MiB): no
        # line to fit, the start does not depend on the call
        starts = sorted(s for _, s in points)
        mid = k // 2
        median = starts[mid] if k % 2 else (starts[mid - 1] + starts[mid]) / 2
        return median, 0.0, ("one call size: no growth with the call seen" if k == 1 else
                             f"every call size at one x ({format_size(points[0][0])}): no growth "
                             "with the call seen, their median")
    mb = sum(b for b, _ in points) / k
    ms = sum(s for _, s in points) / k
    sbb = sum((b - mb) ** 2 for b, _ in points)
    slope = sum((b - mb) * (s - ms) for b, s in points) / sbb
    return ms - slope * mb, slope, (f"least squares of the starts against the call size over "
                                    f"{', '.join(format_size(b) for b, _ in points)}")


def ramp_reach(block, read_ahead):
    """Bytes from a reader's first call of `block` bytes to the end of its
    first read-ahead window of the largest size (`read_ahead`): Linux grows
    each next window from the last, x4 while under a 16th of the largest, x2
    up to half of it, then the largest (mm/readahead.c, get_next_ra_size),
    and asks for that window when the reader reaches the start of the one
    before it.  A reader of contiguous bytes shorter than this asks, early
    in its read, for bytes past its own end (docs/model.md, the short
    shares' race).  0 without a read-ahead window."""
    if read_ahead <= 0:
        return 0
    largest = max(PAGE, read_ahead // PAGE * PAGE)
    size = first_window(block, read_ahead)
    reach = size
    while size < largest:
        size = 4 * size if size < largest // 16 else (2 * size if size <= largest // 2 else largest)
        size = min(size, largest)
        reach += size
    return reach
