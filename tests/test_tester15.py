"""Tester 15's findings about the kernels on a disk that fills: collective
MPI-IO under Open MPI's ompio hung at 4 ranks (its sync and close skip
their barrier on the rank whose write failed), where 1-2 ranks and ROMIO
failed in one line.  Driven through the real engine on a small tmpfs."""

import os
import subprocess

import pytest


@pytest.mark.parametrize("kernel", [["bt", "--class", "S", "--io", "full"],
                                    ["bt", "--class", "S", "--io", "full", "--decomposition", "slabs"],
                                    ["beff", "-T", "3", "--max-chunk", "1m"]],
                         ids=["btio-collective", "btio-slabs", "beff"])
def test_a_collective_kernel_on_a_disk_that_fills_fails_in_one_line_at_4_ranks(kernel, engine, launcher,
                                                                               small_tmpfs):
    d = small_tmpfs("512k")
    p = subprocess.run(launcher.command(4, [engine, kernel[0], "--dir", str(d), *kernel[1:]]),
                       capture_output=True, text=True, env=launcher.environment(), timeout=120)
    said = [l for l in p.stderr.splitlines() if l.startswith("pario-engine: error:")]
    assert p.returncode == 3 and len(said) == 1, p.stderr
    assert "No space left on device" in said[0] and f"free space on {d} or lower" in said[0], said
    assert os.listdir(d) == []
