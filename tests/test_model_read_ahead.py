"""A read's fixed start sized by the kernel's first read-ahead window
(disk.read_ahead, read_start.py): Linux opens a reader's first window at
the call's pages rounded up to a power of two, times 4 up to a 32nd of the
device's largest window, times 2 up to a quarter, else the largest; the
start is a line against that window.  Pure arithmetic and simulation: no
engine, well under a second."""

import pytest

from pario.errors import UsageError
from pario.model import load_machine, predict_point
from pario.model.read_start import first_window, largest_call_start, start_seconds
from test_model_host import LOCAL, phase, point

KIB, MIB = 1 << 10, 1 << 20


@pytest.mark.parametrize("largest,calls", [
    # this host's virtio disk: read_ahead_kb 8192
    (8 * MIB, {4 * KIB: 16 * KIB, 64 * KIB: 256 * KIB, 256 * KIB: 1 * MIB, 1 * MIB: 2 * MIB,
               2 * MIB: 4 * MIB, 4 * MIB: 8 * MIB, 16 * MIB: 8 * MIB, 12 * KIB: 64 * KIB}),
    # Linux's default read_ahead_kb, 128
    (128 * KIB, {4 * KIB: 16 * KIB, 16 * KIB: 32 * KIB, 64 * KIB: 128 * KIB, 1 * MIB: 128 * KIB}),
])
def test_first_window_follows_the_kernels_rule(largest, calls):
    for call, window in calls.items():
        assert first_window(call, largest) == window, (call, window)


def _m(**kw):
    values = {"disk.read_latency": 0.5e-3, "disk.read_start_rate": 1000 * MIB,
              "disk.read_start_limit": 1 * MIB, "disk.read_ahead": 0}
    values.update(kw)
    return values


def test_the_start_grows_with_the_window_up_to_the_largest():
    m = _m(**{"disk.read_ahead": 8 * MIB})
    assert start_seconds(m, 64 * KIB) == pytest.approx(0.5e-3 + 0.25 / 1000)
    assert start_seconds(m, 2 * MIB) == pytest.approx(0.5e-3 + 4 / 1000)   # a 2 MiB call waits for 4
    assert start_seconds(m, 64 * MIB) == pytest.approx(0.5e-3 + 8 / 1000)  # no window above the largest
    # a two-phase aggregator's buffer starts as the largest call measured (1 MiB: a 2 MiB window)
    assert largest_call_start(m, 16 * MIB) == pytest.approx(0.5e-3 + 2 / 1000)


def test_without_the_window_the_call_is_cut_at_the_largest_measured():
    m = _m()
    assert start_seconds(m, 64 * KIB) == pytest.approx(0.5e-3 + (64 / 1024) / 1000)
    assert start_seconds(m, 2 * MIB) == start_seconds(m, 1 * MIB) == pytest.approx(0.5e-3 + 1 / 1000)
    assert largest_call_start(m, 16 * MIB) == start_seconds(m, 1 * MIB)


def test_a_point_pays_the_start_of_its_window():
    """One rank reading 8 MiB in 2 MiB calls from a disk at 100 MiB/s with
    no per-call cost: 80 ms of transfer after a start of 4 MiB at 1000
    MiB/s (4 ms) plus 0.5 ms; without the window the start is the 1 MiB
    call's."""
    base = LOCAL + ["disk.read_latency=0.5ms", "disk.read_start_rate=1000MB/s",
                    "disk.read_start_limit=1m"]
    p = point("partitioned", ranks=1, block=2 * MIB)
    seconds = phase(predict_point(p, load_machine("ipsc860", base + ["disk.read_ahead=8m"])))[0]
    assert seconds == pytest.approx(0.08 + 0.0045, rel=1e-6)
    seconds = phase(predict_point(p, load_machine("ipsc860", base)))[0]
    assert seconds == pytest.approx(0.08 + 0.0015, rel=1e-6)


def test_shipped_machines_have_no_window():
    for name in ("ipsc860", "asci-red"):
        m = load_machine(name)
        assert m["disk.read_ahead"] == 0 and "neutral" in m.sources["disk.read_ahead"]


@pytest.mark.parametrize("bad,phrase", [("fast", "is not a valid size"), ("-8m", "is not a valid size"),
                                        ("1ms", "is not a valid size")])
def test_bad_values_are_refused(bad, phrase):
    with pytest.raises(UsageError) as e:
        load_machine("ipsc860", [f"disk.read_ahead={bad}"])
    assert phrase in str(e.value) and "\n" not in str(e.value)


def test_the_bound_names_the_window_the_start_waited_for():
    """A disk too fast to matter: the phase is the start, and the bound
    says which first window it waited for."""
    base = LOCAL + ["disk.rate=1000000000MB/s", "disk.read_latency=0.5ms", "disk.read_start_rate=1000MB/s",
                    "disk.read_start_limit=1m", "disk.read_ahead=8m"]
    seconds, _, ph = phase(predict_point(point("partitioned", ranks=1, block=2 * MIB),
                                         load_machine("ipsc860", base)))
    assert seconds == pytest.approx(0.0045, rel=1e-3)
    why = ph["explanation"]
    assert why["bound"] == "read_start" and "a 4 MiB window opened for its call" in why["text"]


def test_two_readers_first_windows_take_the_disk_one_after_the_other():
    """2 MiB calls open a 4 MiB window: 4 ms of it at read_start_rate, 0.5
    ms side by side.  Two readers of different bytes on cores of their own:
    the second window waits for the first (4.5 and 8.5 ms); readers above
    the cores (one core), or of the same bytes, start side by side."""
    base = LOCAL + ["disk.rate=1000000000MB/s", "disk.read_latency=0.5ms", "disk.read_start_rate=1000MB/s",
                    "disk.read_start_limit=1m", "disk.read_ahead=8m"]
    two_cores = load_machine("ipsc860", base + ["host.cores=2"])
    for p in (point("partitioned", ranks=2, block=2 * MIB), point("partitioned", ranks=2, block=2 * MIB,
                                                                  files="per-rank")):
        seconds, counters, ph = phase(predict_point(p, two_cores))
        assert seconds == pytest.approx(0.0085, rel=1e-3)
        assert counters["read_start_window_on_disk_seconds"] == pytest.approx(0.004)
        assert "first read-ahead windows one after another, 4 ms each" in ph["explanation"]["text"]
    one_core = load_machine("ipsc860", base + ["host.cores=1"])
    seconds, counters, _ = phase(predict_point(point("partitioned", ranks=2, block=2 * MIB), one_core))
    assert seconds == pytest.approx(0.0045, rel=1e-3)
    assert "read_start_window_on_disk_seconds" not in counters
    seconds, _, _ = phase(predict_point(point("partitioned", ranks=1, block=2 * MIB), two_cores))
    assert seconds == pytest.approx(0.0045, rel=1e-3)
