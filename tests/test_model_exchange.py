"""model/exchange.py: what a two-phase aggregator spends on a collective
buffer.  A buffer's one call to storage goes at the machine's rate for
buffer-sized calls (the probe's streams in 16 MiB calls) where it has one,
the shared rate with several aggregators at once (for writes, measured in
a collective's order; without it the one writer's), else at the disk's
rates (no engine: the model alone)."""

import pytest

from pario.model import load_machine, predict_point
from pario.studies.io import IoPoint

MIB = 1 << 20
# one disk, no network, no fixed costs: only the buffers' transfers take time
BASE = ["network.link_rate=0", "network.latency=0s", "io_node.cache=0", "stripe.unit=1g",
        "stripe.count=1", "io_node.count=1", "io_node.memory_rate=0", "io_node.request_overhead=0s",
        "file.open_close_write=0s", "file.open_close_read=0s", "disk.write_overhead=0s",
        "disk.overhead=0s", "disk.write_rate=1000MB/s", "disk.rate=1000MB/s", "agent.cb_buffer=16m",
        "host.cached_read_rate=5000MB/s", "disk.read_latency=0s",
        "host.cores=0"]


def _phase(ranks, aggregators, sets, op="write", size=32 * MIB):
    point = IoPoint("t", "t", "partitioned", [op] if op == "write" else ["write", op], ranks, MIB,
                    size, api="mpiio", iterations=1,
                    options=["--collective", "--mpiio-impl", "romio"], aggregators=aggregators)
    doc = predict_point(point, load_machine("ipsc860", BASE + sets))
    return next(p for p in doc["phases"] if p["name"] == op)


def test_buffer_transfers_go_at_the_buffer_rates():
    rates = ["disk.buffer_write_rate=200MB/s", "disk.shared_buffer_write_rate=100MB/s",
             "disk.buffer_read_rate=400MB/s", "disk.shared_buffer_read_rate=300MB/s"]
    # four aggregators at once: 32 MiB at the shared rate on the one disk
    four = _phase(4, 4, rates)
    assert four["summary"]["best_mib_per_s"] == pytest.approx(100, rel=0.01)
    why = four["explanation"]
    assert why["bound"] == "disk"
    assert "4 collective aggregator(s), 4 buffer transfer(s) of up to 8 MiB at the probe's 100 MiB/s" \
        in why["text"]
    # one aggregator: its two 16 MiB buffers at the one writer's rate
    one = _phase(4, 1, rates)
    assert one["summary"]["best_mib_per_s"] == pytest.approx(200, rel=0.01)
    assert "2 buffer transfer(s) of up to 16 MiB" in one["explanation"]["text"]
    assert _phase(4, 4, rates, "read")["summary"]["best_mib_per_s"] == pytest.approx(300, rel=0.01)
    assert _phase(4, 1, rates, "read")["summary"]["best_mib_per_s"] == pytest.approx(400, rel=0.01)


def test_several_writers_without_a_shared_rate_go_at_the_one_writers():
    """No shared write rate (a probe whose two writers each fsynced on their
    own gives none): one file's writes pass one at a time and its sync waits
    for the last, so four aggregators' 32 MiB go at the one writer's rate,
    and the bound says why; reads keep their shared rate."""
    rates = ["disk.buffer_write_rate=200MB/s", "disk.shared_buffer_write_rate=0",
             "disk.buffer_read_rate=400MB/s", "disk.shared_buffer_read_rate=300MB/s"]
    four = _phase(4, 4, rates)
    assert four["summary"]["best_mib_per_s"] == pytest.approx(200, rel=0.01)
    assert ("4 buffer transfer(s) of up to 8 MiB at the probe's 200 MiB/s for calls that size, one "
            "writer's rate: one file's writes pass one at a time and its sync waits for the last "
            "of them") in four["explanation"]["text"]
    two = _phase(4, 2, rates)
    assert two["summary"]["best_mib_per_s"] == pytest.approx(200, rel=0.01)
    # one aggregator is one writer anyway; a read is no write
    assert "one writer's rate" not in _phase(4, 1, rates)["explanation"]["text"]
    read = _phase(4, 4, rates, "read")
    assert read["summary"]["best_mib_per_s"] == pytest.approx(300, rel=0.01)
    assert "one writer's rate" not in read["explanation"]["text"]
    # with the shared rate the text does not say so
    shared = _phase(4, 4, rates[:1] + ["disk.shared_buffer_write_rate=100MB/s"] + rates[2:])
    assert "one writer's rate" not in shared["explanation"]["text"]


