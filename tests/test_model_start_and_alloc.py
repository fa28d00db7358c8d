"""Three costs of a probed host's disk the one-stream fit left out: a read
phase's fixed start on each rank (disk.read_latency: the kernel's first
read-ahead, side by side across ranks), the allocation a write into a
new file pays without --prealloc (disk.alloc_write_rate, _overhead), and
interleaved readers of one file (disk.interleaved_read_rate, _overhead).  Each
on a machine whose other costs are zero or known, so the predicted time is
a sum written down here.  Pure simulation: no engine, well under a second."""

import pytest

from pario.model import load_machine, predict_point
from test_model_host import machine, phase, point, refused_line

PREALLOC = ["--prealloc"]


def test_shipped_machines_have_neither():
    for name in ("ipsc860", "asci-red"):
        m = load_machine(name)
        assert m["disk.read_latency"] == 0 and m["disk.alloc_write_rate"] == 0
        assert m["disk.read_start_rate"] == 0
        assert m["disk.alloc_write_overhead"] == 0


def test_read_latency_is_paid_once_per_rank_side_by_side():
    """8 MiB at 100 MiB/s: 80 ms; a 10 ms start makes it 90 ms whether one
    rank reads it all or four read a quarter each at once (their starts
    overlap: not 4 x 10 ms), and a broadcast's readers start together too.
    Writes have no such start."""
    m = machine("disk.read_latency=10ms")
    assert phase(predict_point(point("partitioned", ranks=1), m))[0] == pytest.approx(0.09)
    assert phase(predict_point(point("partitioned", ranks=4), m))[0] == pytest.approx(0.09)
    assert phase(predict_point(point("interleaved", ranks=4), m))[0] == pytest.approx(0.09)
    cached = machine("disk.read_latency=10ms", "host.page_cache=1g", "host.cached_read_rate=1000MB/s",
                     "host.cached_read_overhead=0s")
    # rank 0 reads the 8 MiB (10 ms + 80 ms); the others copy its last MiB after it: 1 ms
    assert phase(predict_point(point(ranks=4), cached))[0] == pytest.approx(0.091)
    w = point("partitioned", ("write",), ranks=1, extra=PREALLOC)
    assert phase(predict_point(w, m))[0] == pytest.approx(0.08)
    # in a group the token's next holder starts its own stream when it gets the token
    grouped = point("partitioned", ranks=2, group=1)
    assert phase(predict_point(grouped, machine("disk.read_latency=10ms", "network.token_latency=0s")))[0] \
        == pytest.approx(0.08 + 2 * 0.01)


def test_read_start_grows_with_the_call_size():
    """disk.read_start_rate: a rank whose calls are b bytes starts after
    disk.read_latency + b / rate (the kernel's first read-ahead is sized
    from the call).  At 100 MiB/s a 1 MiB call adds 10 ms, a 64 KiB one
    0.625 ms; still once per rank, side by side; writes pay nothing."""
    m = machine("disk.read_latency=2ms", "disk.read_start_rate=100MB/s")
    assert phase(predict_point(point("partitioned", ranks=1), m))[0] == pytest.approx(0.08 + 0.012)
    assert phase(predict_point(point("partitioned", ranks=4), m))[0] == pytest.approx(0.08 + 0.012)
    small = point("partitioned", ranks=1, block=64 << 10)
    assert phase(predict_point(small, m))[0] == pytest.approx(0.08 + 0.002 + 0.000625)
    w = point("partitioned", ("write",), ranks=1, extra=PREALLOC)
    assert phase(predict_point(w, m))[0] == pytest.approx(0.08)
    assert phase(predict_point(point("partitioned", ranks=1), machine("disk.read_latency=2ms")))[0] \
        == pytest.approx(0.082)  # 0 = no growth
    # beyond disk.read_start_limit a call starts as one of the limit's size
    capped = machine("disk.read_latency=2ms", "disk.read_start_rate=100MB/s", "disk.read_start_limit=64k")
    assert phase(predict_point(point("partitioned", ranks=1), capped))[0] == pytest.approx(0.08 + 0.002 + 0.000625)


