"""--transfer-buffer sizes the slices of whole-list calls only (tester
report 2, item 12): a per-call API takes a block above the default slice
(256 MiB), a whole-list API grows its default slice to one block, and a
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


def test_left_at_its_default_the_slice_is_256_mib_and_recorded(run_io, shm_dir):
    """A 300 MiB share moves in a 256 MiB slice and the rest: the result
    records the slice (a whole-share default was measured 4x slower in
    ompio's collective write, io_run.c alloc_buffers)."""
    r = run_io(1, "--api", "mpiio", "--collective", "--dir", shm_dir, *SHARE)
    assert r.result["params"]["transfer_slice_bytes"] == 256 << 20
    assert r.phase("write")["iterations"][0]["bytes"] == 300 << 20


def test_a_given_transfer_buffer_sets_the_slice(run_io, shm_dir):
    r = run_io(1, "--api", "mpiio", "--collective", "--dir", shm_dir, *SHARE,
               "--transfer-buffer", "128m", "--verify")
    assert r.result["params"]["transfer_slice_bytes"] == 128 << 20
    it = r.phase("write")["iterations"][0]
    assert it["bytes"] == 300 << 20 and it["verify"]["bytes"] == 300 << 20
