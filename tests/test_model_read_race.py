"""The read-ahead race of ranks reading one file in interleaved calls
(docs/model.md, "The read-ahead race, modelled"): a number of extra device
requests per read phase (disk.interleaved_race_requests), each costing
disk.interleaved_request_overhead, from calls of disk.interleaved_race_from
on; and how model/probed.py reads the three from the probe's two
interleaved readers and their device requests.  Pure simulation and
hand-made probe components: no engine, well under a second."""

import pytest

from pario.model import predict_point
from pario.model.probed import _race_the_row_pays, _row_requests, _row_seconds, read_race
from test_model_host import machine, phase, point, refused_line

RACE = ["disk.interleaved_read_rate=50MB/s", "disk.interleaved_read_overhead=0s",
        "disk.shared_read_rate=80MB/s", "disk.interleaved_race_requests=20",
        "disk.interleaved_request_overhead=1ms", "disk.interleaved_race_from=64k"]


def test_the_race_is_a_cost_per_phase_not_per_byte():
    """8 MiB at 50 MiB/s is 160 ms; the race adds 20 x 1 ms once per read
    phase, so twice the file adds the same 20 ms, not twice it; and the
    bound says so."""
    m = machine(*RACE)
    seconds, counters, ph = phase(predict_point(point("interleaved", ranks=2), m))
    assert seconds == pytest.approx(8 / 50 + 0.020)
    big = phase(predict_point(point("interleaved", ranks=2, size=16 << 20), m))[0]
    assert big == pytest.approx(16 / 50 + 0.020)
    assert counters["read_race_seconds"] == pytest.approx(0.020)
    assert "read-ahead race" in ph["explanation"]["text"]
    # four ranks reading one file interleaved: the same race, once
    assert phase(predict_point(point("interleaved", ranks=4), m))[0] == pytest.approx(8 / 50 + 0.020)


def test_no_race_where_the_probe_saw_none_or_nothing_interleaves():
    m = machine(*RACE)
    # calls below disk.interleaved_race_from keep their windows
    small = point("interleaved", ranks=2, block=4 << 10)
    assert phase(predict_point(small, m))[0] == pytest.approx(8 / 50)
    # one rank, a partitioned file, files of their own, writes: no race
    assert phase(predict_point(point("interleaved", ranks=1), m))[0] == pytest.approx(8 / 100)
    assert phase(predict_point(point("partitioned", ranks=2), m))[0] == pytest.approx(8 / 80)
    assert phase(predict_point(point("interleaved", ranks=2, files="per-rank"), m))[0] == pytest.approx(8 / 80)
    writes = point("interleaved", ("write",), ranks=2, extra=["--prealloc"])
    assert phase(predict_point(writes, m))[0] == pytest.approx(8 / 100)
    # a token ring that acts paces the ranks in turn: no race (G=2 at 4
    # ranks), where a group at the rank count cannot act and races
    paced = point("interleaved", ranks=4, group=2)
    assert "read_race_seconds" not in phase(predict_point(paced, m))[1]
    assert phase(predict_point(point("interleaved", ranks=2, group=2), m))[1]["read_race_seconds"] \
        == pytest.approx(0.020)
    # no race requests: nothing charged
    none = machine(*RACE[:-3])
    assert phase(predict_point(point("interleaved", ranks=2), none))[0] == pytest.approx(8 / 50)


TYPICAL = ["disk.interleaved_typical_read_rate=25MB/s", "disk.interleaved_typical_read_overhead=0s",
           "disk.interleaved_typical_race_requests=40", "disk.interleaved_typical_race_from=4k"]


