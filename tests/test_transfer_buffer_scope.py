"""--transfer-buffer sizes the slices of whole-list calls only (tester
report 2, item 12): a per-call API takes a block above the default slice
(64 MiB), a whole-list API grows its default slice to one block, and a
slice given smaller than one block is still refused in one line.  The
slice a run used is recorded."""

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


SHARE = ["--block", "1m", "--size", "300m", "--iterations", "1", "--phases", "write"]


def test_left_at_its_default_the_slice_is_64_mib_and_one_slice_is_held(run_io, shm_dir):
    """A 300 MiB share moves in 64 MiB calls (why not one call: io_run.c
    alloc_buffers), one slice packed before the clock (why not all five:
    backend.h IO_TRANSFER_HOLD): the result records the slice and the
    bytes held."""
    r = run_io(1, "--api", "mpiio", "--collective", "--dir", shm_dir, *SHARE)
    assert r.result["params"]["transfer_slice_bytes"] == 64 << 20
    assert r.result["params"]["transfer_held_bytes"] == 64 << 20
    assert r.phase("write")["iterations"][0]["bytes"] == 300 << 20


def test_a_given_transfer_buffer_sets_the_slice(run_io, shm_dir):
    r = run_io(1, "--api", "mpiio", "--collective", "--dir", shm_dir, *SHARE,
               "--transfer-buffer", "128m", "--verify")
    assert r.result["params"]["transfer_slice_bytes"] == 128 << 20
    it = r.phase("write")["iterations"][0]
    assert it["bytes"] == 300 << 20 and it["verify"]["bytes"] == 300 << 20


HELD = ["--api", "mpiio", "--collective", "--block", "1m", "--size", "8m", "--verify"]


def test_every_slice_of_a_share_is_packed_before_the_clock(run_io, shm_dir):
    """4 MiB per rank in 1 MiB slices: all four slices are held (packed
    before the clock, backend.h), and the file still verifies."""
    r = run_io(2, "--dir", shm_dir, *HELD, "--transfer-buffer", "1m", "--iterations", "1")
    params = r.result["params"]
    assert params["transfer_slice_bytes"] == 1 << 20
    assert params["transfer_held_bytes"] == 4 << 20
    for name in ("write", "read"):
        it = r.phase(name)["iterations"][0]
        assert it["bytes"] == 8 << 20 and it["verify"]["bytes"] == 8 << 20


@pytest.mark.parametrize("layout", ["partitioned", "random"])
def test_slices_beyond_the_hold_reuse_its_slots(run_io, shm_dir, layout):
    """--transfer-hold 2m with 1 MiB slices of a 4 MiB share: slices 3 and
    4 are packed inside the phase into the slots of slices 1 and 2; every
    byte still lands where the pattern says, on every iteration (each
    iteration's data differ)."""
    r = run_io(2, "--dir", shm_dir, *HELD, "--layout", layout, "--transfer-buffer", "1m",
               "--transfer-hold", "2m", "--iterations", "2")
    assert r.result["params"]["transfer_held_bytes"] == 2 << 20
    for name in ("write", "read"):
        for it in r.phase(name)["iterations"]:
            assert it["bytes"] == 8 << 20 and it["verify"]["bytes"] == 8 << 20


def test_a_hold_below_one_slice_holds_one_slice(run_io, shm_dir):
    r = run_io(2, "--dir", shm_dir, *HELD, "--transfer-buffer", "2m", "--transfer-hold", "1m",
               "--iterations", "1", "--phases", "write")
    assert r.result["params"]["transfer_held_bytes"] == 2 << 20
    assert r.phase("write")["iterations"][0]["verify"]["bytes"] == 8 << 20
