"""The analysis on constructed results: each diagnosis rule fires on the
case it names and stays quiet on a clean one; the ideal curve; the
comparison's matching and verdicts."""

import pytest

from pario.analysis.compare import EQUAL, FASTER, FEW, SAME, SLOWER, compare, regressions, verdict
from pario.analysis.diagnose import diagnose
from pario.analysis.ideal import ideal_curve, peak_of
from pario.analysis.measured import MeasuredPoint
from pario.studies import kind_named

IO = kind_named("io")
GIB = 1 << 30
MIB = 1 << 20


def doc(ranks, phase="read", seconds=1.0, io=None, resident=0.0, memory_backed=False,
        file_bytes=64 * GIB, node_memory=16 * GIB, evict=False, direct=False, group=0,
        cores=64, hosts=None, iterations=3):
    """A pario.result/1 io document as the engine writes it, small."""
    io = io or [seconds * 0.9] * ranks
    its = []
    for i in range(iterations):
        its.append({
            "iteration": i, "seconds": seconds, "bytes": file_bytes, "mib_per_s": file_bytes / MIB / seconds,
            "cache_resident_fraction": resident if phase == "read" else None,
            "ranks": [{"rank": r, "start_seconds": 0.0, "open_seconds": 0.001, "io_seconds": io[r],
                       "fsync_seconds": 0.0, "close_seconds": 0.001, "total_seconds": seconds,
                       "io_first_seconds": 0.001, "io_last_seconds": 0.001 + io[r],
                       "bytes": file_bytes // ranks} for r in range(ranks)]})
    hosts = hosts or [{"name": "node1", "cores": cores, "memory_bytes": node_memory,
                       "ranks": list(range(ranks))}]
    return {"schema": "pario.result/1", "command": "io",
            "mpi": {"ranks": ranks, "hosts": hosts},
            "target": {"dir": "/x", "fs_type": "tmpfs" if memory_backed else "ext4",
                       "memory_backed": memory_backed, "node_memory_bytes": node_memory},
            "params": {"layout": "partitioned", "files": "shared", "api": "posix",
                       "block_bytes": MIB, "size_bytes": file_bytes, "file_bytes": file_bytes,
                       "file_count": 1, "group": group, "evict": evict, "direct": direct},
            "phases": [{"name": phase, "iterations": its}]}


def point(ranks, rates, phase="read", series="1 MiB", test="partitioned", **kw):
    return MeasuredPoint(phase=phase, ranks=ranks, series=series, rates=rates,
                         doc=doc(ranks, phase=phase, **kw), test=test)


def probe(write=100.0, read=120.0, values=None):
    return {"command": "probe",
            "components": {
                "stream_write": {"mib_per_s": {"values": values or [write], "best": write}},
                "stream_read": {"mib_per_s": {"values": values or [read], "best": read}},
                "open_write_byte_close_seconds": {"best": 2e-5},
                "barrier_seconds": {"best": 1e-6}},
            "predicted_peak": {
                "write": {"mib_per_s": write, "limited_by": "storage", "storage_term_mib_per_s": write},
                "read": {"mib_per_s": read, "limited_by": "storage", "storage_term_mib_per_s": read}}}


def rules(findings):
    return {f.rule for f in findings}


def test_clean_figure_has_no_finding():
    pts = [point(r, [50.0 * r, 49.0 * r, 48.0 * r]) for r in (1, 2)]
    assert diagnose(pts, probe(read=200.0)) == []


def test_cache_by_residency():
    f = diagnose([point(2, [100, 99, 98], resident=0.93)])
    [c] = [x for x in f if x.rule == "cache"]
    assert "93% of the file was in the page cache" in c.text and c.points == ["2 ranks, 1 MiB"]


def test_cache_by_size_against_memory():
    f = diagnose([point(1, [100, 99, 98], file_bytes=32 * MIB, node_memory=16 * GIB)])
    [c] = [x for x in f if x.rule == "cache"]
    assert "smaller than twice the node's memory" in c.text
    # --evict keeps the cache out: no finding
    assert "cache" not in rules(diagnose([point(1, [100, 99, 98], file_bytes=32 * MIB, evict=True)]))


def test_cache_by_rate_above_the_probed_storage():
    f = diagnose([point(4, [900, 890, 880])], probe(read=120.0))
    [c] = [x for x in f if x.rule == "cache"]
    assert "above the 120.0 MiB/s the probe measured" in c.text
    # writes to a disk are never "read from the cache"
    assert "cache" not in rules(diagnose([point(4, [900, 890, 880], phase="write")], probe()))


def test_cache_by_broadcast():
    d = point(4, [300, 299, 298], evict=True)
    d.doc["params"]["layout"] = "broadcast"
    [c] = [x for x in diagnose([d]) if x.rule == "cache"]
    assert "every rank reads the same file" in c.text
    one = point(1, [100, 99, 98], evict=True)
    one.doc["params"]["layout"] = "broadcast"
    assert "cache" not in rules(diagnose([one]))


def test_cache_on_tmpfs():
    [c] = [x for x in diagnose([point(1, [5000, 4900, 4800], memory_backed=True)]) if x.rule == "cache"]
    assert "tmpfs" in c.text and c.text.startswith("reads served by the page cache")
    [c] = [x for x in diagnose([point(1, [5000, 4900, 4800], phase="write", memory_backed=True)])
           if x.rule == "cache"]
    assert c.text.startswith("writes served by memory") and "tmpfs" in c.text
    # a kernel's point (perf, flashio, beff) has no phase: "I/O", not "s served by" (tester 5, c)
    [c] = [x for x in diagnose([point(1, [5000, 4900, 4800], phase="", memory_backed=True)]) if x.rule == "cache"]
    assert c.text.startswith("I/O served by memory, not the storage"), c.text


def test_straggler_names_rank_and_host():
    hosts = [{"name": "node1", "cores": 64, "memory_bytes": 16 * GIB, "ranks": [0, 1]},
             {"name": "node2", "cores": 64, "memory_bytes": 16 * GIB, "ranks": [2, 3]}]
    f = diagnose([point(4, [100, 99, 98], io=[0.2, 0.21, 0.19, 0.9], hosts=hosts)])
    [s] = [x for x in f if x.rule == "straggler"]
    assert "rank 3 on node2 was slow in 3 of 3 iterations" in s.text and "4.5x the median" in s.text
    # slow in one iteration of three: noise, not a straggler
    d = doc(4, io=[0.2, 0.21, 0.19, 0.9], hosts=hosts)
    for it in d["phases"][0]["iterations"][1:]:
        it["ranks"][3]["io_last_seconds"] = 0.2
    assert "straggler" not in rules(diagnose([MeasuredPoint("read", 4, "1 MiB", [100, 99, 98], d)]))
    # even ranks: no straggler
    assert "straggler" not in rules(diagnose([point(4, [100, 99, 98], io=[0.2, 0.21, 0.19, 0.22])]))
    # a prediction has no host whose other jobs slowed a rank (tester 5, d: "rank 28 on ?")
    p = point(4, [100, 99, 98], io=[0.2, 0.21, 0.19, 0.9], hosts=hosts)
    p.doc["predicted"] = True
    assert "straggler" not in rules(diagnose([p]))


def test_cliff_when_doubling_loses_a_third():
    pts = [point(8, [80, 79, 78]), point(16, [81, 80, 79]), point(32, [20, 19, 18])]
    [c] = [x for x in diagnose(pts) if x.rule == "cliff"]
    assert "from 16 to 32 ranks" in c.text and "75%" in c.text and c.points == ["32 ranks, 1 MiB"]
    # a 30% fall is not a cliff, nor a fall of the best trial alone
    pts = [point(8, [80, 79, 78]), point(16, [56, 55, 54])]
    assert "cliff" not in rules(diagnose(pts))
    pts = [point(8, [80, 40, 39]), point(16, [50, 45, 40])]
    assert "cliff" not in rules(diagnose(pts))


def test_no_cliff_from_phases_too_short_to_time():
    """Phases of 10 ms: their rates are mostly open, close and barrier
    costs, so a fall is not read as a cliff; the short-phase finding says
    why (tester 2, 25h).  A kernel's times count as io's iterations do."""
    pts = [point(1, [136, 135, 134], seconds=0.01), point(2, [41, 40, 39], seconds=0.01)]
    found = rules(diagnose(pts))
    assert "cliff" not in found and "short-phase" in found
    kernel = [MeasuredPoint("", r, "independent", rates, seconds=[0.004]) for r, rates in ((1, [135.6]), (2, [40.9]))]
    found = rules(diagnose(kernel))
    assert "cliff" not in found and "short-phase" in found
    kernel = [MeasuredPoint("", r, "independent", rates, seconds=[2.0]) for r, rates in ((1, [135.6]), (2, [40.9]))]
    assert "cliff" in rules(diagnose(kernel))


def test_unsteady_when_trials_differ_beyond_the_noise():
    """Trials 35x apart (a cache hit among disk reads, tester 2, 25o): one
    line naming the point and its spread; a spread within the noise: none."""
    [u] = [x for x in diagnose([point(1, [1295.2, 59.5, 37.4])]) if x.rule == "unsteady"]
    assert u.text.startswith("trials of one point differ up to 35x (1 rank, 1 MiB: 37.4 to 1295 MiB/s "
                             "over 3 trials)") and u.points == ["1 rank, 1 MiB"]
    assert "unsteady" not in rules(diagnose([point(1, [100, 60, 50])]))
    assert "unsteady" not in rules(diagnose([point(1, [100])]))
    # near the threshold a decimal (tester 20, item c: 10.5x read "10x ... beyond the noise (10x)")
    [u] = [x for x in diagnose([point(1, [657.2, 62.6])]) if x.rule == "unsteady"]
    assert u.text.startswith("trials of one point differ up to 10.5x (")
    [u] = [x for x in diagnose([point(1, [1002.0, 100.0])]) if x.rule == "unsteady"]
    assert u.text.startswith("trials of one point differ up to 10.02x (")
    # every trial too short to time: timer noise, which short-phase names instead
    found = rules(diagnose([point(1, [1000, 20], seconds=0.001)]))
    assert "unsteady" not in found and "short-phase" in found


def test_rate_above_predicted_peak():
    pts = [point(1, [100, 99, 98], phase="write"), point(4, [300, 295, 290], phase="write")]
    [a] = [x for x in diagnose(pts, probe(write=150.0)) if x.rule == "above-peak"]
    assert "above the predicted peak of 150.0 MiB/s" in a.text and a.points == ["4 ranks, 1 MiB"]
    assert "several streams" in a.text
    [a] = [x for x in diagnose(pts, probe(write=80.0)) if x.rule == "above-peak"]
    assert "one rank already beats the probe's one stream" in a.text
    # within the noise the probe itself shows: no finding
    # (the probe's own streams spread 60%: 200 is within 150 x 1.6)
    noisy = probe(write=150.0, values=[150.0, 60.0, 50.0])
    pts200 = [point(4, [200, 199, 198], phase="write")]
    assert "above-peak" in rules(diagnose(pts200, probe(write=150.0)))
    assert "above-peak" not in rules(diagnose(pts200, noisy))
    # a read above the peak that the cache explains says so
    pts = [point(4, [300, 295, 290], resident=1.0)]
    [a] = [x for x in diagnose(pts, probe(read=150.0)) if x.rule == "above-peak"]
    assert "page cache" in a.text


def test_grouping_that_cannot_act():
    pts = [point(2, [100, 99, 98], group=16), point(32, [100, 99, 98], group=16)]
    [g] = [x for x in diagnose(pts) if x.rule == "grouping"]
    assert "G=16" in g.text and g.points == ["2 ranks, 1 MiB"]
    # each rank count once, however many points share it (tester 5, g: "1, 1, 1, 2, 2, 2")
    pts = [point(r, [100.0], series=b, group=2) for r in (1, 2) for b in ("64 KiB", "1 MiB", "4 MiB")]
    [g] = [x for x in diagnose(pts) if x.rule == "grouping"]
    assert "cannot act at 1, 2 rank(s)" in g.text, g.text


def test_short_phases():
    f = diagnose([point(2, [100, 99, 98], seconds=0.004)], probe(read=1e6))
    [s] = [x for x in f if x.rule == "short-phase"]
    assert "4.0 ms" in s.text and "open/close 20 us" in s.text


def test_oversubscribed():
    f = diagnose([point(4, [100, 99, 98], cores=2)])
    [o] = [x for x in f if x.rule == "oversubscribed"]
    assert "4 ranks on 2 cores of node1" in o.text


def test_ideal_curve_linear_then_flat():
    pts = [point(1, [100, 90, 80]), point(1, [60], series="4 KiB"), point(4, [350, 300, 200])]
    c = ideal_curve(pts, 250.0, "storage")
    assert c.per_rank == 100 and c.knee == 2.5
    assert c.points([1, 2, 4, 8]) == [(1, 100), (2, 200), (2.5, 250), (4, 250), (8, 250)]
    assert ideal_curve(pts, None) is None
    assert peak_of(probe(write=42.0), "write") == (42.0, "storage")


def test_verdicts_from_an_exact_rank_test():
    """One point alone (its bar: 5 %): 6 trials a side can be called, the
    smallest chance being 2 / C(12, 6) = 0.2 %; 3 a side cannot (10 %)."""
    six = [100, 99, 98, 97, 96, 95]
    assert verdict(six, [101, 100, 97, 96, 95, 94])[2] == SAME
    assert verdict(six, [50, 49, 48, 47, 46, 45])[2] == SLOWER
    assert verdict(six, [150, 149, 148, 147, 146, 145])[2] == FASTER
    # one trial of B among A's: the chance is 2 x 7 / 924, still called
    assert verdict(six, [150, 149, 148, 147, 146, 97])[2] == FASTER
    # half of B's trials among A's: the chance is far above 5 %
    assert verdict(six, [150, 149, 148, 98, 97, 96])[2] == SAME
    # every trial beyond, but within the 5% floor: never a change
    assert verdict(six, [104, 104, 104, 104, 104, 104])[2] == SAME
    # 3 a side: even every trial of B far below every trial of A happens by chance 1 in 10
    ratio, band, v, chance = verdict([100, 99, 98], [50, 49, 48])
    assert v == FEW and chance == pytest.approx(0.1) and ratio == pytest.approx(0.5)


def test_verdicts_of_times_single_trials_and_predictions():
    # times (lower is better) are judged as speeds: B took half the time, twice as fast
    a = [2.0, 2.1, 2.2, 2.0, 2.1, 2.2]
    ratio, band, v, chance = verdict(a, [t / 2 for t in a], better="min")
    assert v == FASTER and ratio == pytest.approx(2.0) and band == pytest.approx(0.2 / 2.2)
    assert verdict([1.0] * 6, [2.0] * 6, better="min")[2] == SLOWER
    # one trial on either side: no band, and no call (the chance of any split is 100 %)
    assert verdict([100], [120])[1:3] == (None, FEW)
    assert verdict([100, 90], [103])[1:3] == (None, FEW)
    # predictions have no noise: 1% apart is a difference, equal is equal
    assert verdict([100], [101], predicted=True)[1:] == (None, FASTER, None)
    assert verdict([100], [99], predicted=True)[1:] == (None, SLOWER, None)
    assert verdict([100.0], [100.0], predicted=True)[1:] == (None, EQUAL, None)


def test_compare_matches_and_flags_regressions():
    # 7 trials a side: one point of three can be called on its own (2 / C(14, 7) < 5 % / 3)
    a = [point(r, [100.0 * r] * 7, series=b, test="partitioned") for r in (1, 2) for b in ("4 KiB", "1 MiB")]
    b = [point(1, [100.0] * 7, series="4 KiB", test="partitioned"),
         point(1, [101.0] * 7, series="1 MiB", test="partitioned"),
         point(2, [100.0] * 7, series="4 KiB", test="partitioned"),   # half of 200
         point(4, [400.0] * 7, series="1 MiB", test="partitioned")]   # only in B
    # the series label is not part of the key: the block size is
    for p, blk in zip(a + b, [4096, MIB, 4096, MIB, 4096, MIB, 4096, MIB]):
        p.doc["params"]["block_bytes"] = blk
    got, only_a, only_b = compare(a, b, IO.params)
    assert [c.verdict for c in got] == [SAME, SAME, SLOWER]
    assert got[2].ratio == pytest.approx(0.5)
    # the label names what differs between the points: ranks and block, not the rest
    assert only_a == [("partitioned", "partitioned read, 2 ranks, block 1 MiB")]
    assert only_b == [("partitioned", "partitioned read, 4 ranks, block 1 MiB")]
    assert [c.label for c in regressions(got, 0.9)] == ["partitioned read, 2 ranks, block 4 KiB"]
    assert regressions(got, 0.4) == []


def test_compare_grouped_against_ungrouped_by_loose_key():
    a = [point(2, [200.0] * 6, test="partitioned")]
    b = [point(2, [90.0] * 6, test="partitioned-g1", group=1)]
    got, only_a, only_b = compare(a, b)
    assert len(got) == 1 and got[0].verdict == SLOWER and not only_a and not only_b
