"""A host whose kernel hands free memory back to its hypervisor
(virtio-balloon free page reporting) makes page-cache writes bimodal: on
this Firecracker VM, 32 MiB of 2 MiB writes into a new file took 6 ms right
after 64 MiB were freed, and 25-55 ms when the freed memory had sat for 3
s first (the host faults each page in again); with reporting off
(page_reporting_order above the largest order) 6 ms both ways.  The
engine records the fact per host and warns, in io and probe results alike.

The test reads the same sysfs facts itself and holds the engine to them,
so it checks the right branch on a host with reporting and on one without;
it never changes the setting."""

import json
import subprocess
from pathlib import Path

BALLOON = Path("/sys/bus/virtio/drivers/virtio_balloon")
ORDER = Path("/sys/module/page_reporting/parameters/page_reporting_order")


def largest_order():
    """The buddy allocator's largest order: /proc/buddyinfo's columns after
    'zone NAME' count the orders from 0."""
    first = Path("/proc/buddyinfo").read_text().splitlines()[0].split()
    return len(first[first.index("zone") + 2:]) - 1


def reporting_order():
    """The order the kernel reports free blocks from, or None: a balloon
    that negotiated reporting (feature bit 5) and an order no larger than
    the allocator's largest."""
    features = [p.read_text() for p in BALLOON.glob("virtio*/features")] if BALLOON.is_dir() else []
    if not any(len(f) > 5 and f[5] == "1" for f in features) or not ORDER.exists():
        return None
    order = int(ORDER.read_text())
    return order if order <= largest_order() else None


def _warnings(doc):
    return [w for w in doc["warnings"] if "free page reporting" in w]


def test_io_records_and_warns_of_free_page_reporting(run_io, shm_dir):
    r = run_io(1, "--dir", shm_dir, "--size", "1m", "--block", "64k", "--phases", "write",
               "--iterations", "1")
    host = r.result["mpi"]["hosts"][0]
    order = reporting_order()
    if order is None:
        assert "free_page_reporting_order" not in host
        assert _warnings(r.result) == []
        return
    assert host["free_page_reporting_order"] == order
    (w,) = _warnings(r.result)
    assert f"blocks of order {order} and up" in w and f"(echo {order} to restore)" in w
    # the value that stops it: one above the allocator's largest order
    assert f"echo {largest_order() + 1} > {ORDER} " in w and "\n" not in w


def test_probe_warns_of_it_too(engine, launcher, shm_dir, tmp_path):
    out = tmp_path / "probe.json"
    argv = launcher.command(2, [engine, "probe", "--dir", str(shm_dir), "--size", "2m", "--memory",
                                    "1m", "--ops", "5", "--iterations", "1", "--json", str(out)])
    p = subprocess.run(argv, capture_output=True, text=True, env=launcher.environment(), timeout=300)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    hosts = doc["mpi"]["hosts"]
    order = reporting_order()
    assert [h.get("free_page_reporting_order") for h in hosts] == [order]
    assert len(_warnings(doc)) == (0 if order is None else 1)
    assert list(shm_dir.iterdir()) == []