def test_readers_on_cores_of_their_own_take_the_typical_trial():
    """Two readers on a host of two cores run in step and take the row's
    typical trial: 8 MiB at 25 MiB/s and 40 requests of 1 ms, from 4 KiB
    calls on; four ranks on those two cores take turns and keep the best
    trial's rate and race (8 / 50 + 20 ms, none below 64 KiB); a host
    whose cores are not counted (host.cores 0: a core for every rank) takes
    the typical trial at any rank count, and a machine without the typical
    trial's rate keeps the best trial's for every reader."""
    m = machine(*RACE, *TYPICAL, "host.cores=2")
    seconds, counters, ph = phase(predict_point(point("interleaved", ranks=2), m))
    assert seconds == pytest.approx(8 / 25 + 0.040)
    assert counters["disk_read_rate"] == "disk.interleaved_typical_read_rate"
    assert counters["read_race_key"] == "disk.interleaved_typical_race_requests"
    assert "typical trial" in ph["explanation"]["text"]
    assert "disk.interleaved_typical_race_requests" in ph["explanation"]["text"]
    small = point("interleaved", ranks=2, block=4 << 10)
    assert phase(predict_point(small, m))[0] == pytest.approx(8 / 25 + 0.040)
    crowded, counters, _ = phase(predict_point(point("interleaved", ranks=4), m))
    assert crowded == pytest.approx(8 / 50 + 0.020)
    assert counters["disk_read_rate"] == "disk.interleaved_read_rate"
    assert phase(predict_point(point("interleaved", ranks=4, block=4 << 10), m))[0] == pytest.approx(8 / 50)
    uncounted = machine(*RACE, *TYPICAL)
    assert phase(predict_point(point("interleaved", ranks=4), uncounted))[0] == pytest.approx(8 / 25 + 0.040)
    without = machine(*RACE, "host.cores=2")
    assert phase(predict_point(point("interleaved", ranks=2), without))[0] == pytest.approx(8 / 50 + 0.020)


@pytest.mark.parametrize("sets,phrase", [
    (["disk.interleaved_typical_read_rate=fast"], "disk.interleaved_typical_read_rate = 'fast' is not a valid rate"),
    (["disk.interleaved_typical_race_requests=-3"], "is not a valid count"),
    (["disk.interleaved_typical_race_from=2s"], "is not a valid size"),
    (["disk.interleaved_typical_read_overhead=1MB"], "is not a valid time"),
    (["disk.interleaved_race_requests=-1"], "disk.interleaved_race_requests = '-1' is not a valid count"),
    (["disk.interleaved_race_requests=many"], "is not a valid count"),
    (["disk.interleaved_race_from=1ms"], "disk.interleaved_race_from = '1ms' is not a valid size"),
    (["disk.interleaved_request_overhead=5MB"], "is not a valid time"),
    (["disk.interleaved_request_overhead=-1ms"], "is not a valid time"),
])
def test_bad_values_are_refused(sets, phrase):
    assert phrase in refused_line(*sets)


def _row(block, seconds, requests, size=64 << 20):
    """A probe read pass at one call size: its trials' times and device
    requests (every trial the pass's own)."""
    return {"block_bytes": block, "bytes": size,
            "seconds": {"best": min(seconds), "values": list(seconds)},
            "device_reads": {"requests": list(requests), "bytes": [size] * len(requests),
                             "own": [True] * len(requests), "file_bytes": size}}


def _doc(block, inter_s, inter_n, one=20, halves=24, halves_s=0.04):
    return {"params": {"block_bytes": block},
            "components": {"two_interleaved": _row(block, inter_s, inter_n),
                           "stream_read": _row(block, [0.04] * 3, [one] * 3),
                           "two_streams": _row(block, [halves_s] * 3, [halves] * 3)}}


