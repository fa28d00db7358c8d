"""The host a probed machine's ranks share, in the simulation: its cores
(host.cores), its page cache within a read phase (host.page_cache and the
cached read's cost), a crowded token hand-over, a collective call's own
cost and an aggregator's messages.  Each on a machine whose other costs are
zero or known, so the predicted time is a sum these tests can write down.
Pure simulation: no engine, well under a second."""

import pytest

from pario.errors import UsageError
from pario.model import load_machine, predict_point
from pario.studies.io import IoPoint

MIB = float(1 << 20)
# One local disk, no network, no cache of an I/O node's own, no fixed costs:
# the shape of a probed machine with round numbers.
LOCAL = ["network.link_rate=0", "network.latency=0s", "io_node.cache=0", "stripe.unit=1g",
         "io_node.cache_block=1g", "stripe.count=1", "io_node.count=1", "io_node.memory_rate=0",
         "io_node.request_overhead=0s", "io_node.link_dma=yes", "file.open_close_write=0s",
         "file.open_close_read=0s", "disk.overhead=0s", "disk.write_overhead=0s",
         "disk.rate=100MB/s", "disk.write_rate=100MB/s", "io_node.prefetch=1",
         "io_node.readahead_at=0", "io_node.write_group=1"]


FREE_WRITE, FREE_READ = "disk.write_rate=1000000000MB/s", "disk.rate=1000000000MB/s"


def machine(*extra):
    return load_machine("ipsc860", LOCAL + list(extra))


def refused_line(*sets):
    """The one line a machine with these --set values is refused with
    (the bad-value tests of every model test file)."""
    with pytest.raises(UsageError) as e:
        machine(*sets)
    assert "\n" not in str(e.value)
    return str(e.value)


def point(layout="broadcast", phases=("read",), ranks=4, block=1 << 20, size=8 << 20, **kw):
    return IoPoint("t", "t", layout, list(phases), ranks, block, size, iterations=1, **kw)


def phase(doc, i=0):
    ph = doc["phases"][i]
    return ph["iterations"][0]["seconds"], ph["iterations"][0]["model"]["counters"], ph


def test_shipped_machines_share_no_host():
    for name in ("ipsc860", "asci-red"):
        m = load_machine(name)
        assert m["host.cores"] == 0 and m["host.page_cache"] == 0
        assert m["agent.message_rate"] == 0 and m["client.collective_overhead"] == 0


def test_broadcast_later_readers_hit_the_page_cache():
    """4 ranks read one 8 MiB file: without a page cache the disk serves 4 x 8
    MiB; with it, 8 MiB, and the 3 others copy each call at the cached rate."""
    seconds, counters, _ = phase(predict_point(point(), machine()))
    assert seconds == pytest.approx(32 / 100)
    assert "page_cache" not in counters
    cached = machine("host.page_cache=1g", "host.cached_read_rate=1000MB/s",
                     "host.cached_read_overhead=0s")
    seconds, counters, ph = phase(predict_point(point(), cached))
    assert counters["page_cache"]["misses"] == 8 and counters["page_cache"]["hits"] == 24
    assert counters["disk_transfers"] == 8
    # the disk reads 8 MiB (0.08 s); the last copy of the last block ends 1 ms later
    assert seconds == pytest.approx(0.08 + 0.001, rel=1e-6)
    assert "served from the page cache" in ph["explanation"]["text"]
    # partitioned reads touch distinct bytes: no hits
    _, counters, _ = phase(predict_point(point("partitioned"), cached))
    assert counters["page_cache"]["hits"] == 0 and counters["disk_transfers"] == 8


