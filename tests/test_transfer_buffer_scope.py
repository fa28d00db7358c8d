"""--transfer-buffer sizes the slices of whole-list calls only (tester
report 2, item 12): a per-call API takes a block above the default slice
(256 MiB), a whole-list API grows its default slice to one block, and a
slice given smaller than one block is still refused in one line.  Left
at its default, a whole-list slice holds the rank's whole share when the
node can spare the memory."""

import subprocess

import pytest

BLOCK = ["--block", "260m", "--size", "260m", "--iterations", "1", "--phases", "write"]


def test_a_per_call_api_takes_a_block_above_the_default_transfer_buffer(run_io, shm_dir):
    r = run_io(1, "--api", "posix", "--dir", shm_dir, *BLOCK)
    assert r.phase("write")["iterations"][0]["bytes"] == 260 << 20


def test_a_whole_list_api_grows_its_default_slice_to_one_block(run_io, shm_dir):
    r = run_io(1, "--api", "mpiio", "--collective", "--dir", shm_dir, *BLOCK)
    assert r.phase("write")["iterations"][0]["bytes"] == 260 << 20


def test_a_given_slice_smaller_than_a_block_is_refused(engine, shm_dir):
    p = subprocess.run([engine, "io", "--api", "mpiio", "--collective", "--dir", str(shm_dir),
                        *BLOCK, "--transfer-buffer", "256m"], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "pario-engine: error: --transfer-buffer is smaller than one --block: give at least the "
        "block size"]


def _available_bytes():
    for line in open("/proc/meminfo"):
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


SHARE = ["--block", "1m", "--size", "300m", "--iterations", "1", "--phases", "write"]


def test_left_at_its_default_the_slice_holds_the_whole_share_so_nothing_is_packed_in_the_clock(
        run_io, shm_dir):
    """A 300 MiB share is above the old 256 MiB default slice: packing the
    second slice would be a copy inside the timed phase (bench/mpiio_counts.py
    measured it), so the slice grows to the share when memory allows."""
    if _available_bytes() // 4 < (300 << 20):
        pytest.skip("less than 1.2 GiB available: the engine keeps 256 MiB slices here")
    r = run_io(1, "--api", "mpiio", "--collective", "--dir", shm_dir, *SHARE)
    assert r.result["params"]["transfer_slice_bytes"] == 300 << 20
    assert r.phase("write")["iterations"][0]["bytes"] == 300 << 20


def test_a_given_transfer_buffer_still_cuts_the_share_into_slices(run_io, shm_dir):
    r = run_io(1, "--api", "mpiio", "--collective", "--dir", shm_dir, *SHARE,
               "--transfer-buffer", "256m", "--verify")
    assert r.result["params"]["transfer_slice_bytes"] == 256 << 20
    it = r.phase("write")["iterations"][0]
    assert it["bytes"] == 300 << 20 and it["verify"]["bytes"] == 300 << 20