def test_the_probe_gives_the_race_from_its_interleaved_trials():
    """Within each call size the trials' time grows 1 ms per request
    (0.040 s + n x 1 ms); 4 KiB calls kept their windows (the best trial
    made 21 requests, no more than two halves' 24); 64 KiB and 1 MiB lost
    it: their best trials made 30 and 50 requests, 10 and 30 more than the
    one stream's 20, so the race is their median, 20 requests per phase,
    from 64 KiB on."""
    docs = [_doc(4 << 10, [0.061, 0.070, 0.075], [21, 30, 35]),
            _doc(64 << 10, [0.070, 0.090, 0.100], [30, 50, 60]),
            _doc(1 << 20, [0.090, 0.100, 0.140], [50, 60, 100])]
    requests, race_from, per_request, text = read_race(docs)
    assert (requests, race_from) == (20, 64 << 10)
    assert per_request == pytest.approx(0.001)
    assert "lost (more requests than two halves) at 64 KiB, 1 MiB" in text
    # the requests are those of the trial the row's time is (its best), not
    # the most or the median
    assert "64 KiB calls 30 (one stream 20, two halves 24)" in text


def test_the_typical_trial_lies_halfway_to_the_median_one():
    """The typical statistic is halfway from each call size's best trial to
    its median one, in time and in the race's requests: 4 KiB calls' best
    trial (61 ms) made 21 requests and its median (70 ms) 31, so the
    typical trial made 26, more than two halves' 24: every call size lost
    it; the extra over the one stream 6, 20 and 35, the median 20, from 4
    KiB on.  Of an even number of trials the median is the faster of the
    middle two, an actual trial."""
    docs = [_doc(4 << 10, [0.061, 0.070, 0.075], [21, 31, 35]),
            _doc(64 << 10, [0.070, 0.090, 0.100], [30, 50, 60]),
            _doc(1 << 20, [0.090, 0.100, 0.140], [50, 60, 100])]
    requests, race_from, per_request, text = read_race(docs, "typical")
    assert (requests, race_from) == (20, 4 << 10)
    assert "typical trial" in text and "64 KiB calls 40 (one stream 20, two halves 24)" in text
    assert read_race(docs)[:2] == (20, 64 << 10)  # the best trial: 4 KiB kept its windows
    row = _row(4 << 10, [0.09, 0.07, 0.08, 0.06], [1] * 4)
    assert _row_seconds(row, "typical") == pytest.approx(0.065)
    assert _row_seconds(row) == 0.06
    # a median trial the device served others in: no requests to count
    row = _row(4 << 10, [0.09, 0.07, 0.06], [5, 6, 7])
    row["device_reads"]["own"] = [True, False, True]
    assert _row_requests(row) == 7 and _row_requests(row, "typical") is None


def test_no_race_without_requests_or_without_a_loss():
    kept = [_doc(b, [0.061, 0.062, 0.064], [21, 22, 24]) for b in (4 << 10, 1 << 20)]
    requests, race_from, per_request, text = read_race(kept)
    assert requests == 0 and "no race" in text
    # time that does not grow with the requests: noise, no cost, no race
    flat = [_doc(1 << 20, [0.09, 0.08, 0.07], [50, 60, 70])]
    assert read_race(flat)[:3] == (0, 0, 0.0)
    # a probe that counted no device requests (tmpfs, older probes)
    for d in flat:
        for row in d["components"].values():
            row["device_reads"] = None
    assert read_race(flat)[:3] == (0, 0, 0.0)


def _fit_charging(base_ns, per_request_ns):
    """A read fit whose seconds per byte fall by per_request_ns for each
    race request charged apart (as charging more always does)."""
    return lambda k: (0.0, (base_ns - k * per_request_ns) * 1e-9, "rows", 64 << 20, "")