def test_broadcast_readers_in_step_while_the_read_ahead_ramps():
    """With disk.read_ahead=4m a 1 MiB call opens a 2 MiB window and the
    next is the largest (4 MiB): the ramp reaches 6 MiB.  The disk reads
    of calls 1-5 of an 8 MiB broadcast (offsets below 6 MiB) wait until the
    3 other readers have copied the call before (1 ms each, side by side on
    8 cores); calls 6 and 7 run ahead of the copies: 8 x 10 ms of disk, 5 x
    1 ms of copies in step, and the last call's copy."""
    base = ["host.page_cache=1g", "host.cached_read_rate=1000MB/s",
            "host.cached_read_overhead=0s", "host.cores=8"]
    flat, _, _ = phase(predict_point(point(), machine(*base)))
    assert flat == pytest.approx(0.081, rel=1e-6)
    ramped = machine(*base, "disk.read_ahead=4m")
    seconds, counters, ph = phase(predict_point(point(), ramped))
    assert seconds == pytest.approx(0.080 + 0.005 + 0.001, rel=1e-6)
    assert counters["page_cache"]["waits_for_readers_in_step"] == 5
    assert "5 calls that read from the disk held until every reader had copied" in ph["explanation"]["text"]
    # two readers: one copy to wait for per call, the same five waits
    seconds, counters, _ = phase(predict_point(point(ranks=2), ramped))
    assert seconds == pytest.approx(0.086, rel=1e-6)
    # a longer file: beyond the ramp's 6 MiB the calls run ahead as before
    seconds, counters, _ = phase(predict_point(point(size=16 << 20), ramped))
    assert counters["page_cache"]["waits_for_readers_in_step"] == 5
    assert seconds == pytest.approx(0.160 + 0.005 + 0.001, rel=1e-6)
    # a token that acts (G=2 at 4 ranks) already makes the readers take turns
    _, counters, _ = phase(predict_point(point(group=2), ramped))
    assert "waits_for_readers_in_step" not in counters["page_cache"]
    # partitioned readers touch distinct bytes: nothing to wait for
    _, counters, _ = phase(predict_point(point("partitioned"), ramped))
    assert "waits_for_readers_in_step" not in counters["page_cache"]


def test_cores_bound_the_cached_copies():
    """With one core the 3 copies of each block (1 ms each) queue on it: the
    last block's end 3 ms after the disk's instead of 1."""
    base = ["host.page_cache=1g", "host.cached_read_rate=1000MB/s", "host.cached_read_overhead=0s"]
    one = phase(predict_point(point(), machine(*base, "host.cores=1")))
    many = phase(predict_point(point(), machine(*base, "host.cores=8")))
    assert one[0] == pytest.approx(0.083, rel=1e-6) and many[0] == pytest.approx(0.081, rel=1e-6)
    assert one[1]["utilisation"]["cpu"]["max"] == pytest.approx(0.024 / one[0], rel=1e-6)


def test_crowded_token_when_ranks_outnumber_cores():
    """Grouped (G=2) at 4 ranks, free calls: the phase is the token's
    hand-overs, 2 x 4 - 1 per group, at the crowded latency above 2 cores.
    (A read phase: a write phase's rings also hand the file's write lock
    on, test_crowded_rings_hand_the_write_lock_on.)"""
    base = [FREE_WRITE, FREE_READ, "network.token_latency=10us",
            "network.token_latency_crowded=50us"]
    p = point("partitioned", ("read",), group=2, size=16 << 20)  # 4 calls per rank
    roomy, _, _ = phase(predict_point(p, machine(*base, "host.cores=4")))
    crowded, _, _ = phase(predict_point(p, machine(*base, "host.cores=2")))
    none, _, _ = phase(predict_point(p, machine(*base)))
    hand_overs = 2 * 4 - 1
    assert roomy == pytest.approx(hand_overs * 10e-6, abs=1e-6)
    assert none == pytest.approx(roomy)
    assert crowded == pytest.approx(hand_overs * 50e-6, abs=1e-6)


