"""The short shares' race (docs/model.md, "Four readers of short shares"):
four or more ranks reading one file in contiguous shares shorter than a
reader's read-ahead ramp reaches lose disk.share_race_restarts read starts
once per read phase, from calls of disk.share_race_from on; and how
model/probed.py reads the two from the probe's four readers of short shares
against its four readers of quarters.  Pure simulation and hand-made probe
components: no engine, well under a second."""

import pytest

from pario.model import predict_point
from pario.model.probed import share_race
from pario.model.read_start import ramp_reach
from test_model_host import machine, phase, point, refused_line

# one read start of 2 ms whatever the call (no growth), an 8 MiB window
RACE = ["disk.read_latency=2ms", "disk.read_start_rate=0", "disk.read_ahead=8m",
        "disk.share_race_restarts=2", "disk.share_race_from=64k"]


def test_the_ramp_reaches_past_a_window():
    """Linux's windows for 64 KiB calls with an 8 MiB largest: 256 KiB, then
    x4 to 1 MiB, x2 to 2 and 4 MiB, then 8 MiB: 15.25 MiB from the first
    call; a call that opens the largest window at once reaches that window."""
    assert ramp_reach(64 << 10, 8 << 20) == (256 << 10) + (1 << 20) + (2 << 20) + (4 << 20) + (8 << 20)
    assert ramp_reach(1 << 20, 8 << 20) == 14 << 20  # 2, 4, 8 MiB
    assert ramp_reach(4 << 20, 8 << 20) == 8 << 20
    assert ramp_reach(64 << 10, 0) == 0  # no window, no ramp


def test_short_shares_lose_restarts_once_per_phase():
    """32 MiB read by 4 ranks at 100 MiB/s is 320 ms plus each rank's 2 ms
    start side by side; 8 MiB shares are shorter than the 15.25 MiB ramp,
    so the phase also pays 2 restarts of 2 ms once, on the disk, and the
    bound names the race."""
    m = machine(*RACE)
    seconds, counters, ph = phase(predict_point(point("partitioned", ranks=4, block=64 << 10,
                                                      size=32 << 20), m))
    assert seconds == pytest.approx(0.002 + 32 / 100 + 2 * 0.002)
    assert counters["read_race_seconds"] == pytest.approx(0.004)
    assert counters["read_race_key"] == "disk.share_race_restarts"
    assert "short shares' read-ahead race (8 MiB a rank" in ph["explanation"]["text"]
    # a grouped run: each rank's neighbour is in another group, the same race
    grouped = phase(predict_point(point("partitioned", ranks=4, group=2, block=64 << 10,
                                        size=32 << 20), m))[1]
    assert grouped["read_race_seconds"] == pytest.approx(0.004)


def test_no_race_where_shares_are_long_separate_or_few():
    m = machine(*RACE)

    def race(**kw):
        kw.setdefault("block", 64 << 10)
        kw.setdefault("size", 32 << 20)
        return phase(predict_point(point(kw.pop("layout", "partitioned"), **kw), m))[1].get(
            "read_race_seconds", 0)

    assert race(ranks=4, size=64 << 20) == 0  # 16 MiB shares: past the 15.25 MiB ramp
    assert race(ranks=4, files="per-rank") == 0  # a file's end stops the read-ahead
    assert race(ranks=2, size=8 << 20) == 0  # fewer than the probe's four readers
    assert race(ranks=4, block=4 << 10) == 0  # below disk.share_race_from
    assert race(ranks=4, block=4 << 20) == 0  # the largest window at once: no ramp
    assert race(ranks=4, layout="interleaved") == 0  # the interleaved readers' own race
    writes = point("partitioned", ("write",), ranks=4, block=64 << 10, size=32 << 20, extra=["--prealloc"])
    assert "read_race_seconds" not in phase(predict_point(writes, m))[1]
    # no restarts measured, or no window known: nothing charged
    assert phase(predict_point(point("partitioned", ranks=4, block=64 << 10, size=32 << 20),
                               machine(*RACE[:3])))[1].get("read_race_seconds", 0) == 0
    no_window = machine(*[s for s in RACE if not s.startswith("disk.read_ahead")])
    assert phase(predict_point(point("partitioned", ranks=4, block=64 << 10, size=32 << 20),
                               no_window))[1].get("read_race_seconds", 0) == 0


@pytest.mark.parametrize("sets,phrase", [
    (["disk.share_race_restarts=-1"], "disk.share_race_restarts = '-1' is not a valid count"),
    (["disk.share_race_restarts=two"], "is not a valid count"),
    (["disk.share_race_from=1ms"], "disk.share_race_from = '1ms' is not a valid size"),
])
def test_bad_values_are_refused(sets, phrase):
    assert phrase in refused_line(*sets)


def _row(block, seconds, size):
    return {"block_bytes": block, "bytes": size, "seconds": {"best": min(seconds), "values": list(seconds)}}


def _doc(block, short_s, long_s=0.040):
    """The probe at one call size: four readers of quarters of 64 MiB in
    long_s, four of 8 MiB shares (32 MiB) in short_s."""
    return {"params": {"block_bytes": block},
            "components": {"four_streams": _row(block, [long_s], 64 << 20),
                           "four_short_streams": _row(block, [short_s], 32 << 20)}}


def test_the_probe_gives_the_restarts_from_its_short_shares():
    """Each reader's start 2 ms (no open/close): four readers whose windows
    hold take 2 + (40 - 2) / 2 = 21 ms for the short pass's 32 MiB.  4 KiB
    calls took 21.5 ms (a quarter of a restart: noise, not lost); 64 KiB
    25.4 ms and 1 MiB 28.6 ms, 2.2 and 3.8 restarts: their median, 3
    restarts per phase, from 64 KiB on."""
    docs = [_doc(4 << 10, 0.0215), _doc(64 << 10, 0.0254), _doc(1 << 20, 0.0286)]
    restarts, race_from, text = share_race(docs, lambda b: 0.002, lambda b: 0.002)
    assert (restarts, race_from) == (3, 64 << 10)
    assert "2.2 restarts" in text and "3 restart(s) per phase" in text
    # a restart's cost grows with the call's first window: against a 5 ms
    # start at 1 MiB its 7.6 ms are 1.5 restarts, and the median of 2.2
    # and 1.5 rounds to 2
    restarts, _, _ = share_race(docs, lambda b: 0.002, lambda b: 0.005 if b >= 1 << 20 else 0.002)
    assert restarts == 2


def test_no_race_without_the_row_or_without_a_whole_restart():
    assert share_race([{"params": {"block_bytes": 4096}, "components": {}}],
                      lambda b: 0.0, lambda b: 0.002)[:2] == (0, 0)
    kept = [_doc(64 << 10, 0.0225), _doc(1 << 20, 0.020)]  # 0.75 and -0.5 restarts
    restarts, race_from, text = share_race(kept, lambda b: 0.002, lambda b: 0.002)
    assert (restarts, race_from) == (0, 0) and "no race" in text