def test_two_phase_aggregators_pay_the_read_start():
    """A collective read: each aggregator starts its first buffer's read
    after the start, the aggregators side by side."""
    coll = ["--collective", "--mpiio-impl", "romio"]
    base = ["agent.cb_buffer=16MB", "host.page_cache=1g", "host.cached_read_rate=1000000MB/s"]
    p = point("partitioned", ranks=2, size=8 << 20, block=1 << 20, api="mpiio", options=coll,
              aggregators=2)
    plain = phase(predict_point(p, machine(*base)))[0]
    started = phase(predict_point(p, machine(*base, "disk.read_latency=10ms")))[0]
    assert started - plain == pytest.approx(0.01, rel=1e-3)
    # the start of a call of ROMIO's buffer, up to the probe's largest call
    # (1 MiB: 10 ms more at 100 MiB/s), not a 16 MiB call's 160 ms
    grown = phase(predict_point(p, machine(*base, "disk.read_latency=10ms", "disk.read_start_rate=100MB/s",
                                           "disk.read_start_limit=1m")))[0]
    assert grown - started == pytest.approx(0.01, rel=1e-3)


def test_a_new_file_without_prealloc_pays_the_allocation():
    """One writer of a new file writes at disk.alloc_write_rate (+ its
    per-call cost); with --prealloc at disk.write_rate.  Two writers at
    once: the shared rate's cost per byte plus the allocation's extra
    (1/50 - 1/100 per MiB), whoever writes."""
    m = machine("disk.alloc_write_rate=50MB/s", "disk.alloc_write_overhead=1ms")
    new = point("partitioned", ("write",), ranks=1)
    assert phase(predict_point(new, m))[0] == pytest.approx(8 / 50 + 8 * 0.001)
    assert phase(predict_point(point("partitioned", ("write",), ranks=1, extra=PREALLOC), m))[0] \
        == pytest.approx(8 / 100)
    shared = machine("disk.alloc_write_rate=50MB/s", "disk.shared_write_rate=200MB/s")
    two = point("partitioned", ("write",), ranks=2)
    assert phase(predict_point(two, shared))[0] == pytest.approx(8 * (1 / 200 + 1 / 50 - 1 / 100))
    # reads are not affected
    assert phase(predict_point(point("partitioned", ranks=1), m))[0] == pytest.approx(8 / 100)


def test_interleaved_readers_of_one_file_take_their_rate():
    """Two or more ranks (or groups) reading one file in interleaved blocks
    at once read at disk.interleaved_read_rate with its per-call cost; a
    partitioned file, one rank, files of their own and a collective point's
    aggregators keep the other rates."""
    m = machine("disk.interleaved_read_rate=50MB/s", "disk.interleaved_read_overhead=1ms",
                "disk.shared_read_rate=80MB/s")
    inter = point("interleaved", ranks=2)
    assert phase(predict_point(inter, m))[0] == pytest.approx(8 / 50 + 8 * 0.001)
    assert phase(predict_point(point("interleaved", ranks=2, group=2), m))[0] == pytest.approx(8 / 50 + 8 * 0.001)
    assert phase(predict_point(point("partitioned", ranks=2), m))[0] == pytest.approx(8 / 80)
    assert phase(predict_point(point("interleaved", ranks=1), m))[0] == pytest.approx(8 / 100)
    own = point("interleaved", ranks=2, files="per-rank")
    assert phase(predict_point(own, m))[0] == pytest.approx(8 / 80)
    writes = point("interleaved", ("write",), ranks=2)
    assert phase(predict_point(writes, m))[0] == pytest.approx(8 / 100)


@pytest.mark.parametrize("sets,phrase", [
    (["disk.read_latency=5"], "disk.read_latency = '5' is not a valid time"),
    (["disk.read_latency=3MB/s"], "is not a valid time"),
    (["disk.read_latency=-1ms"], "is not a valid time"),
    (["disk.alloc_write_rate=fast"], "disk.alloc_write_rate = 'fast' is not a valid rate"),
    (["disk.alloc_write_rate=-5MB/s"], "is not a valid rate"),
    (["disk.alloc_write_overhead=1MB"], "is not a valid time"),
    (["disk.interleaved_read_rate=1ms"], "is not a valid rate"),
    (["disk.read_start_rate=2ms"], "disk.read_start_rate = '2ms' is not a valid rate"),
    (["disk.read_start_rate=-1MB/s"], "is not a valid rate"),
    (["disk.interleaved_read_overhead=fast"], "disk.interleaved_read_overhead = 'fast' is not a valid time"),
])
def test_bad_values_are_refused(sets, phrase):
    assert phrase in refused_line(*sets)