def test_crowded_rings_hand_the_write_lock_on():
    """Grouped (G=2) at 4 ranks on 2 cores writing one file, free calls: the
    two rings write at the same moments, so the file's write lock changes
    ring at each of the 16 writes but the first, and each change costs the
    crowded hand-over on the disk: 15 x 50 us, above the rings' own 7 x 50
    us.  A file per rank has no shared lock, roomy cores no sleeping
    waiter, ranks without a token no ring, a read no write lock."""
    base = [FREE_WRITE, FREE_READ, "network.token_latency=10us",
            "network.token_latency_crowded=50us"]
    shared = point("partitioned", ("write",), group=2, size=16 << 20)  # 4 calls per rank
    seconds, counters, ph = phase(predict_point(shared, machine(*base, "host.cores=2")))
    assert counters["write_lock_handoffs"] == 15
    assert seconds == pytest.approx(15 * 50e-6, abs=1e-6)
    assert ph["explanation"]["bound"] == "disk"
    assert "write lock passed between the token rings 15 times" in ph["explanation"]["text"]
    assert "network.token_latency_crowded" in ph["explanation"]["text"]
    rings_alone = 7 * 50e-6
    per_rank = point("partitioned", ("write",), group=2, size=16 << 20, files="per-rank")
    for p, m in ((per_rank, machine(*base, "host.cores=2")), (shared, machine(*base, "host.cores=4"))):
        seconds, counters, _ = phase(predict_point(p, m))
        assert "write_lock_handoffs" not in counters
        assert seconds == pytest.approx(rings_alone if m["host.cores"] == 2 else 7 * 10e-6, abs=1e-6)
    # no groups, one ring (G=1: one writer at a time), a read: no hand-over
    for p in (point("partitioned", ("write",), size=16 << 20),
              point("partitioned", ("write",), group=1, size=16 << 20),
              point("partitioned", ("read",), group=2, size=16 << 20)):
        _, counters, _ = phase(predict_point(p, machine(*base, "host.cores=2")))
        assert "write_lock_handoffs" not in counters
    # a machine that does not count its cores (the shipped ones) never crowds
    _, counters, _ = phase(predict_point(shared, machine(*base)))
    assert "write_lock_handoffs" not in counters


def test_collective_call_cost_on_every_rank_and_core():
    """Every collective call costs each rank its overhead on a core; an
    independent call does not pay it."""
    base = [FREE_WRITE, FREE_READ, "client.collective_write_overhead=1ms",
            "client.collective_overhead=2ms"]
    coll = ["--collective", "--mpiio-impl", "romio"]
    p = point("partitioned", ("write", "read"), ranks=2, size=8 << 20, api="mpiio", options=coll)
    doc = predict_point(p, machine(*base, "host.cores=2"))
    assert phase(doc, 0)[0] == pytest.approx(4 * 1e-3, rel=1e-3)  # 4 calls per rank
    assert phase(doc, 1)[0] == pytest.approx(4 * 2e-3, rel=1e-3)
    # 4 ranks on 2 cores: the calls' costs queue two deep
    p4 = point("partitioned", ("write",), ranks=4, size=16 << 20, api="mpiio", options=coll)
    assert phase(predict_point(p4, machine(*base, "host.cores=2")))[0] == pytest.approx(8e-3, rel=1e-3)
    indep = point("partitioned", ("write",), ranks=2, size=8 << 20, api="mpiio",
                  options=["--mpiio-impl", "romio"])
    assert phase(predict_point(indep, machine(*base, "host.cores=2")))[0] < 1e-4


def test_aggregator_receives_other_ranks_data_as_messages():
    """One aggregator, 2 ranks, 4 calls each of 1 MiB: rank 1's calls each
    cross a message (1 ms at 1000 MiB/s + 0.1 ms) held on the aggregator;
    rank 0's, its own, do not."""
    base = [FREE_WRITE, FREE_READ, "agent.message_rate=1000MB/s",
            "agent.message_overhead=0.1ms"]
    coll = ["--collective", "--mpiio-impl", "romio"]
    p = point("partitioned", ("write",), ranks=2, size=8 << 20, api="mpiio", options=coll,
              aggregators=1)
    seconds, counters, _ = phase(predict_point(p, machine(*base)))
    assert counters["agents"] == 1
    assert seconds == pytest.approx(4 * 1.1e-3, rel=1e-3)
    two = point("partitioned", ("write",), ranks=2, size=8 << 20, api="mpiio", options=coll,
                aggregators=2)
    assert phase(predict_point(two, machine(*base)))[0] < 1e-4  # each rank its own aggregator