def test_the_race_leaves_interleaved_readers_no_faster_than_two_halves():
    """Readers whose windows hold read the file's bytes no faster than two
    readers of its contiguous halves: a race that would leave a faster rate
    is cut to the most requests that do not, and the text says so."""
    # 0.40 ns per byte uncharged, 0.01 less per request; halves at 0.30:
    # 10 requests leave exactly the halves' rate, 11 would be faster
    requests, text, fit = _race_the_row_pays(20, "counted", _fit_charging(0.40, 0.01), 0.30e-9)
    assert requests == 10 and fit[1] == pytest.approx(0.30e-9)
    assert text.startswith("counted; cut to 10: more would leave interleaved readers whose windows hold "
                           "faster than two readers of contiguous halves (0.3 ns per byte)")
    # a race the row pays for is kept as counted
    assert _race_the_row_pays(5, "counted", _fit_charging(0.40, 0.01), 0.30e-9)[:2] == (5, "counted")
    # a short probe's race that leaves no time per byte at all: none kept
    # when even the uncharged row reads faster than the halves
    requests, text, fit = _race_the_row_pays(16, "counted", _fit_charging(0.25, 0.05), 0.30e-9)
    assert requests == 0 and fit[1] == pytest.approx(0.25e-9) and "cut to 0" in text
    # no halves measured (one rank): nothing to hold it to
    assert _race_the_row_pays(20, "counted", _fit_charging(0.40, 0.01), None)[0] == 20


FOUR = ["disk.four_interleaved_read_rate=40MB/s", "disk.four_interleaved_read_overhead=1ms"]


def test_four_interleaved_readers_take_their_own_row_and_no_race():
    """Four or more ranks reading one file in interleaved calls read at the
    probe's four interleaved readers' rate and per-call cost, whose fit has
    their race in it: 8 MiB at 40 MiB/s and 8 calls of 1 ms, nothing
    charged apart; a token ring that acts runs no race and keeps the two
    interleaved readers' best trial; two readers keep that rate and race,
    files of their own the four readers' rate, and a machine without the
    row (0) the two interleaved readers' for all."""
    m = machine(*RACE, *FOUR, "host.cores=2")
    seconds, counters, ph = phase(predict_point(point("interleaved", ranks=4), m))
    assert seconds == pytest.approx(8 / 40 + 8 * 0.001)
    assert counters["disk_read_rate"] == "disk.four_interleaved_read_rate"
    assert "read_race_seconds" not in counters
    assert "four interleaved readers" in ph["explanation"]["text"]
    assert phase(predict_point(point("interleaved", ranks=8, size=16 << 20), m))[0] == \
        pytest.approx(16 / 40 + 16 * 0.001)
    grouped, counters, _ = phase(predict_point(point("interleaved", ranks=4, group=2), m))
    assert counters["disk_read_rate"] == "disk.interleaved_read_rate"
    assert "read_race_seconds" not in counters and grouped >= 8 / 50
    assert phase(predict_point(point("interleaved", ranks=2), m))[0] == pytest.approx(8 / 50 + 0.020)
    own = point("interleaved", ranks=4, files="per-rank")
    assert phase(predict_point(own, machine(*RACE, *FOUR, "disk.four_read_rate=60MB/s")))[0] == \
        pytest.approx(8 / 60)
    assert phase(predict_point(point("interleaved", ranks=4), machine(*RACE)))[0] == \
        pytest.approx(8 / 50 + 0.020)
    # tester 10, item 1: the row acts on its own, without the two readers' rate
    alone, counters, _ = phase(predict_point(point("interleaved", ranks=4), machine(*FOUR)))
    assert alone == pytest.approx(8 / 40 + 8 * 0.001)
    assert counters["disk_read_rate"] == "disk.four_interleaved_read_rate"


@pytest.mark.parametrize("setting,phrase", [
    ("disk.four_interleaved_read_rate=1ms", "is not a valid rate"),
    ("disk.four_interleaved_read_rate=-5MB/s", "is not a valid rate"),
    ("disk.four_interleaved_read_overhead=fast", "is not a valid time"),
])
def test_four_interleaved_bad_values_are_refused(setting, phrase):
    from pario.errors import UsageError

    with pytest.raises(UsageError) as e:
        machine(*RACE, *FOUR[:1], setting)
    assert phrase in str(e.value) and "\n" not in str(e.value)