def test_four_aggregators_read_at_the_four_buffer_readers_rate():
    """disk.four_buffer_read_rate (the probe's four buffer readers at once):
    four aggregators reading take it, two take the two readers' rate, one
    the one reader's; without it four take the two readers' rate."""
    rates = ["disk.buffer_read_rate=400MB/s", "disk.shared_buffer_read_rate=300MB/s"]
    four = rates + ["disk.four_buffer_read_rate=150MB/s"]
    assert _phase(4, 4, four, "read")["summary"]["best_mib_per_s"] == pytest.approx(150, rel=0.01)
    assert _phase(4, 2, four, "read")["summary"]["best_mib_per_s"] == pytest.approx(300, rel=0.01)
    assert _phase(4, 1, four, "read")["summary"]["best_mib_per_s"] == pytest.approx(400, rel=0.01)
    assert _phase(4, 4, rates, "read")["summary"]["best_mib_per_s"] == pytest.approx(300, rel=0.01)
    # a write never takes a read rate
    write = ["disk.buffer_write_rate=200MB/s", "disk.shared_buffer_write_rate=200MB/s"]
    assert _phase(4, 4, write + four)["summary"]["best_mib_per_s"] == pytest.approx(200, rel=0.01)


def test_one_rank_is_two_phase_as_romio_does_it():
    """ROMIO's one aggregator works through a one-rank file a buffer at a
    time too (the engine counts two 16 MiB writes for 32 MiB)."""
    one = _phase(1, 1, ["disk.buffer_write_rate=200MB/s"])
    assert one["summary"]["best_mib_per_s"] == pytest.approx(200, rel=0.01)
    assert "2 buffer transfer(s) of up to 16 MiB" in one["explanation"]["text"]


def test_without_buffer_rates_the_disk_rates_hold():
    plain = _phase(4, 4, [])
    assert plain["summary"]["best_mib_per_s"] == pytest.approx(1000, rel=0.01)
    assert "at the disk's rates" in plain["explanation"]["text"]
    # the shared rate falls back to the one writer's when the machine has none
    assert _phase(4, 2, ["disk.buffer_write_rate=250MB/s"])["summary"]["best_mib_per_s"] == \
        pytest.approx(250, rel=0.01)


def _seconds(phase):
    return phase["iterations"][0]["seconds"]


def test_ranks_above_the_cores_wait_after_each_round_beside_busy_ones():
    """host.busy_handover: with more ranks than cores each buffer round of
    the aggregators' writes ends in a wait for ranks that yielded beside
    busy ones; with no more ranks than cores (or no shared cores) there is
    none, nor after a buffer read (measured: one aggregator's reads at 4
    ranks on 2 cores as quick as at 2)."""
    rates = ["disk.buffer_write_rate=200MB/s", "disk.shared_buffer_write_rate=200MB/s",
             "disk.buffer_read_rate=400MB/s", "disk.shared_buffer_read_rate=400MB/s"]
    crowded = ["host.cores=2", "host.busy_handover=5ms"]
    for op, waits in (("read", 0), ("write", 1)):
        # one aggregator of 4 ranks on 2 cores: two 16 MiB rounds, two waits
        plain = _seconds(_phase(4, 1, rates + ["host.cores=2"], op))
        waited = _phase(4, 1, rates + crowded, op)
        assert _seconds(waited) == pytest.approx(plain + waits * 2 * 0.005, rel=1e-6)
        # four aggregators: one 8 MiB round each, side by side: one wait
        assert _seconds(_phase(4, 4, rates + crowded, op)) == \
            pytest.approx(_seconds(_phase(4, 4, rates + ["host.cores=2"], op)) + waits * 0.005, rel=1e-6)
        # two ranks on two cores are not crowded: Open MPI does not yield there
        assert _seconds(_phase(2, 2, rates + crowded, op)) == \
            pytest.approx(_seconds(_phase(2, 2, rates + ["host.cores=2"], op)), rel=1e-6)
        if not waits:
            assert "yielding beside busy ones" not in waited["explanation"]["text"]
    text = waited["explanation"]["text"]
    assert "4 ranks on 2 cores: after each of 2 round(s) of the aggregators' work the next step " \
        "waited 5 ms for ranks yielding beside busy ones" in text
    # the waits dominate when the buffers are quick: the bound says so
    fast = _phase(4, 1, ["disk.buffer_write_rate=100000MB/s", "host.cores=2",
                         "host.busy_handover=50ms"])
    assert fast["explanation"]["bound"] == "crowded"
    assert fast["explanation"]["text"].startswith("crowded cores: 4 ranks on 2 cores")