@pytest.mark.parametrize("sets,phrase", [
    (["host.cores=two"], "host.cores = 'two' is not a valid count"),
    (["host.cores=-1"], "is not a valid count"),
    (["host.page_cache=1g", "host.cached_read_rate=0"], "host.cached_read_rate must be more than 0"),
    (["host.cached_read_rate=fast"], "is not a valid rate"),
    (["agent.message_overhead=1us"], "agent.message_overhead needs agent.message_rate"),
    (["client.collective_overhead=5"], "is not a valid time"),
    (["network.token_latency_crowded=1MB"], "is not a valid time"),
])
def test_bad_host_values_are_refused(sets, phrase):
    assert phrase in refused_line(*sets)


def test_two_phase_file_domains_and_buffers():
    """ROMIO's file domains over the whole access list: 4 ranks, a 32 MiB
    partitioned file; one aggregator works through it in two 16 MiB
    buffers, two aggregators one each; every byte is some rank's."""
    from pario.model.two_phase import plan
    from pario.model.workload import rank_offsets

    MB = 1 << 20
    offsets = [rank_offsets("partitioned", 32 * MB, 256 << 10, 4, m) for m in range(4)]
    one = plan(offsets, 256 << 10, 1, 16 * MB)
    assert [(b["start"], b["extent"], b["data"]) for b in one[0]] == [(0, 16 * MB, 16 * MB),
                                                                      (16 * MB, 16 * MB, 16 * MB)]
    assert one[0][0]["from"] == {0: 8 * MB, 1: 8 * MB} and one[0][1]["from"] == {2: 8 * MB, 3: 8 * MB}
    two = plan(offsets, 256 << 10, 2, 16 * MB)
    assert [[(b["start"], b["extent"]) for b in bufs] for bufs in two] == [[(0, 16 * MB)], [(16 * MB, 16 * MB)]]
    # interleaved: every buffer holds every rank's blocks
    inter = [rank_offsets("interleaved", 32 * MB, 256 << 10, 4, m) for m in range(4)]
    assert plan(inter, 256 << 10, 1, 16 * MB)[0][0]["from"] == {r: 4 * MB for r in range(4)}
    # a file with holes: each rank's first block only
    holed = plan([[0], [4 * MB]], MB, 1, 16 * MB)
    assert holed == [[{"start": 0, "extent": 5 * MB, "data": 2 * MB, "from": {0: MB, 1: MB}}]]


def test_two_phase_aggregators_move_the_file():
    """4 ranks, 32 MiB partitioned, one aggregator (rank 0), 16 MiB buffers:
    per buffer the aggregator copies 16 MiB (1000 MiB/s: 16 ms), receives
    each other rank's 8 MiB there as a message (500 MiB/s: 16 ms; rank 1 in
    the first buffer, ranks 2 and 3 in the second) and writes 16 MiB to a
    100 MiB/s disk (160 ms); a read runs the other way.  Without a
    collective buffer the same point goes through the per-call agents."""
    base = ["agent.copy_rate=1000MB/s", "agent.message_rate=500MB/s", "agent.cb_buffer=16MB",
            "host.page_cache=1g", "host.cached_read_rate=1000MB/s", "host.cores=2"]
    coll = ["--collective", "--mpiio-impl", "romio"]
    p = point("partitioned", ("write", "read"), ranks=4, size=32 << 20, block=256 << 10, api="mpiio",
              options=coll, aggregators=1)
    doc = predict_point(p, machine(*base))
    buffers = (0.016 + 0.016 + 0.16) + (0.016 + 2 * 0.016 + 0.16)
    assert phase(doc, 0)[0] == pytest.approx(buffers, rel=1e-6)
    assert phase(doc, 1)[0] == pytest.approx(buffers, rel=1e-6)
    assert phase(doc, 0)[1]["disk_transfers"] == 2
    per_call = predict_point(p, machine(*base[:2], *base[3:]))  # agent.cb_buffer 0
    assert phase(per_call, 0)[1]["disk_transfers"] == 128


