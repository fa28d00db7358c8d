"""Several readers on a probed host's one disk: four or more ranks reading
different bytes at once (disk.four_read_rate: the probe's four readers,
more than its two cores) and a broadcast's readers of the same bytes
(disk.same_read_rate: the probe's two ranks each reading the whole file).
Each on a machine whose other costs are zero or known, so the predicted
time is a sum written down here.  Pure simulation: no engine, well under a
second."""

import pytest

from pario.model import load_machine, predict_point
from test_model_host import LOCAL, phase, point

SHARED = "disk.shared_read_rate=80MB/s"


def machine(*extra):
    return load_machine("ipsc860", LOCAL + list(extra))


def test_shipped_machines_have_neither():
    for name in ("ipsc860", "asci-red"):
        m = load_machine(name)
        assert m["disk.four_read_rate"] == 0 and m["disk.same_read_rate"] == 0


def test_four_or_more_streams_read_at_the_four_readers_rate():
    """8 MiB: 4 ranks (or more) reading a quarter each at 50 MiB/s; 2 and
    3 at the two streams' 80; one at disk.rate (100); a grouped run's
    readers count as streams whatever their token (each keeps its
    read-ahead in flight between turns); files of their own count as
    streams too."""
    m = machine(SHARED, "disk.four_read_rate=50MB/s")
    assert phase(predict_point(point("partitioned", ranks=4), m))[0] == pytest.approx(8 / 50)
    assert phase(predict_point(point("partitioned", ranks=8), m))[0] == pytest.approx(8 / 50)
    assert phase(predict_point(point("partitioned", ranks=3, size=6 << 20), m))[0] == pytest.approx(6 / 80)
    assert phase(predict_point(point("partitioned", ranks=2), m))[0] == pytest.approx(8 / 80)
    assert phase(predict_point(point("partitioned", ranks=1), m))[0] == pytest.approx(8 / 100)
    assert phase(predict_point(point("partitioned", ranks=4, group=2), m))[0] == pytest.approx(8 / 50)
    no_token = machine(SHARED, "disk.four_read_rate=50MB/s", "network.token_latency=0s")
    assert phase(predict_point(point("partitioned", ranks=2, group=1), no_token))[0] == pytest.approx(8 / 80)
    own = point("interleaved", ranks=4, files="per-rank")
    assert phase(predict_point(own, m))[0] == pytest.approx(8 / 50)
    # writes keep their rates; 0 leaves four readers at the two streams' rate
    w = point("partitioned", ("write",), ranks=4, extra=["--prealloc"])
    assert phase(predict_point(w, m))[0] == pytest.approx(8 / 100)
    assert phase(predict_point(point("partitioned", ranks=4), machine(SHARED)))[0] == pytest.approx(8 / 80)


def test_a_broadcast_reads_its_stream_at_the_same_bytes_rate():
    """2 ranks each read the 8 MiB: the first reader's stream at 50 MiB/s
    (160 ms), the other copying each 1 MiB call from the page cache after
    it (1 ms at 1000 MiB/s): 161 ms.  One rank reads at disk.rate."""
    cached = ["host.page_cache=1g", "host.cached_read_rate=1000MB/s", "host.cached_read_overhead=0s"]
    m = machine(*cached, "disk.same_read_rate=50MB/s", SHARED)
    assert phase(predict_point(point(ranks=2), m))[0] == pytest.approx(8 / 50 + 1 / 1000)
    assert phase(predict_point(point(ranks=1), m))[0] == pytest.approx(8 / 100)
    # 0: the broadcast's stream at disk.rate, as before
    assert phase(predict_point(point(ranks=2), machine(*cached)))[0] == pytest.approx(8 / 100 + 1 / 1000)


@pytest.mark.parametrize("key", ["disk.four_read_rate", "disk.same_read_rate"])
def test_bad_values_are_refused(key):
    from pario.errors import UsageError

    for bad, phrase in (("1ms", "is not a valid rate"), ("-5MB/s", "is not a valid rate"),
                        ("fast", f"{key} = 'fast' is not a valid rate")):
        with pytest.raises(UsageError) as e:
            machine(f"{key}={bad}")
        assert phrase in str(e.value) and "\n" not in str(e.value)