def test_several_readers_take_the_shared_rate():
    """Two ranks reading (writing) different bytes at once read at
    disk.shared_read_rate (write at disk.shared_write_rate); one rank and a
    broadcast keep the one stream's rates, and so do one group's writers,
    one at a time; one group's readers are two streams (each rank's
    read-ahead in flight between its turns)."""
    m = machine("disk.shared_read_rate=50MB/s")
    part = point("partitioned", ranks=2)
    assert phase(predict_point(part, m))[0] == pytest.approx(8 / 50)
    assert phase(predict_point(point("partitioned", ranks=1), m))[0] == pytest.approx(8 / 100)
    assert phase(predict_point(point(ranks=2), m))[0] == pytest.approx(16 / 100)  # broadcast
    writes = machine("disk.shared_write_rate=50MB/s")
    assert phase(predict_point(point("partitioned", ("write",), ranks=2), writes))[0] == pytest.approx(8 / 50)
    assert phase(predict_point(point("partitioned", ("write",), ranks=1), writes))[0] == pytest.approx(8 / 100)
    grouped = point("partitioned", ranks=2, group=1)
    assert phase(predict_point(grouped, machine("disk.shared_read_rate=50MB/s",
                                                "network.token_latency=0s")))[0] == pytest.approx(8 / 50)
    grouped_writes = point("partitioned", ("write",), ranks=2, group=1)
    assert phase(predict_point(grouped_writes, machine("disk.shared_write_rate=50MB/s",
                                                       "network.token_latency=0s")))[0] == pytest.approx(8 / 100)


def test_writers_of_a_file_each_take_the_files_rate():
    """Two or four ranks writing a file each (--files per-rank) write at
    disk.files_write_rate with its per-call cost, side by side; writers of
    one file keep disk.shared_write_rate, one rank disk.write_rate, and a
    machine without the files rate (an older probe's) gives writers of
    their own files the shared rate.  The explanation names the rate."""
    m = machine("disk.shared_write_rate=50MB/s", "disk.files_write_rate=200MB/s",
                "disk.files_write_overhead=1ms")
    for ranks in (2, 4):
        own = point("interleaved", ("write",), ranks=ranks, files="per-rank")
        seconds, counters, ph = phase(predict_point(own, m))
        assert seconds == pytest.approx(8 / 200 + 8 * 0.001)  # 8 calls of 1 MiB in all
        assert counters["disk_write_rate"] == "disk.files_write_rate"
        assert "two writers of a file each (disk.files_write_rate)" in ph["explanation"]["text"]
    one_file = point("interleaved", ("write",), ranks=2)
    seconds, counters, ph = phase(predict_point(one_file, m))
    assert seconds == pytest.approx(8 / 50)
    assert "two writers of one file (disk.shared_write_rate)" in ph["explanation"]["text"]
    alone = point("interleaved", ("write",), ranks=1, files="per-rank")
    assert phase(predict_point(alone, m))[0] == pytest.approx(8 / 100)
    older = machine("disk.shared_write_rate=50MB/s")
    assert phase(predict_point(point("interleaved", ("write",), ranks=2, files="per-rank"), older))[0] \
        == pytest.approx(8 / 50)
    assert refused_line("disk.files_write_rate=-1MB/s") == \
        "disk.files_write_rate = '-1MB/s' is not a valid rate (no rate is negative): use 2.8MB/s"
